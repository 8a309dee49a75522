package io.gma.wire;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;

import java.io.ByteArrayOutputStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(value = 60, unit = TimeUnit.SECONDS)
class RoundTripTest {
    private static final long SEED = Long.getLong("gma.test.seed", System.nanoTime());
    private static final int COUNT = 400;

    private final WireCodec codec = WireCodec.withMaxMessageBytes(1 << 20);

    @Test
    void randomMessagesSurviveEncodeAndDecode() throws ProtocolException {
        RandomMessages random = new RandomMessages(new Random(SEED));
        for (int i = 0; i < COUNT; i++) {
            Message m = random.message(1 << 20);
            Message back = codec.decode(codec.encode(m));
            String where = "message " + i + " with -Dgma.test.seed=" + SEED;
            assertSame(m.command(), back.command(), where);
            assertEquals(m.flags(), back.flags(), where);
            assertEquals(m.from(), back.from(), where);
            assertEquals(m.to(), back.to(), where);
            assertEquals(m.sequence(), back.sequence(), where);
            assertArrayEquals(m.data(), back.data(), where);
            byte[] packed = Packed.marshal(m);
            assertEquals(m.from(), Packed.from(packed), where);
            assertEquals(m.to(), Packed.to(packed), where);
        }
    }

    @Test
    void randomStreamSurvivesRandomChunking() throws ProtocolException {
        Random rnd = new Random(SEED);
        RandomMessages random = new RandomMessages(rnd);
        List<Message> sent = new ArrayList<>();
        ByteArrayOutputStream stream = new ByteArrayOutputStream();
        for (int i = 0; i < COUNT / 4; i++) {
            Message m = random.message(1 << 20);
            sent.add(m);
            stream.writeBytes(codec.encode(m));
        }
        byte[] bytes = stream.toByteArray();
        List<Message> received = new ArrayList<>();
        StreamDecoder decoder = codec.newStreamDecoder();
        for (int off = 0; off < bytes.length;) {
            int n = Math.min(bytes.length - off, 1 + rnd.nextInt(rnd.nextBoolean() ? 64 : 256 * 1024));
            decoder.feed(bytes, off, n, received::add);
            off += n;
        }
        decoder.finish();
        assertEquals(sent, received, "with -Dgma.test.seed=" + SEED);
    }
}
