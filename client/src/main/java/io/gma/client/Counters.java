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
    /** Sends that waited for room among the receipts awaited (BLOCK); added to the queues' waits. */
    final LongAdder receiptWaits = new LongAdder();
    /** Sends that failed with QUEUE_FULL because too many receipts were awaited; added to the queues'. */
    final LongAdder receiptRejections = new LongAdder();
    /** Receipts that did not come within their timeout. */
    final LongAdder receiptsTimedOut = new LongAdder();
    /** Receipts no longer awaited under DROP_OLDEST, to make room for newer ones. */
    final LongAdder receiptsGivenUp = new LongAdder();
    /** Sends that waited for a destination its PC servlet found full (BLOCK); added to the queues' waits. */
    final LongAdder fullDestinationWaits = new LongAdder();
    /** Sends that failed with QUEUE_FULL for a destination its PC servlet found full; added to the queues'. */
    final LongAdder fullDestinationRejected = new LongAdder();
    /** Sends that waited for room in a full outbox (BLOCK), as {@code waits} counts a full queue's. */
    final LongAdder outboxWaits = new LongAdder();
    /** Sends refused with QUEUE_FULL because the outbox was full, as {@code rejected} counts a full queue's. */
    final LongAdder outboxRejected = new LongAdder();

    /**
     * A snapshot, with the queues' depth and the receipts awaited now.
     *
     * @param outbox the outbox's fill and counts now: live records, bytes on disk, recovered at start, damaged
     *     (all 0 without an outbox)
     */
    EndpointStats snapshot(long queuedMessages, long queuedBytes, long receiptsAwaited, long[] outbox) {
        return new EndpointStats(link.messagesOut(), link.bytesOut(), link.messagesIn(), link.bytesIn(),
                queuedMessages, queuedBytes, link.waits() + receiptWaits.sum() + outboxWaits.sum()
                + fullDestinationWaits.sum(), link.drops(),
                link.rejected() + receiptRejections.sum() + outboxRejected.sum()
                + fullDestinationRejected.sum(), reconnects.sum(), duplicates.sum(),
                link.connectionsOverCap(), link.handshakesUnauthorized(), link.handshakesTooLarge(),
                link.handshakesMalformed(), link.handshakesTimedOut(), link.linksOverLimit(), refusedAnswers.sum(),
                receiptsAwaited, receiptsTimedOut.sum(), receiptsGivenUp.sum(), outbox[0], outbox[1], outbox[2],
                outbox[3]);
    }
}
