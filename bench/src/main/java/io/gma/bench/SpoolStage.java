package io.gma.bench;

import io.gma.bench.tunnel.TunnelBench;
import io.gma.client.Producer;
import io.gma.examples.Ping;
import io.gma.examples.Pong;
import io.gma.pcservlet.PcServer;
import io.gma.pcservlet.SpoolOptions;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.stream.Stream;

/**
 * Durable delivery's cost (issue 20): streaming and round trips across two domains with the PC servlets' spool
 * (fsync batch, the default, and always) beside the same with the PC servlets in memory, measured in the same
 * run, each size taking the three in turn. The notes add what the spool did meanwhile: forces per second and
 * bytes written to its files per message, per PC servlet, from their /metrics.
 */
final class SpoolStage {
    static final String STREAM = "spool-streaming";
    static final String ROUND_TRIP = "spool-roundtrip";
    static final String MEMORY = "GMA cross-domain, PC servlets in memory";
    static final String BATCH = "GMA cross-domain, spool (fsync batch)";
    static final String ALWAYS = "GMA cross-domain, spool (fsync always)";
    /** Round-trip sizes, bytes. */
    private static final int[] ROUND_TRIP_SIZES = {64, 1024};
    /** A stream with fsync always forces once a message: this many at most, so that a pass takes seconds. */
    private static final int ALWAYS_MAX_MESSAGES = 20_000;

    private SpoolStage() {
    }

    /** Two PC servlets of their own domains, the spool's or not, and a ping-pong pair across them. */
    private record Pair(String series, PcServer east, PcServer west, Producer pong, Ping ping)
            implements AutoCloseable {
        static Pair start(String series, String prefix, String registry, SpoolOptions.Fsync fsync, Path dir)
                throws Exception {
            PcServer east = pc(prefix + "-east", registry, fsync, dir);
            PcServer west = pc(prefix + "-west", registry, fsync, dir);
            return new Pair(series, east, west, Pong.start(registry, east.domain(), "pong", east.uplink()),
                    Ping.start(registry, west.domain(), west.uplink()));
        }

        private static PcServer pc(String domain, String registry, SpoolOptions.Fsync fsync, Path dir)
                throws Exception {
            PcServer.Builder b = PcServer.builder(domain, registry).compression("off");
            if (fsync != null) {
                b.spool(new SpoolOptions(dir.resolve(domain), fsync, SpoolOptions.DEFAULT_MAX_BYTES, Duration.ZERO));
            }
            return b.start();
        }

        @Override
        public void close() throws Exception {
            ping.close();
            pong.close();
            west.close();
            east.close();
        }
    }

    static List<Figure> run(Plan plan, Peers peers, Progress progress) throws Exception {
        Figure stream = StreamingStage.streamFigure(STREAM, "Durable delivery: streaming across two domains with the"
                + " PC servlets' spool and in memory", "messages/s");
        Figure latency = PingPongStage.latencyFigure(ROUND_TRIP, "Durable delivery: round trip across two domains"
                + " with the PC servlets' spool and in memory");
        int[] sizes = plan.tunnelStreamSizes();
        progress.stage("spool: durable delivery", 3 * (sizes.length + ROUND_TRIP_SIZES.length));
        String registry = peers.registry.url();
        Path dir = Files.createTempDirectory("gma-bench-spool");
        List<Pair> pairs = new ArrayList<>();
        try {
            pairs.add(Pair.start(MEMORY, "mem", registry, null, dir));
            pairs.add(Pair.start(BATCH, "batch", registry, SpoolOptions.Fsync.BATCH, dir));
            pairs.add(Pair.start(ALWAYS, "always", registry, SpoolOptions.Fsync.ALWAYS, dir));
            for (int size : sizes) {
                for (Pair p : pairs) {
                    progress.step(p.series() + ", " + size + " B streaming");
                    int n = plan.tunnelStreamMessages(size);
                    if (p.series().equals(ALWAYS)) {
                        n = Math.min(n, ALWAYS_MAX_MESSAGES);
                    }
                    Counters before = Counters.of(p);
                    long start = System.nanoTime();
                    StreamingStage.stream(stream, new Peer(p.series(), null,
                            (s, count) -> TunnelBench.stream(registry, p.east(), p.west(), s, count)), size, n);
                    if (!p.series().equals(MEMORY)) {
                        stream.notes.add(Counters.of(p).since(before, System.nanoTime() - start, p.series(), size));
                    }
                }
            }
            for (int size : ROUND_TRIP_SIZES) {
                for (Pair p : pairs) {
                    progress.step(p.series() + ", " + size + " B round trips");
                    PingPongStage.roundTrips(latency, new Peer(p.series(), (s, n) -> p.ping().run(p.pong().name(), n,
                            s, true), null), size, plan.tunnelRounds());
                }
            }
        } finally {
            for (Pair p : pairs) {
                p.close();
            }
            deleteTree(dir);
        }
        progress.finish();
        return List.of(stream, latency);
    }

    /** What both PC servlets of a pair say of their spools in /metrics, added up. */
    private record Counters(long appended, long fsyncs, long written) {
        static Counters of(Pair p) throws IOException, InterruptedException {
            Counters east = read(p.east());
            Counters west = read(p.west());
            return new Counters(east.appended + west.appended, east.fsyncs + west.fsyncs,
                    east.written + west.written);
        }

        private static Counters read(PcServer pc) throws IOException, InterruptedException {
            String page = MetricsPage.fetch(pc.url());
            return new Counters(MetricsPage.sample(page, "gma_pc_spool_appended_total"),
                    MetricsPage.sample(page, "gma_pc_spool_fsyncs_total"),
                    MetricsPage.sample(page, "gma_pc_spool_written_bytes_total"));
        }

        /** One note: forces per second and bytes written per message, per PC servlet, since {@code before}. */
        String since(Counters before, long nanos, String series, int size) {
            long messages = (appended - before.appended) / 2; // each message is spooled by both PC servlets
            double seconds = nanos / 1e9;
            return String.format(Locale.ROOT, "- %s, %s B: %,.0f forces/s per PC servlet (%,d messages, each"
                    + " spooled by both), %,.0f bytes written per message per PC servlet", series,
                    Figure.number(size), (fsyncs - before.fsyncs) / 2.0 / seconds, messages,
                    messages == 0 ? 0.0 : (written - before.written) / 2.0 / messages);
        }
    }

    private static void deleteTree(Path dir) throws IOException {
        try (Stream<Path> all = Files.walk(dir)) {
            for (Path p : all.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        }
    }
}
