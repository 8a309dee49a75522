package io.gma.client;

import java.util.concurrent.CompletableFuture;

/** A message handed to the send queue: its sequence, and a future of the peer's acknowledgement. */
public sealed interface Sent permits Pending {
    /** The message's sequence number; 0 for a message refused before it was queued. */
    long sequence();

    /**
     * Completes when the peer acknowledges receipt, or fails with an {@link EndpointException} (QUEUE_FULL if
     * DROP_OLDEST dropped it, NO_ROUTE if the peer cannot be found, SHUTTING_DOWN if the endpoint closed first:
     * with an outbox, the message then stays in it for the next start).
     * Made on the first call, the same future after: a message nobody asks about costs no future.
     */
    CompletableFuture<Void> acknowledged();
}
