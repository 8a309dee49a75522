package io.gma.client;

import java.util.concurrent.atomic.LongAdder;

/** The endpoint's counters, added to from any thread; {@link EndpointStats} is their snapshot. */
final class Counters {
    final LongAdder messagesOut = new LongAdder();
    final LongAdder bytesOut = new LongAdder();
    final LongAdder messagesIn = new LongAdder();
    final LongAdder bytesIn = new LongAdder();
    final LongAdder waits = new LongAdder();
    final LongAdder drops = new LongAdder();
    final LongAdder rejected = new LongAdder();
    final LongAdder reconnects = new LongAdder();
    final LongAdder duplicates = new LongAdder();
    /** Accepted connections closed at once: a cap on unauthenticated connections was reached. */
    final LongAdder connectionsOverCap = new LongAdder();
    /** Accepted links closed in their handshake, by why. */
    final LongAdder handshakesUnauthorized = new LongAdder();
    final LongAdder handshakesTooLarge = new LongAdder();
    final LongAdder handshakesMalformed = new LongAdder();
    final LongAdder handshakesTimedOut = new LongAdder();
    /** REPLYs and ERRORs from another than the endpoint a request went to: refused, not delivered. */
    final LongAdder refusedAnswers = new LongAdder();

    /** A snapshot, with the queues' depth now. */
    EndpointStats snapshot(long queuedMessages, long queuedBytes) {
        return new EndpointStats(messagesOut.sum(), bytesOut.sum(), messagesIn.sum(), bytesIn.sum(), queuedMessages,
                queuedBytes, waits.sum(), drops.sum(), rejected.sum(), reconnects.sum(), duplicates.sum(),
                connectionsOverCap.sum(), handshakesUnauthorized.sum(), handshakesTooLarge.sum(),
                handshakesMalformed.sum(), handshakesTimedOut.sum(), refusedAnswers.sum());
    }
}
