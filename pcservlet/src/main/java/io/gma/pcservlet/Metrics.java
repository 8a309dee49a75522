package io.gma.pcservlet;

import io.gma.wire.PrometheusText;
import java.util.concurrent.atomic.LongAdder;

/** The PC servlet's counters and its histogram of POST latencies; read by the status and metrics pages. */
final class Metrics {
    /** Upper bounds of the latency buckets, in seconds (Prometheus {@code le}). */
    static final double[] BUCKETS = {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10};

    final LongAdder batchesSent = new LongAdder();
    final LongAdder messagesSent = new LongAdder();
    final LongAdder batchesReceived = new LongAdder();
    final LongAdder messagesReceived = new LongAdder();
    final LongAdder throttledSent = new LongAdder();
    final LongAdder throttledReceived = new LongAdder();
    final LongAdder retries = new LongAdder();
    /** POSTs of several in flight answered 409 here: their turn did not come ({@link StreamOrder}). */
    final LongAdder outOfTurn = new LongAdder();
    /** The answers of this PC servlet's own POSTs that sent the batches after them back (go back N). */
    final LongAdder wentBack = new LongAdder();
    /** Batches another domain refused for good (400, 401, 403, 413, 415). */
    final LongAdder refused = new LongAdder();
    /**
     * Batches this PC servlet did not send, its own setting at fault: a plaintext URL under security, or a URL it
     * cannot parse (their senders are told at once).
     */
    final LongAdder unsendable = new LongAdder();
    final LongAdder drops = new LongAdder();
    final LongAdder delivered = new LongAdder();
    final LongAdder relayed = new LongAdder();
    /** Messages read back from the spool older than maxAge, sent back to their senders as ERROR TIMEOUT. */
    final LongAdder expired = new LongAdder();
    /**
     * Batch bodies on the tunnel, as they went on the wire (compressed or not) and as they are plain, sent (POSTs,
     * answers to polls) and received (POSTs, polled batches).
     */
    final LongAdder wireBytesSent = new LongAdder();
    final LongAdder plainBytesSent = new LongAdder();
    final LongAdder wireBytesReceived = new LongAdder();
    final LongAdder plainBytesReceived = new LongAdder();
    /** Batches that went compressed, sent and received. */
    final LongAdder compressedSent = new LongAdder();
    final LongAdder compressedReceived = new LongAdder();
    /** Batches sent plain to a peer that reads zstd: too small, compressing did not pay, or not tried after misses. */
    final LongAdder uncompressedSent = new LongAdder();
    /** Nanoseconds spent compressing batches to send, and judging those that went plain (samples, misses). */
    final LongAdder compressNanos = new LongAdder();
    /** Round trips of POSTs to other domains. */
    private final PrometheusText.Histogram postSeconds = new PrometheusText.Histogram(BUCKETS);

    /** A batch body sent: {@code wire} bytes on the wire, {@code plain} before compression. */
    void sent(long wire, long plain, boolean compressed) {
        wireBytesSent.add(wire);
        plainBytesSent.add(plain);
        if (compressed) {
            compressedSent.increment();
        }
    }

    /** A batch body received: {@code wire} bytes on the wire, {@code plain} once decompressed. */
    void received(long wire, long plain, boolean compressed) {
        wireBytesReceived.add(wire);
        plainBytesReceived.add(plain);
        if (compressed) {
            compressedReceived.increment();
        }
    }

    /** Records one POST's round trip. */
    void postTook(long nanos) {
        postSeconds.record(nanos);
    }

    /** The histogram in Prometheus text format, cumulative as {@code le} buckets are. */
    void histogram(StringBuilder out, String name, String help) {
        postSeconds.write(out, name, help);
    }
}
