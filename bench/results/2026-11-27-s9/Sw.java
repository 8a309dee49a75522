import io.gma.bench.tunnel.TunnelBench;
import io.gma.client.Producer;
import io.gma.examples.Ping;
import io.gma.examples.Pong;
import io.gma.pcservlet.PcServer;
import io.gma.pcservlet.SpoolOptions;
import io.gma.registry.Registry;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.Locale;

/** Spool vs memory, with W batches in flight: streaming 1 KB and 64 B round trips, alternated; bytes each PC servlet wrote to its spool a message. */
public class Sw {
    record Pair(String name, PcServer east, PcServer west, Producer pong, Ping ping) {}

    static Pair pair(String name, String registry, boolean spool, int w, Path dir) throws Exception {
        PcServer e = pc(name + "e", registry, spool, w, dir);
        PcServer wst = pc(name + "w", registry, spool, w, dir);
        return new Pair(name, e, wst, Pong.start(registry, e.domain(), "pong", e.uplink()),
                Ping.start(registry, wst.domain(), wst.uplink()));
    }

    static PcServer pc(String d, String registry, boolean spool, int w, Path dir) throws Exception {
        PcServer.Builder b = PcServer.builder(d, registry).compression("off").maxBatchesInFlight(w);
        if (spool) {
            b.spool(new SpoolOptions(dir.resolve(d), SpoolOptions.Fsync.BATCH, SpoolOptions.DEFAULT_MAX_BYTES, Duration.ZERO));
        }
        return b.start();
    }

    static long[] spoolCounters(Pair p) throws Exception {
        long w = 0, f = 0;
        for (PcServer pc : new PcServer[] {p.east(), p.west()}) {
            String page = io.gma.bench.MetricsPage.fetch(pc.url());
            w += io.gma.bench.MetricsPage.sample(page, "gma_pc_spool_written_bytes_total");
            f += io.gma.bench.MetricsPage.sample(page, "gma_pc_spool_fsyncs_total");
        }
        String east = io.gma.bench.MetricsPage.fetch(p.east().url());
        return new long[] {w, f, io.gma.bench.MetricsPage.sample(east, "gma_pc_spool_written_bytes_total")};
    }

    public static void main(String[] args) throws Exception {
        System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", "warn");
        int n = Integer.parseInt(args[0]);
        int rounds = Integer.parseInt(args[1]);
        int rtts = Integer.parseInt(args[2]);
        int[] ws = Arrays.stream(args[3].split(",")).mapToInt(Integer::parseInt).toArray();
        Path dir = Files.createTempDirectory("sw");
        try (Registry registry = Registry.builder().port(0).build().start()) {
            String url = registry.url();
            boolean spoolToo = !System.getProperty("memoryOnly", "false").equals("true");
            int[] sizes = Arrays.stream(System.getProperty("sizes", "1024").split(",")).mapToInt(Integer::parseInt).toArray();
            Pair[] pairs = new Pair[ws.length * 2];
            for (int i = 0; i < ws.length; i++) {
                pairs[2 * i] = pair("m" + ws[i], url, false, ws[i], dir);
                pairs[2 * i + 1] = spoolToo ? pair("s" + ws[i], url, true, ws[i], dir) : null;
            }
            for (int r = 0; r < rounds; r++) {
                StringBuilder line = new StringBuilder("round " + r + ":");
                for (int size : sizes) {
                    for (Pair p : pairs) {
                        if (p == null) continue;
                        long[] before = spoolCounters(p);
                        double secs = TunnelBench.stream(url, p.east(), p.west(), size, size < 1024 ? 3 * n : n);
                        long[] after = spoolCounters(p);
                        int msgs = size < 1024 ? 3 * n : n;
                        line.append(String.format(Locale.ROOT, " %s/%d %.0f/s", p.name(), size, msgs / secs));
                        if (after[0] > 0) {
                            line.append(String.format(Locale.ROOT, " (east %.0f west %.0f B/msg, %.0f forces/s)", (after[2] - before[2]) / 1.0 / msgs, (after[0] - after[2] - before[0] + before[2]) / 1.0 / msgs, (after[1] - before[1]) / 2.0 / secs));
                        }
                    }
                }
                line.append(" |");
                for (Pair p : pairs) {
                    if (p == null) continue;
                    long[] rtt = p.ping().run(p.pong().name(), rtts, 64, true);
                    Arrays.sort(rtt);
                    line.append(String.format(Locale.ROOT, " %s %.0fus", p.name(), rtt[rtt.length / 2] / 1e3));
                }
                System.out.println(line);
            }
        }
        System.exit(0); // the pairs' Jetty threads are not daemons
    }
}
