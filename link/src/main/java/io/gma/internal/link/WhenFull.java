package io.gma.internal.link;

/**
 * What {@link SendQueue#offerData} does when the queue is full: the client's {@code FullQueuePolicy}, as the
 * queue applies it (the client may turn BLOCK into FAIL on an event loop's thread, which must not wait).
 */
public enum WhenFull {
    /** Wait for room up to the time given, then fail with QUEUE_FULL; waits are counted. */
    BLOCK,
    /** Fail at once with QUEUE_FULL. */
    FAIL,
    /** Drop the oldest data not yet written, or else the new message; drops are counted. */
    DROP_OLDEST
}
