package io.gma.client;

import java.util.concurrent.CompletableFuture;

/**
 * What became of a counted message: the {@link Sent} its sender holds. Its bytes are in the send queue, not
 * here; the future is made only when asked for, so acknowledging a stream of messages nobody waits on touches
 * none of them.
 */
final class Pending implements Sent {
    private final long sequence;
    /** The queue that holds it; null for a message refused before it was queued. */
    private final SendQueue queue;

    // guarded by the queue's lock
    /** Its number among the queue's data messages, from 1, given when it was queued; 0 before. */
    long index;
    /** Why it failed, or null. */
    EndpointException failure;
    /** Made by {@link #acknowledged()}; null until someone asks. */
    CompletableFuture<Void> future;

    Pending(SendQueue queue, long sequence) {
        this.queue = queue;
        this.sequence = sequence;
    }

    /** A message refused before it was queued: its future has failed with {@code why}. */
    static Pending refused(EndpointException why) {
        Pending p = new Pending(null, 0);
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
