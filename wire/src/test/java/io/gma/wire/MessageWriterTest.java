package io.gma.wire;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.channels.Channels;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(value = 30, unit = TimeUnit.SECONDS)
class MessageWriterTest {
    private final WireCodec codec = WireCodec.standard();

    /** Counts write calls, so a test can tell one write from many. */
    static final class CountingStream extends OutputStream {
        final ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        int writes;

        @Override
        public void write(int b) {
            writes++;
            bytes.write(b);
        }

        @Override
        public void write(byte[] b, int off, int len) {
            writes++;
            bytes.write(b, off, len);
        }
    }

    private static Message message(int sequence, int size) {
        return Message.of(Command.DATA, "a-aaaaaa@x", "b-bbbbbb@x", sequence, new byte[size]);
    }

    @Test
    void packsManyMessagesIntoOneWrite() throws IOException {
        MessageWriter writer = codec.newWriter(1 << 20);
        for (int i = 1; i <= 100; i++) {
            assertTrue(writer.add(message(i, i)));
        }
        assertEquals(100, writer.messageCount());
        CountingStream out = new CountingStream();
        writer.writeTo(out);
        assertEquals(1, out.writes);
        assertTrue(writer.isEmpty());

        List<Message> decoded = new ArrayList<>();
        byte[] bytes = out.bytes.toByteArray();
        StreamDecoder decoder = codec.newStreamDecoder();
        decoder.feed(bytes, 0, bytes.length, decoded::add);
        decoder.finish();
        assertEquals(100, decoded.size());
        for (int i = 0; i < 100; i++) {
            assertEquals(message(i + 1, i + 1), decoded.get(i));
        }
    }

    @Test
    void refusesMessageThatWouldPassTheLimit() {
        Message m = message(1, 60); // 20 + 10 + 10 + 60 = 100 bytes
        MessageWriter writer = codec.newWriter(250);
        assertTrue(writer.add(m));
        assertTrue(writer.add(m));
        assertFalse(writer.add(m));
        assertEquals(200, writer.byteCount());
        assertEquals(2, writer.messageCount());
    }

    @Test
    void takesAFirstMessageLargerThanTheLimitAlone() throws IOException {
        Message big = message(1, 5000);
        MessageWriter writer = codec.newWriter(1000);
        assertTrue(writer.add(big));
        assertFalse(writer.add(message(2, 1)));
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        writer.writeTo(Channels.newChannel(out));
        assertArrayEquals(codec.encode(big), out.toByteArray());
        assertTrue(writer.add(message(2, 1)));
    }

    @Test
    void keepsTheBatchWhenTheWriteFails() {
        MessageWriter writer = codec.newWriter(1000);
        writer.add(message(1, 10));
        OutputStream broken = new OutputStream() {
            @Override
            public void write(int b) throws IOException {
                throw new IOException("broken pipe");
            }

            @Override
            public void write(byte[] b, int off, int len) throws IOException {
                throw new IOException("broken pipe");
            }
        };
        assertThrows(IOException.class, () -> writer.writeTo(broken));
        assertEquals(1, writer.messageCount());
        assertArrayEquals(codec.encode(message(1, 10)), writer.toByteArray());
    }

    @Test
    void refusesNonPositiveLimit() {
        assertEquals("maxBatchBytes 0 is not positive",
                assertThrows(IllegalArgumentException.class, () -> codec.newWriter(0)).getMessage());
    }
}
