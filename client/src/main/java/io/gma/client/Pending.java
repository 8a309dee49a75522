package io.gma.client;

import io.gma.internal.link.LinkException;
import io.gma.internal.link.QueuedMessage;
import io.gma.internal.link.SendQueue;
import java.util.concurrent.CompletableFuture;

/**
 * What became of a counted message: the {@link Sent} its sender holds, a message of the link module's send
 * queue whose failures its future reports as {@link EndpointException}s.
 */
final class Pending extends QueuedMessage implements Sent {
    /**
     * The receipt's future, the {@link Receipts}' own; null when the endpoint asks for none. Set by the sending
     * thread before the Sent is returned to it.
     */
    private CompletableFuture<Void> delivered;

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

    /** Its receipt is awaited: {@link #delivered()} is {@code receipt}. */
    void awaitsReceipt(CompletableFuture<Void> receipt) {
        this.delivered = receipt;
    }

    @Override
    public CompletableFuture<Void> delivered() {
        if (delivered == null) {
            throw new IllegalStateException("delivered() needs receipts, which this endpoint does not ask for: build"
                    + " it with EndpointBuilder.receipts(timeout)");
        }
        return delivered;
    }

    @Override
    protected Throwable failureSeenBySender(LinkException why) {
        return Failures.toEndpoint(why);
    }

    @Override
    public String toString() {
        return "Sent #" + Long.toUnsignedString(sequence());
    }
}
