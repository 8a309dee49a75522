package io.gma.client;

import java.util.concurrent.CompletableFuture;

/**
 * A message handed to the send queue.
 *
 * @param sequence the message's sequence number
 * @param acknowledged completes when the peer acknowledges receipt, or fails with an {@link EndpointException}
 *     (QUEUE_FULL if DROP_OLDEST dropped it, NO_ROUTE if the peer cannot be found, SHUTTING_DOWN if the endpoint
 *     closed first)
 */
public record Sent(long sequence, CompletableFuture<Void> acknowledged) {
}
