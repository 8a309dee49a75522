package io.gma.bench;

import io.gma.bench.compress.Codecs;
import io.gma.bench.compress.Payloads;
import io.gma.bench.streaming.StreamingBench;
import io.gma.bench.wan.WanProxy;
import io.gma.client.Consumer;
import io.gma.client.Producer;
import io.gma.pcservlet.PcServer;
import io.gma.wire.Command;
import io.gma.wire.Packed;
import java.io.ByteArrayOutputStream;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Compression of batches between PC servlets (issue 26). Two parts:
 *
 * <ul>
 *   <li>the candidates on a batch of GMA messages in memory (zstd 1 and 3, lz4, Deflater 1 and 6), for the agent's
 *       rows, key=value text and random 1 KB payloads: ratio, and MB/s each way on one thread;</li>
 *   <li>streaming through two PC servlets with {@code --compression auto} beside two with {@code off}, in turns
 *       (alternated passes, the median of each): messages/s, and the bytes of batch bodies on the wire against
 *       their plain bytes, from the sending PC servlet's /metrics.</li>
 * </ul>
 *
 * The goals: on the agent's rows, 3x fewer bytes on the wire or better; on random bytes, auto at 0.98 of off's
 * messages/s or better. A third pair, off as well, runs in the same turns as a control: how far two identical
 * pairs differ on this machine at this moment.
 */
final class CompressStage {
    static final String CODECS = "compress-codecs";
    static final String TUNNEL = "compress-tunnel";
    static final int[] BATCH_KIB = {16, 1024};
    /** Measured passes of each of auto, off and the control, in turns: the quick plan's, then the full plan's. */
    static final int QUICK_PASSES = 7;
    static final int FULL_PASSES = 11;
    /** Rows a pass across the link (off: about 3 s at 100 Mbit/s), and passes of each. */
    static final int WAN_ROWS = 200_000;
    static final int WAN_PASSES = 5;
    private static final String FROM = "agent-aaaaaa@cardiff";
    private static final String TO = "sink-bbbbbb@west";

    private CompressStage() {
    }

    static String series(Payloads.Kind kind, String mode) {
        return kind.label + ", compression " + mode;
    }

