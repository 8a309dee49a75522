package io.gma.bench;

import static io.gma.bench.pingpong.PingPongBench.pct;

import io.gma.bench.streaming.StreamingBench;
import io.gma.bench.tunnel.TunnelBench;
import io.gma.bench.wan.WanProxy;
import io.gma.client.Producer;
import io.gma.examples.Ping;
import io.gma.examples.Pong;
import io.gma.pcservlet.PcServer;
import io.gma.security.NoDelaySocketFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import okhttp3.OkHttpClient;

/**
 * Across domains over a WAN (issue 26): each PC servlet behind a {@link WanProxy} that delays each direction by
 * a one-way delay and carries at most 100 Mbit/s each way, so that every POST between them crosses the "WAN" (the
 * endpoints' uplinks stay on the LAN, as they would). At 0, 10 and 50 ms one-way, with 1, 4 and 16 batches in
 * flight per destination domain: streaming of 1 KB messages (MiB/s, and its share of the link's rate) and round
 * trips of 64 B, beside raw POSTs through the same proxy (one at a time, as one batch in flight is).
 */
final class WanStage {
    static final String STREAM = "wan-streaming";
    static final String ROUND_TRIP = "wan-roundtrip";
    static final String RAW = "raw POST through the link, one at a time";
    static final long BITS_PER_SECOND = 100_000_000L;
    static final int[] DELAYS_MS = {0, 10, 50};
    static final int[] IN_FLIGHT = {1, 4, 16};
    static final int STREAM_BYTES = 1024;
    static final int ROUND_TRIP_BYTES = 64;
    /** A measured pass of round trips lasts about this long, at least 5 of them (as many again warm up). */
    private static final long ROUND_TRIP_PASS_MILLIS = 4_000;
    /** Messages in a streaming pass at most: 2 s at the link's rate. */
    private static final int STREAM_MAX_MESSAGES = 20_000;
    private static final double MIB = 1024.0 * 1024.0;

    private WanStage() {
    }

    static String series(int inFlight) {
        return "GMA cross-domain, " + inFlight + (inFlight == 1 ? " batch" : " batches") + " in flight";
    }

    static List<Figure> run(Plan plan, Peers peers, Progress progress) throws Exception {
        Figure stream = new Figure(STREAM, "Across a WAN: streaming 1 KB through two PC servlets, each behind a link"
                + " of 100 Mbit/s each way", "one-way delay (ms)", "MiB/s", false, false, "delay_ms", "mib_per_s",
                "msgs_per_s", "link_share", "messages");
        Figure latency = new Figure(ROUND_TRIP, "Across a WAN: round trip of 64 B through two PC servlets, each behind"
                + " a link of 100 Mbit/s each way", "one-way delay (ms)", "round trip, median (ms)", false, false,
                "delay_ms", "p50_ms", "p90_ms", "p99_ms", "rounds");
        // the smoke plan checks the stage, not the link: the short delays only
        int[] delays = plan == Plan.SMOKE ? Arrays.copyOf(DELAYS_MS, 2) : DELAYS_MS;
        progress.stage("wan: across domains over a WAN", delays.length * (1 + IN_FLIGHT.length));
        String registry = peers.registry.url();
        int messages = Math.min(plan.tunnelStreamMessages(STREAM_BYTES), STREAM_MAX_MESSAGES);
        double linkMib = BITS_PER_SECOND / 8.0 / MIB;
        OkHttpClient http = new OkHttpClient.Builder().socketFactory(NoDelaySocketFactory.INSTANCE).build();
        try (TunnelBench.Echo echo = new TunnelBench.Echo()) {
            for (int delay : delays) {
                WanProxy.Link link = new WanProxy.Link(Duration.ofMillis(delay), BITS_PER_SECOND);
                int rounds = rounds(plan, delay);
                progress.step(RAW + ", " + link);
                try (WanProxy proxy = WanProxy.start(link).target(echo.port())) {
                    String url = proxy.url() + "/echo";
                    roundTrips(latency, RAW, delay, rounds, n -> echo.run(http, url, ROUND_TRIP_BYTES, n));
                    streamed(plan, stream, RAW, delay, messages, linkMib,
                            () -> echo.stream(http, url, STREAM_BYTES, messages));
                }
                for (int w : IN_FLIGHT) {
                    progress.step(series(w) + ", " + link);
                    try (Pair p = Pair.start(registry, "wan-" + delay + "ms-" + w, link, w)) {
                        roundTrips(latency, series(w), delay, rounds,
                                n -> p.ping.run(p.pong.name(), n, ROUND_TRIP_BYTES, true));
                        streamed(plan, stream, series(w), delay, messages, linkMib,
                                () -> TunnelBench.stream(registry, p.east, p.west, STREAM_BYTES, messages));
                    }
                }
            }
        } finally {
            http.dispatcher().executorService().shutdown();
            http.connectionPool().evictAll();
        }
        stream.notes.add(String.format(Locale.ROOT, "- The link carries %.2f MiB/s each way (100 Mbit/s); link_share"
                + " in the CSV is the figure's MiB/s of messages over that (HTTP and GMA's framing ride on top).",
                linkMib));
        latency.notes.add("- A round trip crosses the link four times (the request's POST and its answer, the"
                + " reply's POST and its answer), but waits for two of them: 2 x the one-way delay is the floor.");
        progress.finish();
        return List.of(stream, latency);
    }

