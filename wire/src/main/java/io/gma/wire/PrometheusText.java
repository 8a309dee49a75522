package io.gma.wire;

import java.math.BigDecimal;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.LongAdder;

/**
 * The Prometheus text exposition format, version 0.0.4, as every {@code GET /metrics} of GMA writes it (the
 * registry's, a PC servlet's, an endpoint's): each metric's {@code # HELP} and {@code # TYPE} lines, then its
 * samples, one a line, {@code name{key="value",...} value}; a histogram as cumulative
 * {@code name_bucket{le="..."}} counts ending with {@code le="+Inf"}, then {@code name_sum} and
 * {@code name_count}.
 *
 * <pre>
 * # HELP gma_registry_queries_total Queries answered with rows
 * # TYPE gma_registry_queries_total counter
 * gma_registry_queries_total 12
 * </pre>
 *
 * <p>It sits in wire, as {@link Threads} does, although it has nothing to do with the wire format: wire is the one
 * module that the registry, the client and the PC servlet all depend on, so one writer serves the three, and none
 * of them takes a metrics library for a few dozen lines of text.
 */
public final class PrometheusText {
    /** The content type of a {@code GET /metrics} answer. */
    public static final String CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

    private PrometheusText() {
    }

    /** A metric's {@code # HELP} and {@code # TYPE} lines; its samples follow. */
    public static void metric(StringBuilder out, String name, String type, String help) {
        out.append("# HELP ").append(name).append(' ').append(help).append('\n');
        out.append("# TYPE ").append(name).append(' ').append(type).append('\n');
    }

    /**
     * One sample.
     *
     * @param labels {@link #label}s joined with commas, or null for none
     */
    public static void sample(StringBuilder out, String name, String labels, double value) {
        out.append(name);
        if (labels != null) {
            out.append('{').append(labels).append('}');
        }
        out.append(' ').append(format(value)).append('\n');
    }

    /** A counter of one sample: its HELP and TYPE lines, then the sample ({@code labels} may be null). */
    public static void counter(StringBuilder out, String name, String help, String labels, double value) {
        metric(out, name, "counter", help);
        sample(out, name, labels, value);
    }

    /** A gauge of one sample, as {@link #counter}. */
    public static void gauge(StringBuilder out, String name, String help, String labels, double value) {
        metric(out, name, "gauge", help);
        sample(out, name, labels, value);
    }

    /** {@code key="value"}, the value escaped as the format wants (backslash, quote, newline). */
    public static String label(String key, String value) {
        return key + "=\"" + value.replace("\\", "\\\\").replace("\"", "\\\"").replace("\n", "\\n") + "\"";
    }

    /** A whole number without a decimal point; any other without an exponent ({@code 0.0001}, not 1.0E-4). */
    static String format(double v) {
        if (v == Math.rint(v) && Math.abs(v) < 1e15) {
            return Long.toString((long) v);
        }
        if (!Double.isFinite(v)) {
            return Double.isNaN(v) ? "NaN" : v > 0 ? "+Inf" : "-Inf";
        }
        return BigDecimal.valueOf(v).stripTrailingZeros().toPlainString();
    }

    /**
     * A histogram of durations, in seconds, with fixed buckets: {@link #record} from any thread, {@link #write}
     * for a page. Lock-free; a page written while durations are recorded may count one in {@code _count} whose
     * time is not in {@code _sum} yet.
     */
    public static final class Histogram {
        private final double[] bounds;
        /** One count a bucket, not cumulative, and one past the last bound (+Inf). */
        private final AtomicLongArray counts;
        private final LongAdder nanos = new LongAdder();

        /**
         * @param bounds the buckets' upper bounds in seconds ({@code le}), positive and increasing; +Inf is added
         * @throws IllegalArgumentException if none is given, or they are not positive and increasing
         */
        public Histogram(double... bounds) {
            if (bounds.length == 0) {
                throw new IllegalArgumentException("a histogram needs at least one bucket bound");
            }
            for (int i = 0; i < bounds.length; i++) {
                if (!(bounds[i] > (i == 0 ? 0 : bounds[i - 1])) || Double.isInfinite(bounds[i])) {
                    throw new IllegalArgumentException("bucket bound " + bounds[i] + " at " + i + " is not finite,"
                            + " positive and above the one before");
                }
            }
            this.bounds = bounds.clone();
            this.counts = new AtomicLongArray(bounds.length + 1);
        }

        /** Counts one duration, in the first bucket whose bound it does not pass. */
        public void record(long durationNanos) {
            double seconds = durationNanos / 1e9;
            int i = 0;
            while (i < bounds.length && seconds > bounds[i]) {
                i++;
            }
            counts.incrementAndGet(i);
            nanos.add(durationNanos);
        }

        /** The histogram as a metric named {@code name}, its buckets cumulative as {@code le} buckets are. */
        public void write(StringBuilder out, String name, String help) {
            metric(out, name, "histogram", help);
            long cumulative = 0;
            for (int i = 0; i < bounds.length; i++) {
                cumulative += counts.get(i);
                sample(out, name + "_bucket", label("le", format(bounds[i])), cumulative);
            }
            cumulative += counts.get(bounds.length);
            sample(out, name + "_bucket", label("le", "+Inf"), cumulative);
            sample(out, name + "_sum", null, nanos.sum() / 1e9);
            sample(out, name + "_count", null, cumulative);
        }
    }
}