    static List<Figure> run(Plan plan, Peers peers, Progress progress) throws Exception {
        Figure codecs = new Figure(CODECS, "Compression of a batch in memory, by codec and payload: ratio",
                "batch (KiB)", "plain / compressed", true, false, "batch_kib", "ratio", "compress_mb_s",
                "decompress_mb_s");
        Figure tunnel = new Figure(TUNNEL, "Streaming through two PC servlets, compression auto and off, in turns",
                "payload (1 agent rows, 2 text, 3 random 1 KB; 4 agent rows across 100 Mbit/s)", "messages/s",
                false, false, "payload", "msgs_per_s", "wire_bytes_per_msg", "plain_bytes_per_msg", "plain_over_wire",
                "compressed_batches", "batches", "compress_time_share");
        Payloads.Kind[] kinds = {Payloads.Kind.AGENT_ROWS, Payloads.Kind.TEXT, Payloads.Kind.RANDOM_1K};
        progress.stage("compress: batches between PC servlets", kinds.length * (BATCH_KIB.length + 1) + 1);
        long millis = codecMillis(plan);
        for (Payloads.Kind kind : kinds) {
            for (int kib : BATCH_KIB) {
                progress.step(kind.label + ", " + kib + " KiB batch in memory");
                byte[] batch = batch(kind, kib * 1024);
                for (Codecs.Codec c : Codecs.all()) {
                    try (c) {
                        Codecs.Result r = Codecs.measure(c, batch, millis);
                        codecs.add(kind.label + ", " + r.codec(), kib, r.ratio(), r.compressMbPerS(),
                                r.decompressMbPerS());
                    }
                }
            }
        }
        String registry = peers.registry.url();
        try (Pair auto = Pair.start(registry, "auto", "auto"); Pair off = Pair.start(registry, "off", "off");
                Pair control = Pair.start(registry, "off", "control")) {
            for (int k = 0; k < kinds.length; k++) {
                Payloads.Kind kind = kinds[k];
                progress.step(kind.label + ", through two PC servlets, auto and off in turns");
                int n = messages(plan, kind);
                List<byte[]> payloads = Payloads.make(kind, n, 26);
                Pass[] passes = {auto.pass(payloads), off.pass(payloads), control.pass(payloads)};
                int rounds = plan.is(Plan.SMOKE) ? 1 : plan.is(Plan.QUICK) ? QUICK_PASSES : FULL_PASSES;
                double[][] seconds = inTurns(rounds, !plan.is(Plan.SMOKE), passes);
                add(tunnel, kind, k + 1, "auto", n / median(seconds[0]), passes[0].counted);
                add(tunnel, kind, k + 1, "off", n / median(seconds[1]), passes[1].counted);
                add(tunnel, kind, k + 1, "off (a second pair, the control)", n / median(seconds[2]),
                        passes[2].counted);
                long[] a = passes[0].counted;
                String line = String.format(Locale.ROOT, "- %s: auto %,.0f msgs/s, off %,.0f, control (off) %,.0f;"
                        + " auto / off %.3f, control / off %.3f (medians of %d passes each, in turns, and of the"
                        + " ratios pass by pass: %.3f and %.3f); plain / wire with auto %.2fx (%,d bytes plain, %,d"
                        + " on the wire, %d of %d batches compressed, over all passes); the sender spent %.2f%% of"
                        + " the passes' time compressing and judging", kind.label,
                        n / median(seconds[0]), n / median(seconds[1]), n / median(seconds[2]),
                        median(seconds[1]) / median(seconds[0]), median(seconds[1]) / median(seconds[2]),
                        seconds[0].length, medianRatio(seconds[1], seconds[0]), medianRatio(seconds[1], seconds[2]),
                        (double) a[1] / Math.max(1, a[0]), a[1], a[0], a[2], a[3], 100.0 * a[5] / Math.max(1, a[6]));
                tunnel.notes.add(line);
                progress.say(line);
            }
        }
        progress.step("agent rows, through two PC servlets, the receiver behind a link of 100 Mbit/s");
        WanProxy.Link link = new WanProxy.Link(java.time.Duration.ZERO, WanStage.BITS_PER_SECOND);
        try (Pair auto = Pair.start(registry, "auto", "wan-auto", link);
                Pair off = Pair.start(registry, "off", "wan-off", link)) {
            Payloads.Kind kind = Payloads.Kind.AGENT_ROWS;
            int n = plan.is(Plan.SMOKE) ? 2_000 : WAN_ROWS;
            List<byte[]> payloads = Payloads.make(kind, n, 26);
            Pass[] passes = {auto.pass(payloads), off.pass(payloads)};
            double[][] seconds = inTurns(plan.is(Plan.SMOKE) ? 1 : WAN_PASSES, !plan.is(Plan.SMOKE), passes);
            String across = kind.label + " across " + link;
            add(tunnel, across, 4, "auto", n / median(seconds[0]), passes[0].counted);
            add(tunnel, across, 4, "off", n / median(seconds[1]), passes[1].counted);
            long[] a = passes[0].counted;
            String line = String.format(Locale.ROOT, "- %s: auto %,.0f msgs/s, off %,.0f; auto / off %.2f (medians"
                    + " of %d passes each, in turns; pass by pass %.2f); plain / wire with auto %.2fx; off moved"
                    + " %.2f MiB/s of batch bodies through the link", across, n / median(seconds[0]),
                    n / median(seconds[1]), median(seconds[1]) / median(seconds[0]), seconds[0].length,
                    medianRatio(seconds[1], seconds[0]), (double) a[1] / Math.max(1, a[0]),
                    passes[1].counted[0] / (passes[1].counted[6] / 1e6) / (1 << 20));
            tunnel.notes.add(line);
            progress.say(line);
        }
        codecs.notes.add("- One thread; MB/s of plain bytes; a batch is GMA messages back to back, as a POST's body"
                + " is. Agent rows: the data of the agent's TABLE_ROW messages (host_cpu for 8 CPUs and the machine,"
                + " host_memory, host_disk for 3 file systems, host_net for 2 interfaces, per host of 50, values"
                + " made as the agent makes them), sent as DATA.");
        tunnel.notes.add("- wire and plain bytes are the sending PC servlet's gma_pc_tunnel_wire_bytes_total and"
                + " gma_pc_tunnel_plain_bytes_total (direction sent), per message, over every pass of the series.");
        progress.finish();
        return List.of(codecs, tunnel);
    }

    /**
     * Runs the passes in turns, {@code rounds} times each, the first of each round going last in the next (auto,
     * off, control; off, control, auto; ...), after a warm-up of each: their seconds, pass by pass.
     */
    static double[][] inTurns(int rounds, boolean warmUp, Pass... passes) throws Exception {
        if (warmUp) {
            for (Pass p : passes) {
                long start = System.nanoTime();
                do {
                    p.seconds();
                } while (System.nanoTime() - start < StreamingBench.WARM_UP_NANOS);
                p.reset();
            }
        }
        double[][] seconds = new double[passes.length][rounds];
        for (int round = 0; round < rounds; round++) {
            for (int j = 0; j < passes.length; j++) {
                int i = (round + j) % passes.length;
                seconds[i][round] = passes[i].seconds();
            }
        }
        return seconds;
    }

