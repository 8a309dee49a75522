package io.gma.internal.link;

import java.util.concurrent.atomic.LongAdder;

/**
 * What the links and send queues of one owner (an endpoint, or a PC servlet's uplink side) count, added to
 * from any thread; the client reads the sums for its {@code EndpointStats}.
 */
public final class LinkCounters {
    final LongAdder messagesOut = new LongAdder();
    final LongAdder bytesOut = new LongAdder();
    final LongAdder messagesIn = new LongAdder();
    final LongAdder bytesIn = new LongAdder();
    final LongAdder waits = new LongAdder();
    final LongAdder drops = new LongAdder();
    final LongAdder rejected = new LongAdder();
    final LongAdder connectionsOverCap = new LongAdder();
    final LongAdder handshakesUnauthorized = new LongAdder();
    final LongAdder handshakesTooLarge = new LongAdder();
    final LongAdder handshakesMalformed = new LongAdder();
    final LongAdder handshakesTimedOut = new LongAdder();
    final LongAdder linksOverLimit = new LongAdder();

    /** Counted messages written to peers, resends included. */
    public long messagesOut() {
        return messagesOut.sum();
    }

    /** Bytes written to peers. */
    public long bytesOut() {
        return bytesOut.sum();
    }

    /** Messages read from peers. */
    public long messagesIn() {
        return messagesIn.sum();
    }

    /** Bytes read from peers. */
    public long bytesIn() {
        return bytesIn.sum();
    }

    /** Sends that waited for room (BLOCK). */
    public long waits() {
        return waits.sum();
    }

    /** Data messages dropped (DROP_OLDEST). */
    public long drops() {
        return drops.sum();
    }

    /** Sends that failed with QUEUE_FULL. */
    public long rejected() {
        return rejected.sum();
    }

    /** Accepted connections closed at once: a cap on unauthenticated connections was reached. */
    public long connectionsOverCap() {
        return connectionsOverCap.sum();
    }

    /** Accepted links refused in their handshake with UNAUTHORIZED or FORBIDDEN. */
    public long handshakesUnauthorized() {
        return handshakesUnauthorized.sum();
    }

    /** Accepted links refused in their handshake for data over the handshake's limit. */
    public long handshakesTooLarge() {
        return handshakesTooLarge.sum();
    }

    /** Accepted links refused in their handshake for bytes that are not GMA, or not HELLO first. */
    public long handshakesMalformed() {
        return handshakesMalformed.sum();
    }

    /** Accepted links closed because their handshake was not over in time. */
    public long handshakesTimedOut() {
        return handshakesTimedOut.sum();
    }

    /** Links refused, accepted or outbound, because the owner had its most open ({@link LinkLimit}). */
    public long linksOverLimit() {
        return linksOverLimit.sum();
    }
}
