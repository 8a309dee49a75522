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
 * @param waits sends that waited for room (BLOCK)
 * @param drops data messages dropped (DROP_OLDEST)
 * @param rejected sends that failed with QUEUE_FULL
 * @param reconnects links reopened after a failure
 * @param duplicates messages dropped as already delivered
 */
public record EndpointStats(long messagesOut, long bytesOut, long messagesIn, long bytesIn, long queuedMessages,
        long queuedBytes, long waits, long drops, long rejected, long reconnects, long duplicates) {
}
