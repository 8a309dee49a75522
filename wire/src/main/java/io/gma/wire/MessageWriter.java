package io.gma.wire;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.channels.WritableByteChannel;
import java.util.Arrays;

/**
 * Packs many messages back to back into one buffer, so that a batch costs one write (one POST body, one
 * socket write) instead of one per message.
 *
 * <p>Bounded: {@link #add} refuses a message that would take the batch past {@code maxBatchBytes}, except
 * the first, so a message of any size can still be sent alone. After a write the writer is empty and can
 * be reused. Not thread-safe.
 */
public final class MessageWriter {
    private static final int INITIAL_CAPACITY = 8 * 1024;

    private final int maxBatchBytes;
    private byte[] buffer;
    private int size;
    private int count;

    MessageWriter(int maxBatchBytes) {
        if (maxBatchBytes <= 0) {
            throw new IllegalArgumentException("maxBatchBytes " + maxBatchBytes + " is not positive");
        }
        this.maxBatchBytes = maxBatchBytes;
        this.buffer = new byte[Math.min(INITIAL_CAPACITY, maxBatchBytes)];
    }

    /**
     * Appends the message if it fits.
     *
     * @return false, leaving the batch unchanged, if the batch is not empty and the message would take it
     *     past maxBatchBytes: write the batch, then add the message again
     */
    public boolean add(Message message) {
        int length = message.encodedLength();
        if (count > 0 && (long) size + length > maxBatchBytes) {
            return false;
        }
        if (size + length > buffer.length) {
            int wanted = (int) Math.min(Math.max((long) buffer.length * 2, (long) size + length),
                    Math.max(maxBatchBytes, length));
            buffer = Arrays.copyOf(buffer, wanted);
        }
        message.copyTo(buffer, size);
        size += length;
        count++;
        return true;
    }

    /** How many messages the batch holds. */
    public int messageCount() {
        return count;
    }

    /** How many bytes the batch holds. */
    public int byteCount() {
        return size;
    }

    /** Whether the batch is empty. */
    public boolean isEmpty() {
        return count == 0;
    }

    /** Writes the batch in one {@code write} call and empties the writer. On failure the batch is kept. */
    public void writeTo(OutputStream out) throws IOException {
        out.write(buffer, 0, size);
        clear();
    }

    /**
     * Writes the whole batch to a blocking channel, as one buffer,
     * and empties the writer. On failure the batch is kept, and the channel may have taken part of it.
     */
    public void writeTo(WritableByteChannel channel) throws IOException {
        ByteBuffer bytes = ByteBuffer.wrap(buffer, 0, size);
        while (bytes.hasRemaining()) {
            channel.write(bytes);
        }
        clear();
    }

    /** A copy of the batch's bytes; the writer keeps them. */
    public byte[] toByteArray() {
        return Arrays.copyOf(buffer, size);
    }

    /** Empties the writer, giving back memory a single large message made it take. */
    public void clear() {
        size = 0;
        count = 0;
        if (buffer.length > Math.max(maxBatchBytes, INITIAL_CAPACITY)) {
            buffer = new byte[Math.min(INITIAL_CAPACITY, maxBatchBytes)];
        }
    }
}
