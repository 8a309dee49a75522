package io.gma.internal.link;

import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * Buffers that links borrow while bytes wait in them and give back once they are empty, for the process, so that
 * an idle link holds none (issue 22): a {@link LinkWriter}'s output ({@link #OUTPUT}; {@link #LARGE_OUTPUT} for
 * one write of a large message), and a TLS link's network input and output once it is open ({@link #TLS_IN},
 * {@link #TLS_OUT}). At most {@link #POOLED} of each wait here between uses ({@link #LARGE_POOLED} large ones);
 * past that a buffer given back is left to the collector.
 *
 * <p>Lock-free and allocation-free: a fixed array of slots, taken and filled by compare-and-set from a place
 * that depends on the thread, so that threads seldom meet on one slot. A round trip's message borrows an output
 * buffer and gives it back: two compare-and-sets.
 */
final class BufferPool {
    /** Buffers kept between uses, at most, per pool: as many as threads write at once, and more. */
    static final int POOLED = 64;
    /** Large output buffers, at most: 16 MiB of them, each lent for one write ({@link #lend}). */
    static final int LARGE_POOLED = 16;
    /** A writer's output: a full batch ({@link LinkWriter#BATCH_BYTES}) and then some; direct, for the kernel. */
    static final BufferPool OUTPUT = new BufferPool(128 * 1024, true, POOLED);
    /**
     * What a writer borrows for one write of a message longer than {@link #OUTPUT}'s buffers, and gives back at
     * once: up to 1 MiB of it goes to the socket in one write rather than eight ({@link LinkWriter}).
     */
    static final BufferPool LARGE_OUTPUT = new BufferPool(1024 * 1024, true, LARGE_POOLED);
    /** TLS's network buffers, on the heap (twice as fast as direct ones for a TLS stream, measured). */
    static final BufferPool TLS_IN = new BufferPool(TlsTransport.READ_BYTES, false, POOLED);
    static final BufferPool TLS_OUT = new BufferPool(0, false, POOLED);
    /** Nothing to write: for a TLS transport that has wrapped bytes left over. */
    static final ByteBuffer EMPTY = ByteBuffer.allocate(0);

    private final int bytes;
    private final boolean direct;
    private final AtomicReferenceArray<ByteBuffer> slots;
    /** Buffers of {@link #lend} out now. */
    private final AtomicInteger lent = new AtomicInteger();

    /**
     * @param bytes the size of a new buffer, or 0: as {@link #take(int)} asks
     * @param pooled how many buffers wait here at most: a power of two
     */
    private BufferPool(int bytes, boolean direct, int pooled) {
        if (Integer.bitCount(pooled) != 1) {
            throw new IllegalArgumentException("pooled " + pooled + " is not a power of two");
        }
        this.bytes = bytes;
        this.direct = direct;
        this.slots = new AtomicReferenceArray<>(pooled);
    }

    /** The size of this pool's buffers ({@link #take()}). */
    int bytes() {
        return bytes;
    }

    /** A cleared buffer of this pool's size, pooled or new. */
    ByteBuffer take() {
        return take(bytes);
    }

    /** A cleared buffer of at least {@code size} bytes, pooled or new. */
    ByteBuffer take(int size) {
        int mask = slots.length() - 1;
        int start = start();
        for (int i = 0; i <= mask; i++) {
            int slot = (start + i) & mask;
            ByteBuffer b = slots.get(slot);
            if (b != null && b.capacity() >= size && slots.compareAndSet(slot, b, null)) {
                return b;
            }
        }
        int n = Math.max(size, bytes);
        return direct ? ByteBuffer.allocateDirect(n) : ByteBuffer.allocate(n);
    }

    /**
     * A buffer of this pool's size while fewer than its pooled count are lent ({@link #giveBackLent}), else null:
     * so that the pool makes no more than that many, and direct memory does not churn when many threads write
     * large messages at once (the others write through their output buffers).
     */
    ByteBuffer lend() {
        if (lent.incrementAndGet() > slots.length()) {
            lent.decrementAndGet();
            return null;
        }
        return take();
    }

    /** Gives back a buffer of {@link #lend}, which holds nothing that is still to be written. */
    void giveBackLent(ByteBuffer b) {
        giveBack(b);
        lent.decrementAndGet();
    }

    /** Gives back {@code b}, which holds nothing that is still to be read or written. */
    void giveBack(ByteBuffer b) {
        b.clear();
        int mask = slots.length() - 1;
        int start = start();
        for (int i = 0; i <= mask; i++) {
            int slot = (start + i) & mask;
            if (slots.get(slot) == null && slots.compareAndSet(slot, null, b)) {
                return;
            }
        }
    }

    private static int start() {
        return (int) Thread.currentThread().getId() * 7;
    }
}
