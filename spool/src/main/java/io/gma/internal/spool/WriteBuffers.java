package io.gma.internal.spool;

import java.nio.ByteBuffer;
import java.util.ArrayDeque;

/**
 * The spool's write buffers: direct buffers of {@link #CHUNK_BYTES}, kept for reuse once written (at most
 * {@link #KEPT} of them), so that a stream of appends allocates nothing; a record larger than a chunk gets a
 * buffer of its own size, not kept. Guarded by the spool's lock.
 */
final class WriteBuffers {
    static final int CHUNK_BYTES = 256 << 10;
    private static final int KEPT = 32;
    private final ArrayDeque<ByteBuffer> free = new ArrayDeque<>();

    /** An empty buffer with room for {@code bytes} at least. */
    ByteBuffer take(int bytes) {
        if (bytes > CHUNK_BYTES) {
            return ByteBuffer.allocate(bytes);
        }
        ByteBuffer b = free.pollFirst();
        return b != null ? b : ByteBuffer.allocateDirect(CHUNK_BYTES);
    }

    /** A buffer written and done with. */
    void give(ByteBuffer b) {
        if (b.isDirect() && b.capacity() == CHUNK_BYTES && free.size() < KEPT) {
            free.addFirst(b.clear());
        }
    }
}
