package io.gma.wire;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Mutated and random inputs never raise anything but {@link ProtocolException}, and whatever decodes
 * re-encodes to the same bytes (less the bits a receiver ignores).
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class FuzzTest {
    private static final long SEED = Long.getLong("gma.test.seed", System.nanoTime());
    private static final int INPUTS = 100_000;
    private static final int LIMIT = 64 * 1024;

    private final Random random = new Random(SEED);
    private final WireCodec codec = WireCodec.withMaxMessageBytes(LIMIT);
    private final List<byte[]> seeds = Vectors.valid().stream().map(Vectors.Valid::bytes).toList();

    @Test
    void mutatedAndRandomInputsOnlyRaiseProtocolException() {
        int decoded = 0;
        int refused = 0;
        for (int i = 0; i < INPUTS; i++) {
            byte[] input = next();
            try {
                if (decodeWhole(input)) {
                    decoded++;
                } else {
                    refused++;
                }
                decodeStream(input);
            } catch (RuntimeException | AssertionError e) {
                fail("input " + i + " (-Dgma.test.seed=" + SEED + "): " + HexFormat.of().formatHex(input), e);
            }
        }
        assertEquals(INPUTS, decoded + refused);
        assertTrue(decoded > INPUTS / 100, "only " + decoded + " inputs decoded: the mutations are too coarse");
        assertTrue(refused > INPUTS / 2, "only " + refused + " inputs refused: the mutations are too gentle");
    }

    private boolean decodeWhole(byte[] input) {
        Message m;
        try {
            m = codec.decode(input);
        } catch (ProtocolException e) {
            assertTrue(e.getMessage() != null && !e.getMessage().isBlank());
            return false;
        }
        byte[] expected = input.clone();
        expected[4] &= Message.REPLY_EXPECTED;
        expected[7] = 0;
        assertArrayEquals(expected, codec.encode(m));
        return true;
    }

    /**
     * Feeds the input in random chunks to a decoder of the codec and to one that keeps data apart from a random
     * small size: both deliver the same messages and end the same way.
     */
    private void decodeStream(byte[] input) {
        List<Integer> chunks = new java.util.ArrayList<>();
        for (int off = 0; off < input.length;) {
            int n = Math.min(input.length - off, 1 + random.nextInt(32));
            chunks.add(n);
            off += n;
        }
        List<Message> whole = new java.util.ArrayList<>();
        List<Message> apart = new java.util.ArrayList<>();
        String wholeEnd = decodeStream(codec.newStreamDecoder(), input, chunks, whole);
        String apartEnd = decodeStream(codec.withDataApartFrom(1 + random.nextInt(16)).newStreamDecoder(), input,
                chunks, apart);
        assertEquals(wholeEnd, apartEnd);
        assertEquals(whole, apart);
    }

    /** How the stream ended: "finished", or the ProtocolException's message. */
    private static String decodeStream(StreamDecoder decoder, byte[] input, List<Integer> chunks, List<Message> out) {
        try {
            int off = 0;
            for (int n : chunks) {
                decoder.feed(input, off, n, out::add);
                off += n;
            }
            decoder.finish();
            return "finished";
        } catch (ProtocolException e) {
            return e.getMessage();
        }
    }

    private byte[] next() {
        switch (random.nextInt(8)) {
            case 0:
                byte[] noise = new byte[random.nextInt(80)];
                random.nextBytes(noise);
                return noise;
            case 1:
                byte[] prefixed = new byte[20 + random.nextInt(80)];
                random.nextBytes(prefixed);
                prefixed[0] = 0x47;
                prefixed[1] = 0x4D;
                prefixed[2] = 1;
                return prefixed;
            default:
                return mutate(seeds.get(random.nextInt(seeds.size())).clone());
        }
    }

    private byte[] mutate(byte[] b) {
        int mutations = 1 + random.nextInt(3);
        for (int k = 0; k < mutations; k++) {
            switch (random.nextInt(6)) {
                case 0:
                    b[random.nextInt(b.length)] ^= (byte) (1 << random.nextInt(8));
                    break;
                case 1:
                    b[random.nextInt(Math.min(b.length, 20))] = (byte) random.nextInt(256);
                    break;
                case 2:
                    b = Arrays.copyOf(b, random.nextInt(b.length + 1));
                    break;
                case 3:
                    b = Arrays.copyOf(b, b.length + 1 + random.nextInt(40));
                    break;
                case 4:
                    if (b.length >= 20) {
                        Layout.putU32(b, 16, random.nextBoolean() ? random.nextInt() : random.nextInt(LIMIT * 2));
                    }
                    break;
                default:
                    if (b.length > 0) {
                        b[random.nextInt(b.length)] = (byte) (0x80 + random.nextInt(128));
                    }
                    break;
            }
            if (b.length == 0) {
                break;
            }
        }
        return b;
    }
}
