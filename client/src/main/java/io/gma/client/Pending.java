package io.gma.client;

import io.gma.internal.link.LinkException;
import io.gma.internal.link.QueuedMessage;
import io.gma.internal.link.SendQueue;
import java.util.concurrent.CompletableFuture;

/**
 * What became of a counted message: the {@link Sent} its sender holds, a message of the link module's send
 * queue whose failures its future reports as {@link EndpointException}s. A message that asks for a receipt is a
 * {@link WithReceipt}, so that one that does not is no larger than it was.
 */
sealed class Pending extends QueuedMessage implements Sent permits Pending.WithReceipt {
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
}
