package io.gma.internal.spool;

import java.nio.ByteBuffer;
import java.util.ArrayDeque;

/**
 * The spool's write buffers: direct buffers aligned to a block ({@link Segment#BLOCK}), as direct I/O needs them,
 * of {@link #POOLED} bytes (a chunk of records, its lead and a block of padding), kept for reuse once written (at
 * most {@link #KEPT} of them), so that a stream of appends allocates nothing; a record larger than a chunk gets a
 * buffer of its own size, not kept. Guarded by the spool's lock.
 */
final class WriteBuffers {
    static final int CHUNK_BYTES = 256 << 10;
    static final int POOLED = CHUNK_BYTES + 2 * Segment.BLOCK;
    private static final int KEPT = 32;
    private final ArrayDeque<ByteBuffer> free = new ArrayDeque<>();

    /** An empty buffer with room for {@code bytes} at least, its first byte on a block. */
    ByteBuffer take(int bytes) {
        if (bytes > POOLED) {
            return aligned((bytes + Segment.BLOCK - 1) / Segment.BLOCK * Segment.BLOCK);
        }
        ByteBuffer b = free.pollFirst();
        return b != null ? b : aligned(POOLED);
    }

    private static ByteBuffer aligned(int capacity) {
        return ByteBuffer.allocateDirect(capacity + Segment.BLOCK).alignedSlice(Segment.BLOCK).limit(capacity)
                .slice();
    }

    /** A buffer written and done with. */
    void give(ByteBuffer b) {
        if (b.capacity() == POOLED && free.size() < KEPT) {
            free.addFirst(b.clear());
        }
    }
}
