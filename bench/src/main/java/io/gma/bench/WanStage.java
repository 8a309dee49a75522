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
import io.gma.wire.Threads;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.OptionalDouble;
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
    static final String RAW_TCP = "raw TCP through the link, one connection";
    /** The 32 KB streaming figure; the 1 KB one is {@link #STREAM}. */
    static final String STREAM_LARGE = "wan-streaming-32kb";
    static final long BITS_PER_SECOND = 100_000_000L;
    static final int[] DELAYS_MS = {0, 10, 50};
    static final int[] IN_FLIGHT = {1, 4, 16};
    static final int STREAM_BYTES = 1024;
    static final int STREAM_LARGE_BYTES = 32 * 1024;
    static final int ROUND_TRIP_BYTES = 64;
    /** A measured pass of round trips lasts about this long, at least 5 of them (as many again warm up). */
    private static final long ROUND_TRIP_PASS_MILLIS = 4_000;
    /** Messages in a streaming pass at most, and about 2 s at the link's rate at most. */
    private static final int STREAM_MAX_MESSAGES = 20_000;
    private static final double STREAM_MAX_SECONDS = 2;
    private static final double MIB = 1024.0 * 1024.0;

    private WanStage() {
    }

    static String series(int inFlight) {
        return "GMA cross-domain, " + inFlight + (inFlight == 1 ? " batch" : " batches") + " in flight";
    }

    static List<Figure> run(Plan plan, Peers peers, Progress progress) throws Exception {
        Figure stream = streamFigure(STREAM, "1 KB");
        Figure streamLarge = streamFigure(STREAM_LARGE, "32 KB");
        Figure latency = new Figure(ROUND_TRIP, "Across a WAN: round trip of 64 B through two PC servlets, each behind"
                + " a link of 100 Mbit/s each way", "one-way delay (ms)", "round trip, median (ms)", false, false,
                "delay_ms", "p50_ms", "p90_ms", "p99_ms", "rounds");
        // the smoke plan checks the stage, not the link: the short delays only
        int[] delays = plan.is(Plan.SMOKE) ? Arrays.copyOf(DELAYS_MS, 2) : DELAYS_MS;
        progress.stage("wan: across domains over a WAN", delays.length * (2 + IN_FLIGHT.length));
        String registry = peers.registry.url();
        double linkMib = BITS_PER_SECOND / 8.0 / MIB;
        OkHttpClient http = new OkHttpClient.Builder().socketFactory(NoDelaySocketFactory.INSTANCE).build();
        try (TunnelBench.Echo echo = new TunnelBench.Echo();
                RawSink sink = new RawSink()) {
            for (int delay : delays) {
                WanProxy.Link link = new WanProxy.Link(Duration.ofMillis(delay), BITS_PER_SECOND);
                int rounds = rounds(plan, delay);
                progress.step(RAW_TCP + ", " + link);
                try (WanProxy proxy = WanProxy.start(link).target(sink.port())) {
                    streamed(plan, List.of(stream, streamLarge), RAW_TCP, delay, linkMib,
                            (size, n) -> sink.stream(proxy.port(), size, n));
                }
                progress.step(RAW + ", " + link);
                try (WanProxy proxy = WanProxy.start(link).target(echo.port())) {
                    String url = proxy.url() + "/echo";
                    roundTrips(latency, RAW, delay, rounds, n -> echo.run(http, url, ROUND_TRIP_BYTES, n));
                    streamed(plan, List.of(stream, streamLarge), RAW, delay, linkMib,
                            (size, n) -> echo.stream(http, url, size, n));
                }
                for (int w : IN_FLIGHT) {
                    progress.step(series(w) + ", " + link);
                    try (Pair p = Pair.start(registry, "wan-" + delay + "ms-" + w, link, w)) {
                        roundTrips(latency, series(w), delay, rounds,
                                n -> p.ping.run(p.pong.name(), n, ROUND_TRIP_BYTES, true));
                        streamed(plan, List.of(stream, streamLarge), series(w), delay, linkMib,
                                (size, n) -> TunnelBench.stream(registry, p.east, p.west, size, n));
                    }
                }
            }
        } finally {
            http.dispatcher().executorService().shutdown();
            http.connectionPool().evictAll();
        }
        for (Figure f : List.of(stream, streamLarge)) {
            f.notes.add(String.format(Locale.ROOT, "- The link carries %.2f MiB/s each way (100 Mbit/s); link_share"
                    + " in the CSV is the figure's MiB/s of messages over that (HTTP and GMA's framing ride on top)."
                    + " Raw TCP is one connection writing the same bytes through the same link: what it carries.",
                    linkMib));
            f.notes.addAll(goals(f, delays[delays.length - 1]));
        }
        latency.notes.add("- A round trip crosses the link four times (the request's POST and its answer, the"
                + " reply's POST and its answer), but waits for two of them: 2 x the one-way delay is the floor.");
        progress.finish();
        return List.of(stream, streamLarge, latency);
    }

    private static Figure streamFigure(String id, String size) {
        return new Figure(id, "Across a WAN: streaming " + size + " through two PC servlets, each behind a link of"
                + " 100 Mbit/s each way", "one-way delay (ms)", "MiB/s", false, false, "delay_ms", "mib_per_s",
                "msgs_per_s", "link_share", "messages");
    }

    private static int size(Figure streamFigure) {
        return streamFigure.id.equals(STREAM) ? STREAM_BYTES : STREAM_LARGE_BYTES;
    }

    /** Messages of a streaming pass: the plan's, at most {@link #STREAM_MAX_MESSAGES} and about 2 s of the link. */
    static int messages(Plan plan, int size) {
        double fit = STREAM_MAX_SECONDS * BITS_PER_SECOND / 8 / size;
        return (int) Math.max(1, Math.min(plan.tunnelStreamMessages(size), Math.min(STREAM_MAX_MESSAGES, fit)));
    }

    /**
     * Issue 26's goal at the longest delay: GMA's best number in flight carries 90% or more of what raw TCP
     * carries through the same link.
     */
    private static List<String> goals(Figure f, int delay) {
        OptionalDouble raw = f.y(RAW_TCP, delay);
        String best = null;
        double bestMib = 0;
        for (int w : IN_FLIGHT) {
            OptionalDouble y = f.y(series(w), delay);
            if (y.isPresent() && y.getAsDouble() > bestMib) {
                bestMib = y.getAsDouble();
                best = series(w);
            }
        }
        if (raw.isEmpty() || best == null) {
            return List.of();
        }
        double share = bestMib / raw.getAsDouble();
        return List.of(String.format(Locale.ROOT, "- Goal: at %d ms one-way, streaming %s at 90%% or more of raw TCP"
                + " through the same link: %s, %.2f MiB/s against %.2f MiB/s (%.2fx): **%s**", delay,
                size(f) == STREAM_BYTES ? "1 KB" : "32 KB", best, bestMib, raw.getAsDouble(), share,
                share >= 0.9 ? "met" : "not met"));
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

    /** Streams each figure's message size through {@code stream} and adds the series' point to that figure. */
    private static void streamed(Plan plan, List<Figure> figures, String series, int delay, double linkMib,
            Peer.Stream stream) throws Exception {
        for (Figure figure : figures) {
            int size = size(figure);
            int messages = messages(plan, size);
            StreamingBench.Pass pass = () -> stream.seconds(size, messages);
            double seconds = plan.is(Plan.SMOKE) ? pass.seconds() : StreamingBench.afterWarmUp(pass);
            double rate = messages / seconds;
            double mib = rate * size / MIB;
            figure.add(series, delay, mib, rate, mib / linkMib, messages);
        }
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

    /**
     * Raw TCP through the link: a sink on loopback that reads whatever comes and, once a stream's bytes are all
     * in, answers one byte; the baseline for what one connection through the proxy carries.
     */
    private static final class RawSink implements AutoCloseable {
        private final ServerSocket server;

        RawSink() throws IOException {
            server = new ServerSocket(0, 4, InetAddress.getLoopbackAddress());
        }

        int port() {
            return server.getLocalPort();
        }

        /** Seconds from the first byte written, through the link at {@code proxyPort}, to the sink's answer. */
        double stream(int proxyPort, int size, int n) throws Exception {
            long total = (long) size * n;
            Thread reader = Threads.start("wan-raw-sink", () -> {
                try (Socket s = server.accept()) {
                    InputStream in = s.getInputStream();
                    byte[] buffer = new byte[64 * 1024];
                    long got = 0;
                    while (got < total) {
                        int r = in.read(buffer);
                        if (r < 0) {
                            return;
                        }
                        got += r;
                    }
                    s.getOutputStream().write(1);
                } catch (IOException closed) {
                    // the sender reports a stream that did not end
                }
            });
            try (Socket s = new Socket(InetAddress.getLoopbackAddress(), proxyPort)) {
                s.setTcpNoDelay(true);
                byte[] message = new byte[size];
                OutputStream out = s.getOutputStream();
                long start = System.nanoTime();
                for (int i = 0; i < n; i++) {
                    out.write(message);
                }
                out.flush();
                if (s.getInputStream().read() != 1) {
                    throw new IOException("the raw sink did not get the " + total + " bytes sent through the link");
                }
                double seconds = (System.nanoTime() - start) / 1e9;
                reader.join();
                return seconds;
            }
        }

        @Override
        public void close() throws IOException {
            server.close();
        }
    }
}
