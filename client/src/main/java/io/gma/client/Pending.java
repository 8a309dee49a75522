package io.gma.client;

import io.gma.internal.link.LinkException;
import io.gma.internal.link.QueuedMessage;
import io.gma.internal.link.SendQueue;

/**
 * What became of a counted message: the {@link Sent} its sender holds, a message of the link module's send
 * queue whose failures its future reports as {@link EndpointException}s.
 */
final class Pending extends QueuedMessage implements Sent {
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
    protected Throwable failureSeenBySender(LinkException why) {
        return Failures.toEndpoint(why);
    }

    @Override
    public String toString() {
        return "Sent #" + Long.toUnsignedString(sequence());
    }
}