    /** Round trips at 64 B through the link: enough for {@link #ROUND_TRIP_PASS_MILLIS}, within the plan's. */
    private static int rounds(Plan plan, int delayMillis) {
        long fit = ROUND_TRIP_PASS_MILLIS / Math.max(1, 2L * delayMillis);
        return (int) Math.max(5, Math.min(plan.tunnelRounds(), fit));
    }

    @FunctionalInterface
    private interface Rounds {
        long[] run(int n) throws Exception;
    }

    private static void roundTrips(Figure figure, String series, int delay, int rounds, Rounds pass)
            throws Exception {
        pass.run(rounds);
        long[] rtt = pass.run(rounds);
        figure.add(series, delay, pct(rtt, 0.5) / 1_000.0, pct(rtt, 0.9) / 1_000.0,
                pct(rtt, 0.99) / 1_000.0, rounds);
    }

    private static void streamed(Plan plan, Figure figure, String series, int delay, int messages, double linkMib,
            StreamingBench.Pass pass) throws Exception {
        double seconds = plan == Plan.SMOKE ? pass.seconds() : StreamingBench.afterWarmUp(pass);
        double rate = messages / seconds;
        double mib = rate * STREAM_BYTES / MIB;
        figure.add(series, delay, mib, rate, mib / linkMib, messages);
    }

    /** Two PC servlets of their own domains, each behind its own link, and a ping-pong pair across them. */
    private record Pair(WanProxy eastLink, WanProxy westLink, PcServer east, PcServer west, Producer pong, Ping ping)
            implements AutoCloseable {
        static Pair start(String registry, String prefix, WanProxy.Link link, int inFlight) throws Exception {
            List<AutoCloseable> started = new ArrayList<>();
            try {
                WanProxy eastLink = add(started, WanProxy.start(link));
                WanProxy westLink = add(started, WanProxy.start(link));
                PcServer east = add(started, pc(registry, prefix + "-east", eastLink, inFlight));
                PcServer west = add(started, pc(registry, prefix + "-west", westLink, inFlight));
                Producer pong = add(started, Pong.start(registry, east.domain(), "pong", east.uplink()));
                Ping ping = Ping.start(registry, west.domain(), west.uplink());
                return new Pair(eastLink, westLink, east, west, pong, ping);
            } catch (Exception e) {
                for (int i = started.size() - 1; i >= 0; i--) {
                    started.get(i).close();
                }
                throw e;
            }
        }

        private static <T extends AutoCloseable> T add(List<AutoCloseable> started, T t) {
            started.add(t);
            return t;
        }

        /**
         * A PC servlet that other domains reach through {@code link} (its registered URL is the link's). Compression
         * off: the messages are zeros, which zstd takes to almost nothing, and the raw POSTs beside them are plain;
         * the compress stage measures compression.
         */
        private static PcServer pc(String registry, String domain, WanProxy link, int inFlight) throws Exception {
            PcServer pc = PcServer.builder(domain, registry).publicUrl(link.url()).maxBatchesInFlight(inFlight)
                    .compression("off").start();
            link.target(pc.httpPort());
            return pc;
        }

        @Override
        public void close() throws Exception {
            ping.close();
            pong.close();
            west.close();
            east.close();
            westLink.close();
            eastLink.close();
        }
    }
}
