package io.gma.bench.tokens;

import io.gma.bench.pingpong.PingPongBench;
import io.gma.bench.tunnel.TunnelBench;
import io.gma.security.NoDelaySocketFactory;
import io.gma.security.Security;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.function.Consumer;
import okhttp3.OkHttpClient;

/**
 * Tokens, Ed25519 ({@code gma2}) against HMAC ({@code gma1}), in one JVM run: what a verification costs
 * ({@link VerifyCost}), what that makes per message on the uplink (one HELLO a connection) and per POST (one
 * check a batch), and the secure cross-domain round trip it is meant to keep within 10% of today's: TLS on every
 * hop (registry, both PC servlets, the endpoints) with signed tokens, the same with HMAC tokens, beside the
 * plaintext round trip and one raw POST echoed (the baseline of {@link TunnelBench}). The four take turns,
 * {@link #PASSES} passes each at every size after a warm-up pass of each, so that a change in the machine's speed
 * falls on all of them. Then a stream from east to west over each secure setup, for the messages a POST carries.
 *
 * <pre>java -cp bench/target/gma-benchmarks.jar io.gma.bench.tokens.TokenBench [rounds] [streamMessages]</pre>
 *
 * The suite runs the same as {@code gma bench --only tokens}, writing figures.
 */
public final class TokenBench {
    public static final String RAW_POST = "raw HTTP POST (Jetty 12 + OkHttp)";
    public static final String PLAINTEXT = "GMA cross-domain, plaintext, no tokens";
    public static final String HMAC = "GMA cross-domain, TLS + HMAC gma1 tokens";
    public static final String SIGNED = "GMA cross-domain, TLS + Ed25519 gma2 tokens";
    /** Measured passes of each series at a size, taking turns. */
    public static final int PASSES = 5;
    /** The goal: the secure round trip with signed tokens at most this times the one with HMAC tokens. */
    public static final double GOAL = 1.10;
    /** The size of the stream's messages, bytes. */
    public static final int STREAM_BYTES = 1024;
    /** Measured streams over each secure setup, taking turns, after one each as warm-up. */
    public static final int STREAMS = 3;

    private TokenBench() {
    }

    /** How one series makes n round trips of size bytes: their times, nanoseconds. */
    @FunctionalInterface
    public interface RoundTrips {
        long[] run(int size, int n) throws Exception;
    }

    /** A series of round trips and its name. */
    public record Series(String name, RoundTrips roundTrips) {
    }

    /**
     * The round trips of each series at one size, in the order the series were given.
     *
     * @param all every measured round trip, nanoseconds
     * @param passMedians each pass's median, microseconds
     * @param passCpu each pass's CPU time of the whole JVM (every thread) over its round trips, microseconds a
     *     round trip: what the machine's other work adds to a round trip's wall time does not count here
     */
    public record Alternated(List<String> names, long[][] all, double[][] passMedians, double[][] passCpu) {
        /** The nearest-rank percentile of series i over all its round trips, microseconds. */
        public double pct(int i, double p) {
            return PingPongBench.pct(all[i], p);
        }

        /** The median over the passes of series i's CPU a round trip, microseconds. */
        public double cpu(int i) {
            double[] sorted = passCpu[i].clone();
            Arrays.sort(sorted);
            return sorted[sorted.length / 2];
        }

        /** Pass by pass, series a's median over series b's, sorted. */
        public double[] passRatios(int a, int b) {
            double[] r = new double[passMedians[a].length];
            for (int p = 0; p < r.length; p++) {
                r[p] = passMedians[a][p] / passMedians[b][p];
            }
            Arrays.sort(r);
            return r;
        }
    }

    /**
     * A warm-up pass of n round trips of each series, then {@link #PASSES} passes of n / PASSES each (at least
     * one), the series taking turns and each pass starting one series further on.
     */
    public static Alternated alternated(List<Series> series, int size, int n, Consumer<String> step)
            throws Exception {
        for (Series s : series) {
            step.accept(s.name() + ", " + size + " B, warm-up");
            s.roundTrips().run(size, n);
        }
        int perPass = Math.max(1, n / PASSES);
        long[][] all = new long[series.size()][perPass * PASSES];
        double[][] medians = new double[series.size()][PASSES];
        double[][] cpu = new double[series.size()][PASSES];
        step.accept(size + " B, " + PASSES + " passes in turn");
        for (int p = 0; p < PASSES; p++) {
            for (int k = 0; k < series.size(); k++) {
                int i = (k + p) % series.size();
                long cpuBefore = processCpuNanos();
                long[] rtt = series.get(i).roundTrips().run(size, perPass);
                cpu[i][p] = (processCpuNanos() - cpuBefore) / 1000.0 / perPass;
                System.arraycopy(rtt, 0, all[i], p * perPass, perPass);
                medians[i][p] = PingPongBench.pct(rtt, 0.5);
            }
        }
        return new Alternated(series.stream().map(Series::name).toList(), all, medians, cpu);
    }

