package io.gma.wire;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(value = 30, unit = TimeUnit.SECONDS)
class StreamDecoderTest {
    private final List<Message> out = new ArrayList<>();

    private static byte[] header(int command, int fromLength, int toLength, long dataLength) {
        byte[] h = new byte[20];
        h[0] = 0x47;
        h[1] = 0x4D;
        h[2] = 1;
        h[3] = (byte) command;
        h[5] = (byte) fromLength;
        h[6] = (byte) toLength;
        Layout.putU32(h, 16, dataLength);
        return h;
    }

    @Test
    void refusesHeaderClaiming2GiBAtOnceWithoutAllocating() {
        com.sun.management.ThreadMXBean threads =
                (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        byte[] h = header(1, 3, 3, Integer.MAX_VALUE);
        StreamDecoder decoder = WireCodec.standard().newStreamDecoder();
        long before = threads.getCurrentThreadAllocatedBytes();
        ProtocolException e = assertThrows(ProtocolException.class, () -> decoder.feed(h, 0, h.length, out::add));
        long allocated = threads.getCurrentThreadAllocatedBytes() - before;
        assertEquals(ErrorCode.TOO_LARGE, e.code());
        assertEquals("dataLength 2147483647 exceeds maxMessageBytes 16777216", e.getMessage());
        assertTrue(allocated < 64 * 1024, "allocated " + allocated + " bytes to refuse a header");
    }

    @Test
    void refusesHeaderOverTheLimitFedByteByByte() {
        byte[] h = header(1, 3, 3, 1025);
        StreamDecoder decoder = WireCodec.withMaxMessageBytes(1024).newStreamDecoder();
        for (int i = 0; i < 19; i++) {
            assertDoesNotThrow(decoder, h, i);
        }
        ProtocolException e = assertThrows(ProtocolException.class, () -> decoder.feed(h, 19, 1, out::add));
        assertEquals("dataLength 1025 exceeds maxMessageBytes 1024", e.getMessage());
    }

    @Test
    void handshakeDecoderRefuses16MiBHelloWithoutAllocating() {
        com.sun.management.ThreadMXBean threads =
                (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        byte[] h = header(0x10, 7, 0, 16 << 20);
        StreamDecoder decoder = WireCodec.standard().newHandshakeDecoder(4096);
        long before = threads.getCurrentThreadAllocatedBytes();
        ProtocolException e = assertThrows(ProtocolException.class, () -> decoder.feed(h, 0, h.length, out::add));
        long allocated = threads.getCurrentThreadAllocatedBytes() - before;
        assertEquals(ErrorCode.TOO_LARGE, e.code());
        assertEquals("dataLength 16777216 exceeds 4096, the limit until the handshake is over", e.getMessage());
        assertTrue(allocated < 64 * 1024, "allocated " + allocated + " bytes to refuse a header");
    }

    @Test
    void handshakeDecoderRefuses16MiBHelloFedByteByByte() {
        byte[] h = header(0x10, 7, 0, 16 << 20);
        StreamDecoder decoder = WireCodec.standard().newHandshakeDecoder(4096);
        for (int i = 0; i < 19; i++) {
            assertDoesNotThrow(decoder, h, i);
        }
        ProtocolException e = assertThrows(ProtocolException.class, () -> decoder.feed(h, 19, 1, out::add));
        assertEquals("dataLength 16777216 exceeds 4096, the limit until the handshake is over", e.getMessage());
        assertTrue(out.isEmpty());
    }

    /** A HELLO at the handshake's limit, then, once the sink ends the handshake, a message far over it. */
    private static byte[] helloThenLarge() {
        byte[] hello = Packed.make(0, Command.HELLO, "a@x", "", new byte[4096]);
        byte[] large = Packed.make(1, Command.DATA, "a@x", "b@x", new byte[100_000]);
        byte[] stream = new byte[hello.length + large.length];
        System.arraycopy(hello, 0, stream, 0, hello.length);
        System.arraycopy(large, 0, stream, hello.length, large.length);
        return stream;
    }

    private java.util.function.Consumer<Message> endingHandshakeOnHello(StreamDecoder decoder) {
        return m -> {
            out.add(m);
            if (m.command() == Command.HELLO) {
                decoder.endHandshake();
            }
        };
    }

    @Test
    void endHandshakeFromTheSinkRaisesTheLimitForTheNextHeaderOfTheSameChunk() throws ProtocolException {
        byte[] stream = helloThenLarge();
        StreamDecoder decoder = WireCodec.standard().newHandshakeDecoder(4096);
        assertEquals(4096, decoder.maxDataBytes());
        decoder.feed(stream, 0, stream.length, endingHandshakeOnHello(decoder));
        assertEquals(2, out.size());
        assertEquals(100_000, out.get(1).data().length);
        assertEquals(16 << 20, decoder.maxDataBytes());
    }

    @Test
    void endHandshakeFromTheSinkWorksFedByteByByte() {
        byte[] stream = helloThenLarge();
        StreamDecoder decoder = WireCodec.standard().newHandshakeDecoder(4096);
        java.util.function.Consumer<Message> sink = endingHandshakeOnHello(decoder);
        for (int i = 0; i < stream.length; i++) {
            try {
                decoder.feed(stream, i, 1, sink);
            } catch (ProtocolException e) {
                throw new AssertionError("refused at byte " + i, e);
            }
        }
        assertEquals(2, out.size());
        assertEquals(4096, out.get(0).data().length);
        assertEquals(100_000, out.get(1).data().length);
    }

    @Test
    void withoutEndHandshakeTheSecondMessageIsRefused() {
        byte[] stream = helloThenLarge();
        StreamDecoder decoder = WireCodec.standard().newHandshakeDecoder(4096);
        ProtocolException e = assertThrows(ProtocolException.class,
                () -> decoder.feed(stream, 0, stream.length, out::add));
        assertEquals("dataLength 100000 exceeds 4096, the limit until the handshake is over", e.getMessage());
        assertEquals(1, out.size());
    }

    @Test
    void handshakeLimitAboveTheCodecsIsTheCodecs() {
        byte[] h = header(0x10, 7, 0, 1025);
        StreamDecoder decoder = WireCodec.withMaxMessageBytes(1024).newHandshakeDecoder(4096);
        assertEquals(1024, decoder.maxDataBytes());
        ProtocolException e = assertThrows(ProtocolException.class, () -> decoder.feed(h, 0, h.length, out::add));
        assertEquals("dataLength 1025 exceeds maxMessageBytes 1024", e.getMessage());
    }

    @Test
    void negativeHandshakeLimitIsRefused() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> WireCodec.standard().newHandshakeDecoder(-1));
        assertEquals("handshakeMaxDataBytes -1 is negative", e.getMessage());
    }

