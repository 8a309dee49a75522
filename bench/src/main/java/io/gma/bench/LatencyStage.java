package io.gma.bench;

import io.gma.bench.tunnel.TunnelBench;
import io.gma.client.Producer;
import io.gma.examples.Ping;
import io.gma.examples.Pong;
import io.gma.pcservlet.PcServer;
import io.gma.security.NoDelaySocketFactory;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.locks.LockSupport;
import okhttp3.OkHttpClient;
import org.HdrHistogram.Histogram;

/**
 * Round trips as issue 26's method asks: back to back, as the other figures measure them, and at fixed offered
 * rates, each timed from when it was scheduled rather than from when it went out, so that a stall counts for
 * every round trip it held up (Gil Tene's correction of coordinated omission). Latencies go into an
 * HdrHistogram (3 significant digits); the figures show p50, p90, p99, p99.9 and p99.99, as HdrHistogram's
 * percentile plots do (x is 1/(1-p): 2 is the median, 1,000 is p99.9).
 *
 * <p>Two figures, 64 B each: in one domain (raw sockets beside GMA's direct request/reply) and across domains (a
 * raw POST echoed by Jetty to OkHttp beside GMA through two PC servlets in memory). The offered rates are 1,000
 * round trips a second and half of what the series did back to back.
 */
final class LatencyStage {
    static final String DIRECT = "latency-direct";
    static final String CROSS = "latency-cross-domain";
    static final int BYTES = 64;
    /** The fixed rate every series is offered, round trips a second. */
    static final int FIXED_RATE = 1_000;
    /** The percentiles shown, and their x, 1/(1-p). */
    static final double[] PERCENTILES = {50, 90, 99, 99.9, 99.99};
    private static final long HIGHEST_NANOS = 60_000_000_000L;
    /** Parks until this close to a round trip's time, then spins: parking overshoots by tens of microseconds. */
    private static final long SPIN_NANOS = 100_000;

    private LatencyStage() {
    }

    /** A series' name: back to back, or at an offered rate. */
    static String series(String peer, Pace pace) {
        return peer + pace.label;
    }

    /** How round trips are offered. */
    enum Pace {
        BACK_TO_BACK(", back to back"),
        FIXED(String.format(Locale.ROOT, ", %,d/s offered", FIXED_RATE)),
        HALF(", half its back-to-back rate offered");

        final String label;

        Pace(String label) {
            this.label = label;
        }
    }

    static List<Figure> run(Plan plan, Peers peers, Progress progress) throws Exception {
        Figure direct = figure(DIRECT, "Round trip of 64 B in one domain, back to back and at fixed rates"
                + " (corrected for coordinated omission)");
        Figure cross = figure(CROSS, "Round trip of 64 B across domains, back to back and at fixed rates"
                + " (corrected for coordinated omission)");
        progress.stage("latency: percentiles at fixed rates", 4 * 3);
        long passNanos = (long) (seconds(plan) * 1e9);
        OkHttpClient http = new OkHttpClient.Builder().socketFactory(NoDelaySocketFactory.INSTANCE).build();
        String registry = peers.registry.url();
        try (PcServer east = PcServer.builder("lat-east", registry).compression("off").start();
                PcServer west = PcServer.builder("lat-west", registry).compression("off").start();
                Producer pong = Pong.start(registry, east.domain(), "pong", east.uplink());
                Ping ping = Ping.start(registry, west.domain(), west.uplink());
                TunnelBench.Echo echo = new TunnelBench.Echo()) {
            measure(direct, peers.raw(), passNanos, progress);
            measure(direct, peers.direct(Peers.GMA_DIRECT, true), passNanos, progress);
            measure(cross, new Peer(Peers.RAW_POST, (size, n) -> echo.run(http, size, n), null), passNanos, progress);
            measure(cross, new Peer(Peers.GMA_CROSS, (size, n) -> ping.run(pong.name(), n, size, true), null),
                    passNanos, progress);
        } finally {
            http.dispatcher().executorService().shutdown();
            http.connectionPool().evictAll();
        }
        for (Figure f : List.of(direct, cross)) {
            f.notes.add("- Each round trip is timed from when it was due, so a stall counts for every round trip it"
                    + " delayed; back to back, from when it went out (the next one is due when one ends).");
        }
        direct.notes.add(aeron(direct));
        progress.finish();
        return List.of(direct, cross);
    }

