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
    final LongAdder refused = new LongAdder();
    final LongAdder drops = new LongAdder();
    final LongAdder delivered = new LongAdder();
    final LongAdder relayed = new LongAdder();
    /** Messages read back from the spool older than maxAge, sent back to their senders as ERROR TIMEOUT. */
    final LongAdder expired = new LongAdder();
    /** Round trips of POSTs to other domains. */
    private final PrometheusText.Histogram postSeconds = new PrometheusText.Histogram(BUCKETS);

    /** Records one POST's round trip. */
    void postTook(long nanos) {
        postSeconds.record(nanos);
    }

    /** The histogram in Prometheus text format, cumulative as {@code le} buckets are. */
    void histogram(StringBuilder out, String name, String help) {
        postSeconds.write(out, name, help);
    }
}