    private void assertDoesNotThrow(StreamDecoder decoder, byte[] bytes, int at) {
        try {
            decoder.feed(bytes, at, 1, out::add);
        } catch (ProtocolException e) {
            throw new AssertionError("refused at byte " + at, e);
        }
    }

    @Test
    void refusesBadMagicAtTheSecondByte() {
        byte[] http = "GET / HTTP/1.1\r\n".getBytes(StandardCharsets.US_ASCII);
        StreamDecoder decoder = WireCodec.standard().newStreamDecoder();
        assertDoesNotThrow(decoder, http, 0);
        ProtocolException e = assertThrows(ProtocolException.class, () -> decoder.feed(http, 1, 1, out::add));
        assertEquals("magic 0x4745 is not 0x474D (\"GM\"): this is not a GMA stream", e.getMessage());
    }

    @Test
    void saysWhenTheOtherSideIsAnHttpServerOrSpeaksTls() {
        byte[] http = "HTTP/1.1 400 Bad Request\r\n".getBytes(StandardCharsets.US_ASCII);
        ProtocolException e = assertThrows(ProtocolException.class,
                () -> WireCodec.standard().newStreamDecoder().feed(http, 0, http.length, out::add));
        assertEquals("magic 0x4854 is not 0x474D (\"GM\"): this is an HTTP server, not a GMA stream (a PC servlet's"
                + " uplinks are on its --uplink-port, not its --http-port)", e.getMessage());
        byte[] alert = {0x15, 0x03, 0x03, 0x00, 0x02, 0x02, 0x50};
        e = assertThrows(ProtocolException.class,
                () -> WireCodec.standard().newStreamDecoder().feed(alert, 0, alert.length, out::add));
        assertEquals("magic 0x1503 is not 0x474D (\"GM\"): this is TLS, not a plaintext GMA stream (this side needs"
                + " TLS too: --security DIR, or Security with TLS)", e.getMessage());
    }

