package io.gma.client;

/**
 * What a send does when the peer's send queue is full (maxQueuedBytes or maxQueuedMessages reached, counting
 * messages not yet written and messages written but not yet acknowledged).
 */
public enum FullQueuePolicy {
    /** Wait for room up to the builder's blockTimeout, then fail with QUEUE_FULL. Waits are counted. */
    BLOCK,
    /** Fail at once with QUEUE_FULL. */
    FAIL,
    /**
     * Never fail the send: drop the oldest data messages not yet written to make room, or, when everything
     * queued is already written and awaits its ACK, drop the new message. A dropped message's future fails
     * with QUEUE_FULL; drops are counted.
     */
    DROP_OLDEST
}