    static double median(double[] values) {
        double[] sorted = values.clone();
        java.util.Arrays.sort(sorted);
        return sorted[sorted.length / 2];
    }

    /** The median of {@code a[i] / b[i]}. */
    static double medianRatio(double[] a, double[] b) {
        double[] r = new double[a.length];
        for (int i = 0; i < a.length; i++) {
            r[i] = a[i] / b[i];
        }
        return median(r);
    }

    private static void add(Figure f, Payloads.Kind kind, int x, String mode, double rate, long[] counted) {
        add(f, kind.label, x, mode, rate, counted);
    }

    private static void add(Figure f, String payload, int x, String mode, double rate, long[] counted) {
        long n = Math.max(1, counted[4]);
        f.add(payload + ", compression " + mode, x, rate, (double) counted[0] / n, (double) counted[1] / n,
                (double) counted[1] / Math.max(1, counted[0]), counted[2], counted[3],
                (double) counted[5] / Math.max(1, counted[6]));
    }

    /**
     * How long each codec compresses and decompresses a batch, each way: plans compare by name, as the suite
     * runs a copy of its plan ({@link Plan#withScale}).
     */
    static long codecMillis(Plan plan) {
        return plan.is(Plan.SMOKE) ? 20 : 400;
    }

    /** Messages in a pass: about 100 MB of random, 40 MB of rows in the full plan (a pass of a second or so). */
    static int messages(Plan plan, Payloads.Kind kind) {
        if (plan.is(Plan.SMOKE)) {
            return 2_000;
        }
        int n = plan.tunnelStreamMessages(1024);
        return kind == Payloads.Kind.RANDOM_1K ? Math.min(n, 100_000) : Math.min(4 * n, 200_000);
    }

    /** Messages of {@code kind} from one agent to one sink, back to back, up to {@code bytes}. */
    static byte[] batch(Payloads.Kind kind, int bytes) {
        ByteArrayOutputStream out = new ByteArrayOutputStream(bytes + 2048);
        List<byte[]> payloads = Payloads.make(kind, bytes / 64 + 1, 7);
        for (int i = 0; out.size() < bytes; i++) {
            out.writeBytes(Packed.make(i + 1, Command.DATA, FROM, TO, payloads.get(i)));
        }
        return out.toByteArray();
    }

    /** A pass: streams its payloads, and adds what the sending PC servlet counted to {@link #counted}. */
    private static final class Pass {
        private final Pair pair;
        private final List<byte[]> payloads;
        /**
         * Wire bytes, plain bytes, compressed batches, batches, messages, microseconds the sender spent compressing
         * (and judging), microseconds of the passes: over all passes since the warm-up.
         */
        final long[] counted = new long[7];

        void reset() {
            java.util.Arrays.fill(counted, 0);
        }

        Pass(Pair pair, List<byte[]> payloads) {
            this.pair = pair;
            this.payloads = payloads;
        }

        double seconds() throws Exception {
            long[] before = pair.counters();
            double s = pair.stream(payloads);
            long[] after = pair.counters();
            for (int i = 0; i < 4; i++) {
                counted[i] += after[i] - before[i];
            }
            counted[4] += payloads.size();
            counted[5] += after[4] - before[4];
            counted[6] += (long) (s * 1e6);
            return s;
        }
    }