    @Test
    void refusesReservedCommandAtTheFourthByte() {
        byte[] h = header(0x30, 1, 1, 0);
        StreamDecoder decoder = WireCodec.standard().newStreamDecoder();
        ProtocolException e = assertThrows(ProtocolException.class, () -> decoder.feed(h, 0, 4, out::add));
        assertEquals("command 0x30 is reserved", e.getMessage());
    }

    @Test
    void refusesEveryCallAfterAFailure() {
        byte[] h = header(0x30, 1, 1, 0);
        StreamDecoder decoder = WireCodec.standard().newStreamDecoder();
        assertThrows(ProtocolException.class, () -> decoder.feed(h, 0, 20, out::add));
        IllegalStateException e = assertThrows(IllegalStateException.class,
                () -> decoder.feed(Vectors.stream(), 0, 40, out::add));
        assertEquals("this stream already failed; close it", e.getMessage());
        assertTrue(out.isEmpty());
    }

    @Test
    void deliversMessagesBeforeTheBadBytesAndNoneAfter() {
        byte[] good = Packed.make(1, Command.DATA, "a@x", "b@x", "one");
        byte[] bad = header(0, 1, 1, 0);
        byte[] stream = new byte[good.length * 2 + bad.length];
        System.arraycopy(good, 0, stream, 0, good.length);
        System.arraycopy(bad, 0, stream, good.length, bad.length);
        System.arraycopy(good, 0, stream, good.length + bad.length, good.length);
        StreamDecoder decoder = WireCodec.standard().newStreamDecoder();
        assertThrows(ProtocolException.class, () -> decoder.feed(stream, 0, stream.length, out::add));
        assertEquals(1, out.size());
    }

    @Test
    void finishNamesWhereTheStreamEnded() throws ProtocolException {
        byte[] m = Packed.make(1, Command.DATA, "a@x", "b@x", "hello");
        StreamDecoder decoder = WireCodec.standard().newStreamDecoder();
        decoder.feed(m, 0, 12, out::add);
        assertFalse(decoder.isIdle());
        assertEquals(12, decoder.bufferedBytes());
        assertEquals("stream ended inside a header: 12 of its 20 bytes arrived",
                assertThrows(ProtocolException.class, decoder::finish).getMessage());
        decoder.feed(m, 12, 18, out::add);
        assertEquals("stream ended inside a message: 30 of its 31 bytes arrived",
                assertThrows(ProtocolException.class, decoder::finish).getMessage());
        decoder.feed(m, 30, 1, out::add);
        decoder.finish();
        assertTrue(decoder.isIdle());
        assertEquals(1, out.size());
    }

    @Test
    void feedsDirectBuffers() throws ProtocolException {
        byte[] stream = Vectors.stream();
        ByteBuffer direct = ByteBuffer.allocateDirect(stream.length);
        direct.put(stream).flip();
        StreamDecoder decoder = WireCodec.standard().newStreamDecoder();
        decoder.feed(direct, out::add);
        assertEquals(4, out.size());
        assertFalse(direct.hasRemaining());
    }

