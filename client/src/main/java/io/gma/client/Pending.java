package io.gma.client;

import io.gma.internal.link.LinkException;
import io.gma.internal.link.QueuedMessage;
import io.gma.internal.link.SendQueue;
import java.util.concurrent.CompletableFuture;

/**
 * What became of a counted message: the {@link Sent} its sender holds, a message of the link module's send
 * queue whose failures its future reports as {@link EndpointException}s. A message that asks for a receipt is a
 * {@link WithReceipt}, and one kept in the outbox a {@link Kept}, so that the others are no larger than they were.
 */
sealed class Pending extends QueuedMessage implements Sent permits Pending.WithReceipt, Pending.Kept {
    Pending(SendQueue queue, long sequence) {
        super(queue, sequence);
    }

    private Pending(EndpointException why) {
        super(why);
    }

    /** A message refused before it was queued: its future has failed with {@code why}. */
    static Pending refused(EndpointException why) {
        return new Pending(why);
    }

    /** The queue's future, whatever the sender is told ({@link Kept}). */
    final CompletableFuture<Void> queued() {
        return queueAcknowledged();
    }

    @Override
    public CompletableFuture<Void> delivered() {
        throw new IllegalStateException("delivered() needs receipts, which this endpoint does not ask for: build it"
                + " with EndpointBuilder.receipts(timeout)");
    }

    @Override
    protected Throwable failureSeenBySender(LinkException why) {
        return Failures.toEndpoint(why);
    }

    @Override
    public String toString() {
        return "Sent #" + Long.toUnsignedString(sequence());
    }

    /** A message that asks its destination for a receipt: {@link #delivered()} is the {@link Receipts}' future. */
    static final class WithReceipt extends Pending {
        private final CompletableFuture<Void> delivered;

        WithReceipt(SendQueue queue, long sequence, CompletableFuture<Void> delivered) {
            super(queue, sequence);
            this.delivered = delivered;
        }

        /** Refused before it was queued: both its futures have failed with {@code why}. */
        WithReceipt(EndpointException why) {
            super(why);
            this.delivered = acknowledged();
        }

        @Override
        public CompletableFuture<Void> delivered() {
            return delivered;
        }
    }

    /**
     * A message kept in the outbox ({@link OutboxSpool#track}): its sender learns of a failure once the record's
     * mark is written, not before, so {@link #acknowledged()} is a future of its own, which the outbox completes.
     * With receipts, {@link #delivered()} is the {@link Receipts}' future.
     */
    static final class Kept extends Pending {
        private final CompletableFuture<Void> told = new CompletableFuture<>();
        /** The receipt's future, or null: the endpoint asks for none. */
        private final CompletableFuture<Void> delivered;

        Kept(SendQueue queue, long sequence, CompletableFuture<Void> delivered) {
            super(queue, sequence);
            this.delivered = delivered;
        }

        @Override
        public CompletableFuture<Void> acknowledged() {
            return told;
        }

        /** What the sender is told through: the outbox completes it. */
        CompletableFuture<Void> told() {
            return told;
        }

        @Override
        public CompletableFuture<Void> delivered() {
            return delivered != null ? delivered : super.delivered();
        }
    }
}
