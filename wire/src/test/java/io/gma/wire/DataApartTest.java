package io.gma.wire;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** A stream decoder that keeps large data apart ({@link WireCodec#withDataApartFrom}): the same messages. */
class DataApartTest {
    private static final int APART = 1000;
    private static final WireCodec CODEC = WireCodec.standard().withDataApartFrom(APART);

    @Test
    void messagesAroundTheThresholdDecodeAsTheyWereInChunksOfEverySize() throws ProtocolException {
        Random random = new Random(11);
        RandomMessages messages = new RandomMessages(random);
        List<Message> sent = new ArrayList<>();
        ByteArrayOutputStream stream = new ByteArrayOutputStream();
        for (int size : new int[] {0, 1, APART - 1, APART, APART + 1, 5, 70_000, 3, 300_000, APART}) {
            byte[] data = new byte[size];
            random.nextBytes(data);
            Message m = Message.of(Command.DATA, messages.name(255), messages.name(255), random.nextLong(), data);
            sent.add(m);
            stream.writeBytes(WireCodec.standard().encode(m));
        }
        byte[] all = stream.toByteArray();
        for (int chunk : new int[] {1, 7, 20, 999, 4096, 65_536, all.length}) {
            StreamDecoder decoder = CODEC.newStreamDecoder();
            List<Message> got = new ArrayList<>();
            for (int at = 0; at < all.length; at += chunk) {
                decoder.feed(all, at, Math.min(chunk, all.length - at), got::add);
            }
            decoder.finish();
            assertEquals(sent.size(), got.size(), "chunks of " + chunk);
            for (int i = 0; i < sent.size(); i++) {
                sameMessage(sent.get(i), got.get(i), "message " + i + " in chunks of " + chunk);
            }
        }
    }

    /** Every view of {@code got} shows what {@code sent} does; its data is its own array when kept apart. */
    private static void sameMessage(Message sent, Message got, String what) {
        assertEquals(sent, got, what);
        assertEquals(got, sent, what);
        assertEquals(sent.hashCode(), got.hashCode(), what);
        assertEquals(sent.encodedLength(), got.encodedLength(), what);
        assertEquals(sent.dataLength(), got.dataLength(), what);
        assertEquals(sent.from(), got.from(), what);
        assertEquals(sent.to(), got.to(), what);
        assertEquals(sent.sequence(), got.sequence(), what);
        assertArrayEquals(sent.data(), got.data(), what);
        assertArrayEquals(sent.data(), got.sharedData(), what);
        assertEquals(sent.dataBuffer(), got.dataBuffer(), what);
        assertEquals(sent.dataAsString(), got.dataAsString(), what);
        assertArrayEquals(WireCodec.standard().encode(sent), CODEC.encode(got), what);
        assertArrayEquals(Packed.marshal(sent), Packed.shared(got), what);
        ByteBuffer out = ByteBuffer.allocate(got.encodedLength());
        CODEC.encode(got, out);
        assertArrayEquals(Packed.marshal(sent), out.array(), what);
        MessageWriter writer = WireCodec.standard().newWriter(1 << 20);
        writer.add(Message.of(Command.DATA, "a", "b", 1, new byte[3]));
        writer.add(got);
        byte[] batch = writer.toByteArray();
        assertArrayEquals(Packed.marshal(sent), java.util.Arrays.copyOfRange(batch, batch.length - sent.encodedLength(),
                batch.length), what + ", in a batch");
        assertEquals(got.dataLength() >= APART, got.dataKeptApart(), what);
        if (got.dataLength() >= APART) {
            assertSame(got.sharedData(), got.sharedData(), what + ": the data kept apart is handed over, not copied");
        } else {
            assertTrue(got.sharedData() != got.sharedData(), what + ": data in the packed form is copied");
        }
    }

    @Test
    void theRestOfDataKeptApartIsReadStraightIntoItsArray() throws ProtocolException {
        byte[] data = new byte[200_000];
        new Random(7).nextBytes(data);
        byte[] m = Packed.make(5, Command.DATA, "a@x", "b@x", data);
        StreamDecoder decoder = CODEC.newStreamDecoder();
        List<Message> out = new ArrayList<>();
        decoder.feed(m, 0, 10, out::add);
        assertNull(decoder.remainder(1_000), "the header is still to come: 16 bytes of it, then the names");
        decoder.feed(m, 10, 1000, out::add);
        ByteBuffer rest = decoder.remainder(64 * 1024);
        assertEquals(m.length - 1010, rest.remaining());
        rest.put(m, 1010, 150_000);
        decoder.filled(150_000, out::add);
        assertEquals(1010 + 150_000, decoder.bufferedBytes());
        ProtocolException cut = assertThrows(ProtocolException.class, decoder::finish);
        assertEquals("stream ended inside a message: 151010 of its " + m.length + " bytes arrived", cut.getMessage());
        ByteBuffer last = decoder.remainder(1);
        IllegalStateException over = assertThrows(IllegalStateException.class,
                () -> decoder.filled(last.remaining() + 1, out::add));
        assertEquals((last.remaining() + 1) + " bytes filled into a remainder of " + last.remaining(),
                over.getMessage());
        last.put(m, 151_010, m.length - 151_010);
        decoder.filled(m.length - 151_010, out::add);
        assertEquals(1, out.size());
        assertArrayEquals(data, out.get(0).sharedData());
        assertSame(rest.array(), out.get(0).sharedData(), "the reads went into the data's own array");
        assertTrue(decoder.isIdle());
    }

    @Test
    void aThresholdBelowOneIsRefused() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> WireCodec.standard().withDataApartFrom(0));
        assertEquals("bytes 0 is less than 1", e.getMessage());
    }
}