    /**
     * The CPU time the live threads of this JVM have used so far, nanoseconds: each thread's own clock, finer
     * than the process's (which Linux counts in 10 ms ticks).
     */
    static long processCpuNanos() {
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        long sum = 0;
        for (long id : threads.getAllThreadIds()) {
            long nanos = threads.getThreadCpuTime(id);
            sum += Math.max(0, nanos); // -1: the thread ended meanwhile
        }
        return sum;
    }

    /**
     * The token work a message costs, in Markdown, nanoseconds: on the uplink (one HELLO a connection, a
     * connection carrying {@code messagesPerConnection}), per POST of a round trip (one message), per POST of a
     * stream (the messages a POST carried, measured), and a POST that shows a renewed token.
     */
    public static String perMessage(List<VerifyCost.Cost> costs, double hmacPerPost, double signedPerPost,
            long messagesPerConnection) {
        double hmacAuth = VerifyCost.find(costs, VerifyCost.HMAC_AUTHENTICATE).nanos();
        double hmacPost = hmacAuth + VerifyCost.find(costs, VerifyCost.HMAC_BEARER).nanos();
        double signedFirst = VerifyCost.find(costs, VerifyCost.SIGNED_AUTHENTICATE_UNCACHED).nanos();
        double signedBearer = VerifyCost.find(costs, VerifyCost.SIGNED_BEARER).nanos();
        double signedPost = VerifyCost.find(costs, VerifyCost.SIGNED_AUTHENTICATE_CACHED).nanos() + signedBearer;
        StringBuilder md = new StringBuilder("| where | messages a check | HMAC gma1, ns a message | Ed25519 gma2, ns a"
                + " message | gma2 − gma1, ns |\n|---|---|---|---|---|\n");
        row(md, String.format(Locale.ROOT, "uplink: HELLO checked once a connection (gma2 uncached: a new"
                + " endpoint's token), the connection carrying %,d messages (the stream below)",
                messagesPerConnection), fmt(messagesPerConnection), hmacAuth / messagesPerConnection,
                signedFirst / messagesPerConnection);
        row(md, "POST of a round trip: the sender's bearer and the receiver's authenticate (gma2 cached), one"
                + " message a batch", "1", hmacPost, signedPost);
        row(md, "POST of the stream below: the same, over the messages a batch carried (measured)", fmt(hmacPerPost)
                + " (gma1), " + fmt(signedPerPost) + " (gma2)", hmacPost / Math.max(1, hmacPerPost),
                signedPost / Math.max(1, signedPerPost));
        row(md, "POST showing a renewed token (a sender renews an audience's every 30 min): gma2 uncached, one"
                + " message a batch", "1", hmacPost, signedFirst + signedBearer);
        return md.toString();
    }

    /** Token work a round trip (two POSTs: a bearer and an authenticate each), microseconds: HMAC, signed. */
    public static double[] perRoundTrip(List<VerifyCost.Cost> costs) {
        double hmac = VerifyCost.find(costs, VerifyCost.HMAC_AUTHENTICATE).nanos()
                + VerifyCost.find(costs, VerifyCost.HMAC_BEARER).nanos();
        double signed = VerifyCost.find(costs, VerifyCost.SIGNED_AUTHENTICATE_CACHED).nanos()
                + VerifyCost.find(costs, VerifyCost.SIGNED_BEARER).nanos();
        return new double[] {2 * hmac / 1000, 2 * signed / 1000};
    }

    private static void row(StringBuilder md, String where, String messages, double hmac, double signed) {
        md.append("| ").append(where).append(" | ").append(messages).append(" | ").append(nanos(hmac)).append(" | ")
                .append(nanos(signed)).append(" | ").append(nanos(signed - hmac)).append(" |\n");
    }

    /** Three significant digits or so, down to thousandths of a nanosecond. */
    static String nanos(double ns) {
        double a = Math.abs(ns);
        return String.format(Locale.ROOT, a >= 100 ? "%,.0f" : a >= 10 ? "%.1f" : a >= 1 ? "%.2f" : a >= 0.1
                ? "%.3f" : a >= 0.001 ? "%.4f" : "%.1e", ns);
    }

    private static String fmt(double v) {
        return String.format(Locale.ROOT, v == Math.rint(v) ? "%,.0f" : "%,.1f", v);
    }

