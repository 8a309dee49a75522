package io.gma.client;

import java.util.concurrent.CompletableFuture;

/**
 * A counted message in a send queue: its packed bytes (owned here, never changed), whether it is data
 * (bounded by the queue's limits) or control (never waits), and what became of it. It is the {@link Sent}
 * its sender holds; the future is made only when asked for, so acknowledging a stream of messages nobody
 * waits on touches none of them (the queue keeps their sizes in arrays of its own).
 */
final class Pending implements Sent {
    final byte[] packed;
    /** packed.length, kept here so that queueing a message need not touch its bytes. */
    final int size;
    final boolean data;
    private final long sequence;
    /** The queue that holds it; null for a message refused before it was queued. */
    private final SendQueue queue;

    // guarded by the queue's lock
    /** Its place in the queue's wire order while in flight, and after it was acknowledged; 0 otherwise. */
    long position;
    /** Why it failed, or null. */
    EndpointException failure;
    /** Made by {@link #acknowledged()}; null until someone asks. */
    CompletableFuture<Void> future;

    Pending(SendQueue queue, byte[] packed, boolean data, long sequence) {
        this.queue = queue;
        this.packed = packed;
        this.size = packed.length;
        this.data = data;
        this.sequence = sequence;
    }

    /** A message refused before it was queued: its future has failed with {@code why}. */
    static Pending refused(EndpointException why) {
        Pending p = new Pending(null, new byte[0], true, 0);
        p.failure = why;
        p.future = CompletableFuture.failedFuture(why);
        return p;
    }

    @Override
    public long sequence() {
        return sequence;
    }

    @Override
    public CompletableFuture<Void> acknowledged() {
        return queue == null ? future : queue.futureOf(this);
    }

    @Override
    public String toString() {
        return "Sent #" + Long.toUnsignedString(sequence);
    }
}
