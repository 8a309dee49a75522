package io.gma.bench.loops;

import com.sun.management.OperatingSystemMXBean;
import io.gma.bench.tables.ContinuousBench;
import io.gma.bench.tables.TableBench;
import io.gma.bench.tunnel.TunnelBench;
import io.gma.client.Consumer;
import io.gma.client.Producer;
import io.gma.examples.Ping;
import io.gma.examples.Pong;
import io.gma.pcservlet.PcServer;
import io.gma.registry.Registry;
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One figure alone, for before-and-after comparisons of a change to the hot paths: run each build alternately,
 * many times, and compare medians (bench/RESULTS.md, issue 20). Prints one line.
 *
 * <pre>
 * java -Xms1g -Xmx1g -cp bench/target/gma-benchmarks.jar io.gma.bench.loops.Loops \
 *     direct|tunnel|roundtrip|tunnel-rtt|relay-rtt [bytes]
 * java -Xms2g -Xmx2g -cp bench/target/gma-benchmarks.jar io.gma.bench.loops.Loops tables [rounds [rows [warm-up s]]]
 * java -Xms2g -Xmx2g -cp bench/target/gma-benchmarks.jar io.gma.bench.loops.Loops tables-only [seconds]
 * </pre>
 *
 * <ul>
 *   <li>{@code direct}: 1,000,000 DATA of 64 B (or {@code bytes}; at most 1 GiB a pass) over a direct link,
 *       five passes; the mean of the middle two of the last four, in messages/s;
 *   <li>{@code tunnel}: 200,000 DATA of 64 B (or {@code bytes}; at most 200 MiB a pass) across two PC servlets in
 *       memory, three passes after one; the median, in messages/s, and the process's CPU time a message;
 *   <li>{@code roundtrip}: 5,000 blocking round trips of 64 B (or {@code bytes}) over a direct link, after 5,000;
 *       the median, µs;
 *   <li>{@code tunnel-rtt}: 2,000 blocking round trips of 64 B (or {@code bytes}) across two PC servlets in
 *       memory, after 2,000; the median, µs;
 *   <li>{@code relay-rtt}: the same with the pong in an outbound-only domain that long-polls the ping's PC
 *       servlet (its via), so that every reply goes by POST and every request by a poll's answer;
 *   <li>{@code tables}: the tables stage's plain DATA and match-all continuous passes alone ({@link ContinuousBench},
 *       1,000,000 rows a pass, 7 rounds by default, the kinds alternated after 2 s of warm-up of each, or more
 *       on a loaded machine, whose compiler threads lag): each round's rates, their ratio (match all ÷ plain) and
 *       the CPU a row by thread; then the median ratio;
 *   <li>{@code tables-only}: match-all passes of 1,000,000 rows only, for a profiler (20 s by default).
 * </ul>
 */
public final class Loops {
    private static final int DIRECT_MESSAGES = 1_000_000;
    private static final int TUNNEL_MESSAGES = 200_000;
    private static final int ROUND_TRIPS = 5_000;

    private Loops() {
    }

    public static void main(String[] args) throws Exception {
        System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", "warn");
        String what = args.length >= 1 ? args[0] : "";
        if (what.equals("tables") || what.equals("tables-only")) {
            try (Registry registry = Registry.builder().port(0).build().start()) {
                if (what.equals("tables")) {
                    tables(registry.url(), args.length > 1 ? Integer.parseInt(args[1]) : 7,
                            args.length > 2 ? Integer.parseInt(args[2]) : 1_000_000,
                            args.length > 3 ? Long.parseLong(args[3]) * 1_000_000_000L : TableBench.WARM_UP_NANOS);
                } else {
                    tablesOnly(registry.url(), args.length > 1 ? Integer.parseInt(args[1]) : 20);
                }
            }
            return;
        }
        int size = args.length > 1 ? Integer.parseInt(args[1]) : 64;
        try (Registry registry = Registry.builder().port(0).build().start()) {
            switch (what) {
                case "direct" -> direct(registry.url(), size);
                case "tunnel" -> tunnel(registry.url(), size);
                case "roundtrip" -> roundTrip(registry.url(), size);
                case "tunnel-rtt" -> tunnelRoundTrip(registry.url(), size, false);
                case "relay-rtt" -> tunnelRoundTrip(registry.url(), size, true);
                default -> {
                    System.err.println("usage: Loops direct|tunnel|roundtrip|tunnel-rtt|relay-rtt [bytes]"
                            + "|tables [rounds [rows [warm-up s]]]|tables-only [seconds]");
                    System.exit(2);
                }
            }
        }
    }

    private static void direct(String registry, int size) throws Exception {
        int messages = (int) Math.min(DIRECT_MESSAGES, (1L << 30) / size);
        AtomicLong got = new AtomicLong();
        Semaphore passDone = new Semaphore(0);
        try (Consumer sink = Consumer.builder().registry(registry).domain("lan").label("sink").onMessage(m -> {
            if (got.incrementAndGet() % messages == 0) {
                passDone.release();
            }
        }).build();
                Producer source = Producer.builder().registry(registry).domain("lan").label("source").build()) {
            byte[] payload = new byte[size];
            double[] rates = new double[5];
            for (int i = 0; i < rates.length; i++) {
                long start = System.nanoTime();
                for (int k = 0; k < messages; k++) {
                    source.send(sink.name(), payload);
                }
                passDone.acquire();
                rates[i] = messages / ((System.nanoTime() - start) / 1e9);
            }
            double[] last = Arrays.copyOfRange(rates, 1, rates.length);
            Arrays.sort(last);
            System.out.printf(Locale.ROOT, "direct%d %.0f%n", size, (last[1] + last[2]) / 2);
        }
    }

