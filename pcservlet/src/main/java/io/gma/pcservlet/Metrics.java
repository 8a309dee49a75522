package io.gma.pcservlet;

import java.util.Locale;
import java.util.concurrent.atomic.AtomicLongArray;
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
    final LongAdder refused = new LongAdder();
    final LongAdder drops = new LongAdder();
    final LongAdder delivered = new LongAdder();
    final LongAdder relayed = new LongAdder();
    /** Messages read back from the spool older than maxAge, sent back to their senders as ERROR TIMEOUT. */
    final LongAdder expired = new LongAdder();
    private final AtomicLongArray latencyCounts = new AtomicLongArray(BUCKETS.length + 1);
    private final LongAdder latencyNanos = new LongAdder();

    /** Records one POST's round trip. */
    void postTook(long nanos) {
        double seconds = nanos / 1e9;
        int i = 0;
        while (i < BUCKETS.length && seconds > BUCKETS[i]) {
            i++;
        }
        latencyCounts.incrementAndGet(i);
        latencyNanos.add(nanos);
    }

    /** The histogram in Prometheus text format, cumulative as {@code le} buckets are. */
    void histogram(StringBuilder out, String name, String help) {
        out.append("# HELP ").append(name).append(' ').append(help).append('\n');
        out.append("# TYPE ").append(name).append(" histogram\n");
        long cumulative = 0;
        for (int i = 0; i < BUCKETS.length; i++) {
            cumulative += latencyCounts.get(i);
            out.append(name).append("_bucket{le=\"").append(format(BUCKETS[i])).append("\"} ").append(cumulative)
                    .append('\n');
        }
        cumulative += latencyCounts.get(BUCKETS.length);
        out.append(name).append("_bucket{le=\"+Inf\"} ").append(cumulative).append('\n');
        out.append(name).append("_sum ").append(format(latencyNanos.sum() / 1e9)).append('\n');
        out.append(name).append("_count ").append(cumulative).append('\n');
    }

    static void metric(StringBuilder out, String name, String type, String help) {
        out.append("# HELP ").append(name).append(' ').append(help).append('\n');
        out.append("# TYPE ").append(name).append(' ').append(type).append('\n');
    }

    static void sample(StringBuilder out, String name, String labels, double value) {
        out.append(name);
        if (labels != null) {
            out.append('{').append(labels).append('}');
        }
        out.append(' ').append(format(value)).append('\n');
    }

    /** A label value escaped as the text format wants (backslash, quote, newline). */
    static String label(String key, String value) {
        return key + "=\"" + value.replace("\\", "\\\\").replace("\"", "\\\"").replace("\n", "\\n") + "\"";
    }

    private static String format(double v) {
        return v == Math.rint(v) && Math.abs(v) < 1e15 ? Long.toString((long) v) : String.format(Locale.ROOT, "%s", v);
    }
}