    /**
     * How far GMA direct is from Aeron's published loopback round trip (p50 4 µs, p99 8 µs, busy-spinning on
     * dedicated cores), beside how far raw sockets are: the part of the distance that is the kernel's and the
     * threads' wake-ups, which both pay.
     */
    private static String aeron(Figure direct) {
        double gma50 = direct.y(series(Peers.GMA_DIRECT, Pace.BACK_TO_BACK), 2).orElse(Double.NaN);
        double gma99 = direct.y(series(Peers.GMA_DIRECT, Pace.BACK_TO_BACK), 100).orElse(Double.NaN);
        double raw50 = direct.y(series(Peers.RAW, Pace.BACK_TO_BACK), 2).orElse(Double.NaN);
        double raw99 = direct.y(series(Peers.RAW, Pace.BACK_TO_BACK), 100).orElse(Double.NaN);
        return String.format(Locale.ROOT, "- Aeron's published loopback round trip (busy-spinning on dedicated"
                + " cores) is p50 4 µs, p99 8 µs. Back to back here, GMA direct is p50 %.1f µs (%.1fx Aeron's), p99"
                + " %.1f µs (%.1fx); raw sockets p50 %.1f µs (%.1fx), p99 %.1f µs (%.1fx). Raw sockets block in the"
                + " kernel and wake a thread at each end as GMA's event loops do: what they are from Aeron is the"
                + " kernel's and the wake-ups' share, the rest is GMA's own.", gma50, gma50 / 4, gma99, gma99 / 8,
                raw50, raw50 / 4, raw99, raw99 / 8);
    }

    /** Seconds of each fixed-rate pass. */
    static double seconds(Plan plan) {
        return plan.is(Plan.FULL) ? 5 : plan.is(Plan.QUICK) ? 2 : 0.2;
    }

    private static Figure figure(String id, String title) {
        return new Figure(id, title, "percentile, as 1/(1-p): 2 is p50, 100 p99, 1,000 p99.9", "round trip (µs)",
                true, true, "one_over_1_minus_p", "us", "percentile", "round_trips");
    }

    /** Back to back, then at the fixed rate and at half the back-to-back rate: three series of the figure. */
    private static void measure(Figure figure, Peer peer, long passNanos, Progress progress) throws Exception {
        progress.step(series(peer.name(), Pace.BACK_TO_BACK));
        Histogram warm = backToBack(peer, passNanos);
        Histogram b2b = backToBack(peer, passNanos);
        add(figure, series(peer.name(), Pace.BACK_TO_BACK), b2b);
        double b2bRate = b2b.getTotalCount() / (passNanos / 1e9);
        int half = (int) Math.max(1, Math.round(b2bRate / 2 / 100) * 100);
        progress.step(series(peer.name(), Pace.FIXED));
        add(figure, series(peer.name(), Pace.FIXED), atRate(peer, FIXED_RATE, passNanos));
        progress.step(series(peer.name(), Pace.HALF));
        add(figure, series(peer.name(), Pace.HALF), atRate(peer, half, passNanos));
        figure.notes.add(String.format(Locale.ROOT, "- %s: %,.0f round trips a second back to back (warm-up %,d,"
                + " measured %,d); offered %,d/s and %,d/s.", peer.name(), b2bRate, warm.getTotalCount(),
                b2b.getTotalCount(), FIXED_RATE, half));
    }

    private static void add(Figure figure, String series, Histogram h) {
        for (double p : PERCENTILES) {
            figure.add(series, 100 / (100 - p), h.getValueAtPercentile(p) / 1_000.0, p, h.getTotalCount());
        }
    }

    /** Round trips one after another for about {@code nanos}. */
    private static Histogram backToBack(Peer peer, long nanos) throws Exception {
        Histogram h = new Histogram(HIGHEST_NANOS, 3);
        long end = System.nanoTime() + nanos;
        while (System.nanoTime() < end) {
            for (long rtt : peer.roundTrips().run(BYTES, 100)) {
                h.recordValue(Math.min(rtt, HIGHEST_NANOS));
            }
        }
        return h;
    }

    /**
     * Round trips due every 1/rate seconds for {@code nanos}, each timed from when it was due: one that goes out
     * late, behind a slow one, counts its wait.
     */
    static Histogram atRate(Peer peer, int rate, long nanos) throws Exception {
        Histogram h = new Histogram(HIGHEST_NANOS, 3);
        double interval = 1e9 / rate;
        long count = Math.max(1, (long) (nanos / interval));
        long start = System.nanoTime();
        for (long i = 0; i < count; i++) {
            long due = start + (long) (i * interval);
            waitUntil(due);
            peer.roundTrips().run(BYTES, 1);
            h.recordValue(Math.min(System.nanoTime() - due, HIGHEST_NANOS));
        }
        return h;
    }

    private static void waitUntil(long due) {
        long left;
        while ((left = due - System.nanoTime()) > 0) {
            if (left > SPIN_NANOS) {
                LockSupport.parkNanos(left - SPIN_NANOS);
            } else {
                Thread.onSpinWait();
            }
        }
    }

    /** The series of a figure whose peers are {@code peers}, in order. */
    static List<String> allSeries(String... peers) {
        List<String> all = new ArrayList<>();
        for (String peer : peers) {
            for (Pace pace : Pace.values()) {
                all.add(series(peer, pace));
            }
        }
        return all;
    }
}