    private static void tables(String registry, int rounds, int rows, long warmUpNanos) throws Exception {
        ContinuousBench.Kind[] kinds = {ContinuousBench.Kind.PLAIN, ContinuousBench.Kind.MATCH_ALL};
        try (ContinuousBench bench = ContinuousBench.start(registry)) {
            for (ContinuousBench.Kind k : kinds) {
                long start = System.nanoTime();
                do {
                    bench.run(k, rows);
                } while (System.nanoTime() - start < warmUpNanos);
            }
            double[] ratios = new double[rounds];
            List<ContinuousBench.Pass> plain = new ArrayList<>();
            List<ContinuousBench.Pass> all = new ArrayList<>();
            for (int r = 0; r < rounds; r++) {
                ContinuousBench.Pass a;
                ContinuousBench.Pass p;
                if (r % 2 == 0) {
                    p = bench.run(kinds[0], rows);
                    a = bench.run(kinds[1], rows);
                } else {
                    a = bench.run(kinds[1], rows);
                    p = bench.run(kinds[0], rows);
                }
                plain.add(p);
                all.add(a);
                ratios[r] = a.rowsPerSecond() / p.rowsPerSecond();
                System.out.printf(Locale.ROOT, "round %d plain %.0f match-all %.0f ratio %.3f%n", r + 1,
                        p.rowsPerSecond(), a.rowsPerSecond(), ratios[r]);
            }
            System.out.println("plain CPU ns a row: " + TableBench.cpuPerRow(plain) + "; "
                    + TableBench.syscallsPerRow(plain));
            System.out.println("match-all CPU ns a row: " + TableBench.cpuPerRow(all) + "; "
                    + TableBench.syscallsPerRow(all));
            System.out.printf(Locale.ROOT, "tables ratio median %.3f%n", TableBench.median(ratios));
        }
    }

    private static void tablesOnly(String registry, int seconds) throws Exception {
        try (ContinuousBench bench = ContinuousBench.start(registry)) {
            long start = System.nanoTime();
            List<ContinuousBench.Pass> all = new ArrayList<>();
            while (System.nanoTime() - start < seconds * 1_000_000_000L) {
                all.add(bench.run(ContinuousBench.Kind.MATCH_ALL, 1_000_000));
            }
            System.out.println("match-all CPU ns a row: " + TableBench.cpuPerRow(all) + "; "
                    + TableBench.syscallsPerRow(all));
        }
    }

    private static void tunnel(String registry, int size) throws Exception {
        int messages = (int) Math.min(TUNNEL_MESSAGES, (200L << 20) / size);
        try (PcServer east = PcServer.builder("east", registry).compression("off").start();
                PcServer west = PcServer.builder("west", registry).compression("off").start()) {
            TunnelBench.stream(registry, east, west, size, messages);
            OperatingSystemMXBean os = (OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
            long cpuBefore = os.getProcessCpuTime();
            double[] rates = new double[3];
            for (int i = 0; i < rates.length; i++) {
                rates[i] = messages / TunnelBench.stream(registry, east, west, size, messages);
            }
            long cpu = os.getProcessCpuTime() - cpuBefore;
            Arrays.sort(rates);
            System.out.printf(Locale.ROOT, "tunnel%d %.0f cpu/msg %.0f ns%n", size, rates[1],
                    cpu / (double) (rates.length * messages));
        }
    }

    private static void roundTrip(String registry, int size) throws Exception {
        try (Producer pong = Pong.start(registry, "lan", "pong"); Ping ping = Ping.start(registry, "lan")) {
            ping.run(pong.name(), ROUND_TRIPS, size, true);
            long[] rtt = ping.run(pong.name(), ROUND_TRIPS, size, true);
            Arrays.sort(rtt);
            System.out.printf(Locale.ROOT, "rtt%d %.1f%n", size, rtt[rtt.length / 2] / 1000.0);
        }
    }

    private static void tunnelRoundTrip(String registry, int size, boolean relayed) throws Exception {
        PcServer.Builder pongSide = PcServer.builder("east", registry).compression("off");
        try (PcServer west = PcServer.builder("west", registry).compression("off").start();
                PcServer east = (relayed ? pongSide.via("west") : pongSide).start();
                Producer pong = Pong.start(registry, "east", "pong", east.uplink());
                Ping ping = Ping.start(registry, "west", west.uplink())) {
            ping.run(pong.name(), 2_000, size, true);
            long[] rtt = ping.run(pong.name(), 2_000, size, true);
            Arrays.sort(rtt);
            System.out.printf(Locale.ROOT, "%s%d %.1f%n", relayed ? "relay-rtt" : "tunnel-rtt", size,
                    rtt[rtt.length / 2] / 1000.0);
        }
    }
}