    /**
     * {@link #STREAMS} streams of n messages over each setup, taking turns (the first alternately), after one of
     * each as warm-up.
     */
    public static void streams(CrossDomain hmac, CrossDomain signed, int n, List<CrossDomain.Streamed> hmacStreams,
            List<CrossDomain.Streamed> signedStreams) throws Exception {
        hmac.stream(STREAM_BYTES, n);
        signed.stream(STREAM_BYTES, n);
        for (int p = 0; p < STREAMS; p++) {
            if (p % 2 == 0) {
                hmacStreams.add(hmac.stream(STREAM_BYTES, n));
                signedStreams.add(signed.stream(STREAM_BYTES, n));
            } else {
                signedStreams.add(signed.stream(STREAM_BYTES, n));
                hmacStreams.add(hmac.stream(STREAM_BYTES, n));
            }
        }
    }

    /** The median of {@code passes} streams' seconds over one setup, with its messages a POST. */
    public static CrossDomain.Streamed medianStream(List<CrossDomain.Streamed> passes) {
        List<CrossDomain.Streamed> sorted = new ArrayList<>(passes);
        sorted.sort((a, b) -> Double.compare(a.seconds(), b.seconds()));
        return sorted.get(sorted.size() / 2);
    }

    public static void main(String[] args) throws Exception {
        System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", "warn");
        int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 2_000;
        int streamMessages = args.length > 1 ? Integer.parseInt(args[1]) : 200_000;
        Consumer<String> quiet = what -> { };
        TokenKeys keys = TokenKeys.make();
        OkHttpClient http = new OkHttpClient.Builder().socketFactory(NoDelaySocketFactory.INSTANCE).build();
        try {
            System.out.printf(Locale.ROOT, "tokens, Ed25519 (gma2) against HMAC (gma1); JDK %s, %d cores%n%n",
                    System.getProperty("java.version"), Runtime.getRuntime().availableProcessors());
            // the checks first, alone: the domains' threads are not started yet
            List<VerifyCost.Cost> costs = VerifyCost.measure(keys, new VerifyCost.Settings(1000, 200, PASSES, 600),
                    quiet);
            System.out.println(VerifyCost.table(costs));
            try (TunnelBench.Echo echo = new TunnelBench.Echo();
                    CrossDomain plaintext = CrossDomain.start(identity -> Security.insecure());
                    CrossDomain hmac = CrossDomain.start(keys::hmac);
                    CrossDomain signed = CrossDomain.start(keys::signed)) {
                List<CrossDomain.Streamed> hmacStreams = new ArrayList<>();
                List<CrossDomain.Streamed> signedStreams = new ArrayList<>();
                streams(hmac, signed, streamMessages, hmacStreams, signedStreams);
                CrossDomain.Streamed h = medianStream(hmacStreams);
                CrossDomain.Streamed s = medianStream(signedStreams);
                System.out.println(perMessage(costs, h.messagesPerPost(), s.messagesPerPost(), streamMessages));
                System.out.printf(Locale.ROOT, "stream east to west, %,d messages of %,d B, median of %d: HMAC %,.0f"
                        + " messages/s in %,d POSTs, signed %,.0f in %,d POSTs%n%n", streamMessages, STREAM_BYTES,
                        STREAMS, streamMessages / h.seconds(), h.posts(), streamMessages / s.seconds(), s.posts());
                List<Series> series = List.of(new Series(RAW_POST, (size, n) -> echo.run(http, size, n)),
                        new Series(PLAINTEXT, plaintext::roundTrips), new Series(HMAC, hmac::roundTrips),
                        new Series(SIGNED, signed::roundTrips));
                System.out.println("| bytes | raw POST p50 us | plaintext p50 | HMAC p50 | p99 | signed p50 | p99"
                        + " | signed / HMAC p50 | passes' range | CPU us a round trip: plaintext | HMAC | signed |");
                System.out.println("|---|---|---|---|---|---|---|---|---|---|---|---|");
                for (int size : new int[] {64, 1024, 16384}) {
                    Alternated a = alternated(series, size, rounds, quiet);
                    double[] r = a.passRatios(3, 2);
                    System.out.printf(Locale.ROOT, "| %d | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f | %.3fx"
                            + " | %.3f-%.3f | %.0f | %.0f | %.0f |%n", size, a.pct(0, 0.5), a.pct(1, 0.5),
                            a.pct(2, 0.5), a.pct(2, 0.99), a.pct(3, 0.5), a.pct(3, 0.99), a.pct(3, 0.5) / a.pct(2, 0.5),
                            r[0], r[r.length - 1], a.cpu(1), a.cpu(2), a.cpu(3));
                }
            }
        } finally {
            http.dispatcher().executorService().shutdown();
            http.connectionPool().evictAll();
            keys.delete();
        }
    }
}