    @Test
    void aLargeMessagesRemainderIsReadIntoItsOwnArray() throws ProtocolException {
        byte[] data = new byte[200_000];
        new java.util.Random(7).nextBytes(data);
        byte[] m = Packed.make(5, Command.DATA, "a@x", "b@x", data);
        StreamDecoder decoder = WireCodec.standard().newStreamDecoder();
        assertEquals(null, decoder.remainder(1), "nothing partial yet");
        decoder.feed(m, 0, 1000, out::add);
        assertEquals(null, decoder.remainder(m.length), "more asked for than is to come");
        ByteBuffer rest = decoder.remainder(64 * 1024);
        assertEquals(m.length - 1000, rest.remaining());
        rest.put(m, 1000, 100_000);
        decoder.filled(100_000, out::add);
        assertTrue(out.isEmpty());
        ByteBuffer last = decoder.remainder(1);
        assertEquals(m.length - 101_000, last.remaining());
        IllegalStateException over = assertThrows(IllegalStateException.class,
                () -> decoder.filled(last.remaining() + 1, out::add));
        assertEquals((last.remaining() + 1) + " bytes filled into a remainder of " + last.remaining(),
                over.getMessage());
        last.put(m, 101_000, m.length - 101_000);
        decoder.filled(m.length - 101_000, out::add);
        assertEquals(1, out.size());
        assertTrue(java.util.Arrays.equals(data, out.get(0).data()));
        assertTrue(decoder.isIdle());
        assertEquals(null, decoder.remainder(1));
    }

    @Test
    void decodeRefusesTrailingBytes() {
        byte[] m = Packed.make(1, Command.DATA, "a@x", "b@x", "x");
        byte[] two = new byte[m.length * 2];
        System.arraycopy(m, 0, two, 0, m.length);
        System.arraycopy(m, 0, two, m.length, m.length);
        ProtocolException e = assertThrows(ProtocolException.class, () -> WireCodec.standard().decode(two));
        assertEquals("27 bytes follow the 27-byte message; decode takes exactly one (use a StreamDecoder)",
                e.getMessage());
    }

    @Test
    void decodeNamesTheTruncation() {
        byte[] m = Packed.make(1, Command.DATA, "a@x", "b@x", "x");
        assertEquals("truncated message: 26 of the 27 bytes its header announces", assertThrows(
                ProtocolException.class, () -> WireCodec.standard().decode(m, 0, 26)).getMessage());
        assertEquals("truncated message: 5 bytes, the header alone is 20", assertThrows(
                ProtocolException.class, () -> WireCodec.standard().decode(m, 0, 5)).getMessage());
    }

    @Test
    void refusesBadUtf8InTo() {
        byte[] m = Packed.make(1, Command.DATA, "a@x", "bé@x", "x");
        m[24] = (byte) 0xC3;
        m[25] = (byte) 0x28;
        ProtocolException e = assertThrows(ProtocolException.class, () -> WireCodec.standard().decode(m));
        assertEquals(ErrorCode.MALFORMED, e.code());
        assertEquals("to is not valid UTF-8: byte 0xC3 at offset 1 of 5", e.getMessage());
    }

    @Test
    void refusesOverlongAndSurrogateUtf8() {
        for (byte[] bad : new byte[][] {{(byte) 0xC0, (byte) 0x80}, {(byte) 0xE0, (byte) 0x80, (byte) 0x80},
                {(byte) 0xED, (byte) 0xA0, (byte) 0x80}, {(byte) 0xF4, (byte) 0x90, (byte) 0x80, (byte) 0x80},
                {(byte) 0xF0, (byte) 0x9F, (byte) 0x98}}) {
            assertEquals(0, Utf8.firstInvalid(bad, 0, bad.length), java.util.HexFormat.of().formatHex(bad));
        }
        byte[] ok = "aé€😀".getBytes(StandardCharsets.UTF_8);
        assertEquals(-1, Utf8.firstInvalid(ok, 0, ok.length));
    }
}
