package io.gma.internal.link;

import java.util.concurrent.CompletableFuture;

/**
 * What became of a counted data message handed to a {@link SendQueue}: its sequence, and a future of the peer's
 * acknowledgement. Its bytes are in the queue, not here; the future is made only when asked for, so
 * acknowledging a stream of messages nobody waits on touches none of them. The client's {@code Sent} is one
 * ({@code Pending}), which makes the client's public exception of the queue's failures
 * ({@link #failureSeenBySender}).
 */
public class QueuedMessage {
    private final long sequence;
    /** The queue that holds it; null for a message refused before it was queued. */
    private final SendQueue queue;

    // guarded by the queue's lock
    /** Its number among the queue's data messages, from 1, given when it was queued; 0 before. */
    long index;
    /** Why it failed, or null. */
    LinkException failure;
    /** Made by {@link #queueAcknowledged()}; null until someone asks. */
    CompletableFuture<Void> future;

    /** A message with {@code sequence}, about to be offered to {@code queue}. */
    protected QueuedMessage(SendQueue queue, long sequence) {
        this.queue = queue;
        this.sequence = sequence;
    }

    /** A message refused before it was queued: its sequence is 0, and its future has failed with {@code why}. */
    protected QueuedMessage(Throwable why) {
        this.queue = null;
        this.sequence = 0;
        this.future = CompletableFuture.failedFuture(why);
    }

    /** The message's sequence number; 0 for a message refused before it was queued. */
    public final long sequence() {
        return sequence;
    }

    /**
     * Completes when the peer acknowledges the message, or fails with what {@link #failureSeenBySender} makes of
     * the queue's reason: {@link #queueAcknowledged()}, unless a subclass tells its sender later.
     */
    public CompletableFuture<Void> acknowledged() {
        return queueAcknowledged();
    }

    /**
     * The queue's future of the message: completes when the peer acknowledges it, or fails with what
     * {@link #failureSeenBySender} makes of the queue's reason. Made on the first call, the same future after.
     */
    protected final CompletableFuture<Void> queueAcknowledged() {
        return queue == null ? future : queue.futureOf(this);
    }

    /**
     * What this message's future fails with when the queue fails it with {@code why}: {@code why} itself here.
     * Called without the queue's lock, once per message.
     */
    protected Throwable failureSeenBySender(LinkException why) {
        return why;
    }
}
