package io.gma.client;

import io.gma.internal.link.LinkCounters;
import java.util.concurrent.atomic.LongAdder;

/**
 * An endpoint's counters, added to from any thread: those of its links and queues ({@link LinkCounters}) and
 * its own; {@link EndpointStats} is their snapshot.
 */
final class Counters {
    /** What its links and send queues count: messages and bytes, waits, drops, refusals, handshakes. */
    final LinkCounters link = new LinkCounters();
    final LongAdder reconnects = new LongAdder();
    final LongAdder duplicates = new LongAdder();
    /** REPLYs and ERRORs from another than the endpoint a request went to: refused, not delivered. */
    final LongAdder refusedAnswers = new LongAdder();

    /** A snapshot, with the queues' depth now. */
    EndpointStats snapshot(long queuedMessages, long queuedBytes) {
        return new EndpointStats(link.messagesOut(), link.bytesOut(), link.messagesIn(), link.bytesIn(),
                queuedMessages, queuedBytes, link.waits(), link.drops(), link.rejected(), reconnects.sum(),
                duplicates.sum(), link.connectionsOverCap(), link.handshakesUnauthorized(), link.handshakesTooLarge(),
                link.handshakesMalformed(), link.handshakesTimedOut(), refusedAnswers.sum());
    }
}
