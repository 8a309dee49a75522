package io.gma.pcservlet;

import io.gma.security.HttpProxy;
import io.gma.security.Security;
import java.time.Duration;

/**
 * What a PC servlet is told; {@link PcServer.Builder} checks each value.
 *
 * @param domain the domain it serves
 * @param registry the registry's base URL
 * @param host the address both listeners bind
 * @param httpPort the HTTP port (0: ephemeral)
 * @param uplinkPort the uplink port (0: ephemeral)
 * @param publicUrl the URL registered for the domain (null: http://host:httpPort)
 * @param via for an outbound-only domain, the domain whose PC servlet relays for it (null: none)
 * @param maxQueuedBytes each destination domain's queue, and each relayed domain's
 * @param maxQueuedMessages the same, in messages
 * @param maxTotalBytes all those queues together
 * @param maxEndpointBytes each endpoint's queue at the gateway
 * @param maxBatchBytes the largest POST body sent or accepted
 * @param maxBatchesInFlight the most batches posted to one domain at once, waiting for their answers
 * @param maxLinks the most uplinks open at once
 * @param ioThreads how many event loops serve the uplinks
 * @param linger how long a forwarder waits for more messages before it posts a batch
 * @param retryAfter what a 429 or 503 from this PC servlet asks the sender to wait
 * @param drainTimeout how long closing waits for the queues to empty
 * @param lease the domain's registration lease
 * @param idleQueue how long a destination's queue and forwarder live without traffic
 * @param security TLS, credentials and rules for every hop: HTTPS, uplinks, the registry
 * @param spool where what it takes is kept until the next hop has it, or null: in memory only
 * @param registryGrace how long the registry's "not registered" is not final after it restarted, or null: its
 *     default lease
 * @param proxy the HTTP proxy its calls to other PC servlets and the registry go through, or null: direct
 * @param compression whether batches go compressed where the peer reads zstd and it pays (docs/pcservlet.md,
 *     "Compression")
 */
record Settings(String domain, String registry, String host, int httpPort, int uplinkPort, String publicUrl,
        String via, long maxQueuedBytes, int maxQueuedMessages, long maxTotalBytes, long maxEndpointBytes,
        int maxBatchBytes, int maxBatchesInFlight, int maxLinks, int ioThreads, Duration linger, Duration retryAfter,
        Duration drainTimeout, Duration lease, Duration idleQueue, Security security, SpoolOptions spool,
        Duration registryGrace, HttpProxy proxy, Compression.Mode compression) {
}
