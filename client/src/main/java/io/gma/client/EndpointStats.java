package io.gma.client;

/**
 * Counters of one endpoint since it started; a snapshot.
 *
 * @param messagesOut counted messages written to peers (resends included)
 * @param bytesOut bytes written to peers
 * @param messagesIn messages read from peers
 * @param bytesIn bytes read from peers
 * @param queuedMessages messages in all send queues now (unwritten plus unacknowledged)
 * @param queuedBytes bytes in all send queues now
 * @param waits sends that waited for room (BLOCK): in a send queue, among the receipts awaited, or in the outbox
 * @param drops data messages dropped (DROP_OLDEST)
 * @param rejected sends that failed with QUEUE_FULL: a send queue full, too many receipts awaited, or the outbox
 *     full
 * @param reconnects links reopened after a failure
 * @param duplicates messages dropped as already delivered, and REPLYs to nothing awaited (a second receipt)
 * @param connectionsOverCap accepted connections closed at once, before any handshake, because a cap on
 *     connections not yet authenticated was reached (system properties {@code gma.maxUnauthenticated},
 *     {@code gma.maxUnauthenticatedPerAddress}; docs/security.md)
 * @param handshakesUnauthorized accepted links refused in their handshake with UNAUTHORIZED or FORBIDDEN:
 *     credentials or rules, a failed TLS handshake, plaintext to a TLS port
 * @param handshakesTooLarge accepted links refused in their handshake because a message announced more data
 *     than the handshake's limit (4096 bytes)
 * @param handshakesMalformed accepted links refused in their handshake for bytes that are not GMA, or not
 *     HELLO first
 * @param handshakesTimedOut accepted links closed because their handshake (TLS and HELLO) was not over
 *     within 5 s
 * @param linksOverLimit links refused because this endpoint had {@link EndpointBuilder#maxLinks} open: a peer's,
 *     answered {@code ERROR QUEUE_FULL} at HELLO, or one it opened, closed as it opened
 * @param refusedAnswers REPLYs and ERRORs refused because they came from another than the endpoint the request
 *     went to (or, for an ERROR, this endpoint's own PC servlet): forged answers, not delivered; receipts
 *     likewise
 * @param receiptsAwaited messages whose receipt is awaited now ({@link EndpointBuilder#receipts}): at most
 *     {@link EndpointBuilder#maxAwaitedReceipts}
 * @param receiptsTimedOut messages whose receipt did not come within the receipts' timeout
 * @param receiptsGivenUp messages whose receipt was no longer awaited under DROP_OLDEST, to make room for newer
 *     ones (their {@link Sent#delivered()} failed with QUEUE_FULL; the messages themselves went on)
 * @param outboxMessages messages in the outbox now ({@link EndpointBuilder#outbox}): sent and not yet acknowledged
 *     by the first hop; 0 without an outbox
 * @param outboxBytes the outbox's files on disk now (acknowledged messages included until their segment goes)
 * @param outboxRecovered messages the outbox held from an earlier run when this one started, queued again
 * @param outboxDamaged damaged runs of bytes (a torn or corrupt record, told by its CRC32C) and records that were
 *     not messages, skipped when the outbox was read at start
 */
public record EndpointStats(long messagesOut, long bytesOut, long messagesIn, long bytesIn, long queuedMessages,
        long queuedBytes, long waits, long drops, long rejected, long reconnects, long duplicates,
        long connectionsOverCap, long handshakesUnauthorized, long handshakesTooLarge, long handshakesMalformed,
        long handshakesTimedOut, long linksOverLimit, long refusedAnswers, long receiptsAwaited,
        long receiptsTimedOut, long receiptsGivenUp, long outboxMessages, long outboxBytes, long outboxRecovered,
        long outboxDamaged) {
}
