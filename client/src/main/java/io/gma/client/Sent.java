package io.gma.client;

import java.util.concurrent.CompletableFuture;

/**
 * A message handed to the send queue: its sequence, a future of the first hop's acknowledgement and, when the
 * endpoint asks for receipts, a future of the destination's.
 */
public sealed interface Sent permits Pending {
    /** The message's sequence number; 0 for a message refused before it was queued. */
    long sequence();

    /**
     * Completes when the peer acknowledges receipt, or fails with an {@link EndpointException} (QUEUE_FULL if
     * DROP_OLDEST dropped it, NO_ROUTE if the peer cannot be found, SHUTTING_DOWN if the endpoint closed first:
     * with an outbox, the message then stays in it for the next start). The peer is the first hop: the
     * destination on a direct link, this endpoint's PC servlet for another domain.
     * Made on the first call, the same future after: a message nobody asks about costs no future.
     */
    CompletableFuture<Void> acknowledged();

    /**
     * Completes when the destination endpoint took the message, across domains too: its handler returned from
     * {@code onMessage} for it (for a SUBSCRIBE, the producer added the subscriber), and the receipt it then
     * sends came back. Fails with an {@link EndpointException}: what {@link #acknowledged()} fails with; the
     * code of an ERROR that came back instead (NO_ROUTE from a PC servlet that found no such endpoint, INTERNAL
     * when the destination's handler threw or it has none, QUEUE_FULL when its executor refused the message, or
     * when it is in another domain and full, and this endpoint's PC servlet refused the message for it);
     * TIMEOUT when no receipt came within {@link EndpointBuilder#receipts}' timeout, which is what a destination
     * that does not send receipts gives (the message may then have arrived all the same); QUEUE_FULL when
     * DROP_OLDEST gave up waiting for it to make room for newer ones; SHUTTING_DOWN when this endpoint closed
     * first. The same future on every call.
     *
     * @throws IllegalStateException if the endpoint was built without {@link EndpointBuilder#receipts}: its
     *     messages ask for no receipt
     */
    CompletableFuture<Void> delivered();
}