    /**
     * Two PC servlets (east sends, west receives) with compression {@code mode}, a producer and a sink; their
     * domains named after {@code name}.
     */
    private record Pair(PcServer east, PcServer west, Producer source, Consumer sink, AtomicLong received,
            AtomicReference<CountDownLatch> done, AtomicLong target, WanProxy proxy) implements AutoCloseable {
        static Pair start(String registry, String mode, String name) throws Exception {
            return start(registry, mode, name, null);
        }

        /** With {@code link}, west is behind a {@link WanProxy} of that link: east's POSTs cross it. */
        static Pair start(String registry, String mode, String name, WanProxy.Link link) throws Exception {
            WanProxy proxy = link == null ? null : WanProxy.start(link);
            PcServer.Builder w = PcServer.builder("compress-" + name + "-west", registry).compression(mode);
            PcServer west = (proxy == null ? w : w.publicUrl(proxy.url())).start();
            if (proxy != null) {
                proxy.target(west.httpPort());
            }
            PcServer east = PcServer.builder("compress-" + name + "-east", registry).compression(mode).start();
            AtomicLong received = new AtomicLong();
            AtomicLong target = new AtomicLong(Long.MAX_VALUE);
            AtomicReference<CountDownLatch> done = new AtomicReference<>(new CountDownLatch(1));
            Consumer sink = Consumer.builder().registry(registry).domain(west.domain()).pcServlet(west.uplink())
                    .label("sink").onMessage(m -> {
                        if (received.incrementAndGet() == target.get()) {
                            done.get().countDown();
                        }
                    }).build();
            Producer source = Producer.builder().registry(registry).domain(east.domain()).pcServlet(east.uplink())
                    .label("agent").build();
            return new Pair(east, west, source, sink, received, done, target, proxy);
        }

        Pass pass(List<byte[]> payloads) {
            return new Pass(this, payloads);
        }

        /** Seconds from the first send to the last delivery of the payloads. */
        double stream(List<byte[]> payloads) throws Exception {
            CountDownLatch latch = new CountDownLatch(1);
            done.set(latch);
            target.set(received.get() + payloads.size());
            long start = System.nanoTime();
            for (byte[] p : payloads) {
                source.send(sink.name(), p);
            }
            if (!latch.await(5, TimeUnit.MINUTES)) {
                throw new IllegalStateException("only " + received.get() + " of " + target.get() + " arrived");
            }
            return (System.nanoTime() - start) / 1e9;
        }

        /** East's wire bytes, plain bytes, compressed batches and batches sent. */
        long[] counters() throws Exception {
            String page = MetricsPage.fetch(east.url());
            return new long[] {MetricsPage.sample(page, "gma_pc_tunnel_wire_bytes_total{direction=\"sent\"}"),
                MetricsPage.sample(page, "gma_pc_tunnel_plain_bytes_total{direction=\"sent\"}"),
                MetricsPage.sample(page, "gma_pc_compressed_batches_total{direction=\"sent\"}"),
                MetricsPage.sample(page, "gma_pc_batches_sent_total"), micros(page, "gma_pc_compress_seconds_total")};
        }

        /** A counter of seconds on a page, in microseconds; 0 when it is not there. */
        private static long micros(String page, String name) {
            for (String line : page.split("\n")) {
                if (line.startsWith(name + " ")) {
                    return (long) (Double.parseDouble(line.substring(name.length() + 1)) * 1e6);
                }
            }
            return 0;
        }

        @Override
        public void close() throws Exception {
            source.close();
            sink.close();
            west.close();
            east.close();
            if (proxy != null) {
                proxy.close();
            }
        }
    }

    /**
     * The streaming part alone for one payload, each pass's seconds printed: {@code java -cp
     * bench/target/gma-benchmarks.jar io.gma.bench.CompressStage RANDOM_1K 100000 11}; without arguments, the codec
     * table.
     */
    public static void main(String[] args) throws Exception {
        if (args.length == 3) {
            System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", "warn");
            Payloads.Kind kind = Payloads.Kind.valueOf(args[0]);
            int n = Integer.parseInt(args[1]);
            List<byte[]> payloads = Payloads.make(kind, n, 26);
            try (io.gma.registry.Registry registry = io.gma.registry.Registry.builder().port(0).build().start();
                    Pair auto = Pair.start(registry.url(), "auto", "auto");
                    Pair off = Pair.start(registry.url(), "off", "off");
                    Pair control = Pair.start(registry.url(), "off", "control")) {
                Pass[] passes = {auto.pass(payloads), off.pass(payloads), control.pass(payloads)};
                double[][] s = inTurns(Integer.parseInt(args[2]), true, passes);
                String[] names = {"auto", "off", "control"};
                for (int i = 0; i < 3; i++) {
                    System.out.printf(Locale.ROOT, "%-8s median %,.0f msgs/s; seconds %s; counted %s%n", names[i],
                            n / median(s[i]), java.util.Arrays.toString(s[i]),
                            java.util.Arrays.toString(passes[i].counted));
                }
            }
            return;
        }
        codecTable();
    }

    private static void codecTable() {
        for (Payloads.Kind kind : Payloads.Kind.values()) {
            for (int kib : BATCH_KIB) {
                byte[] batch = batch(kind, kib * 1024);
                for (Codecs.Codec c : Codecs.all()) {
                    try (c) {
                        Codecs.Result r = Codecs.measure(c, batch, 300);
                        System.out.printf(Locale.ROOT, "%-28s %5d KiB %-11s ratio %6.2f  compress %7.1f MB/s"
                                + "  decompress %7.1f MB/s%n", kind.label, kib, r.codec(), r.ratio(),
                                r.compressMbPerS(), r.decompressMbPerS());
                    }
                }
            }
        }
    }
}
