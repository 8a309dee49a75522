package io.gma.bench.tables;

import io.gma.bench.streaming.ThreadCpu;
import io.gma.registry.Registry;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/**
 * Monitoring tables (issue 23), alone: continuous queries against plain streaming in alternated rounds
 * ({@link ContinuousBench}), then latest queries over many producers ({@link LatestBench}), printed as Markdown.
 * {@code gma bench --only tables} runs the same with figures.
 *
 * <pre>java -cp bench/target/gma-benchmarks.jar io.gma.bench.tables.TableBench [rows [rounds [producers,...
 *     [queries]]]]</pre>
 *
 * Defaults: 2,000,000 rows a pass, 5 rounds, 100 then 1,000 producers, 200 queries. Rows or producers 0: that
 * part is left out.
 */
public final class TableBench {
    /** Each kind of pass warms up for this long at least before the measured rounds. */
    public static final long WARM_UP_NANOS = 2_000_000_000L;

    private TableBench() {
    }

    /**
     * Warms each kind up for {@code warmUpNanos} at least (one pass at least), then runs {@code rounds} rounds,
     * each of one pass of every kind, round r starting at kind r (mod 3), so that no kind always follows another.
     *
     * @return the measured passes of each kind, in the order of the rounds
     */
    public static Map<ContinuousBench.Kind, List<ContinuousBench.Pass>> alternated(ContinuousBench bench, int rows,
            int rounds, long warmUpNanos, Runnable step) throws Exception {
        ContinuousBench.Kind[] kinds = ContinuousBench.Kind.values();
        for (ContinuousBench.Kind k : kinds) {
            long start = System.nanoTime();
            do {
                bench.run(k, rows);
            } while (System.nanoTime() - start < warmUpNanos);
        }
        Map<ContinuousBench.Kind, List<ContinuousBench.Pass>> passes = new EnumMap<>(ContinuousBench.Kind.class);
        for (ContinuousBench.Kind k : kinds) {
            passes.put(k, new ArrayList<>());
        }
        for (int r = 0; r < rounds; r++) {
            for (int i = 0; i < kinds.length; i++) {
                ContinuousBench.Kind k = kinds[(r + i) % kinds.length];
                step.run();
                passes.get(k).add(bench.run(k, rows));
            }
        }
        return passes;
    }

    /** {@link ThreadCpu#perMessage} of the passes' CPU added up, per row sent. */
    public static String cpuPerRow(List<ContinuousBench.Pass> passes) {
        Map<String, Long> used = new TreeMap<>();
        long rows = 0;
        long wall = 0;
        for (ContinuousBench.Pass p : passes) {
            p.cpu().forEach((group, nanos) -> used.merge(group, nanos, Long::sum));
            rows += p.sent();
            wall += (long) (p.seconds() * 1e9);
        }
        return ThreadCpu.perMessage(used, rows, wall);
    }

    /** The reads and writes (system calls) a row, every pass added up, as "0.12 reads and 0.05 writes a row". */
    public static String syscallsPerRow(List<ContinuousBench.Pass> passes) {
        long reads = 0;
        long writes = 0;
        long rows = 0;
        for (ContinuousBench.Pass p : passes) {
            if (p.syscalls()[0] < 0) {
                return "system calls not counted (no /proc/self/io)";
            }
            reads += p.syscalls()[0];
            writes += p.syscalls()[1];
            rows += p.sent();
        }
        return String.format(Locale.ROOT, "%.3f reads and %.3f writes a row", reads / (double) rows,
                writes / (double) rows);
    }

    /** The median of the values (the upper one of an even count). */
    public static double median(double[] values) {
        double[] sorted = values.clone();
        Arrays.sort(sorted);
        return sorted[sorted.length / 2];
    }

    public static void main(String[] args) throws Exception {
        System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", "warn");
        LatestBench.oneProcessOfMany();
        int rows = args.length > 0 ? Integer.parseInt(args[0]) : 2_000_000;
        int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 5;
        int[] steps = args.length > 2 ? Arrays.stream(args[2].split(",")).filter(a -> !a.equals("0"))
                .mapToInt(Integer::parseInt).toArray() : new int[] {100, 1000};
        int queries = args.length > 3 ? Integer.parseInt(args[3]) : 200;
        System.out.printf(Locale.ROOT, "monitoring tables; JDK %s, %d cores%n%n", System.getProperty("java.version"),
                Runtime.getRuntime().availableProcessors());
        try (Registry registry = Registry.builder().port(0).build().start()) {
            if (rows > 0) {
                printContinuous(registry.url(), rows, rounds);
            }
            if (steps.length > 0) {
                printLatest(registry.url(), steps, queries);
            }
        }
    }

    private static void printContinuous(String registry, int rows, int rounds) throws Exception {
        try (ContinuousBench bench = ContinuousBench.start(registry)) {
            var passes = alternated(bench, rows, rounds, WARM_UP_NANOS, () -> { });
            System.out.println("| round | plain rows/s | match-all rows/s | ratio | 1-in-10 rows/s | ratio"
                    + " | match-all bytes/row | 1-in-10 bytes/row | plain bytes/row |");
            System.out.println("|---|---|---|---|---|---|---|---|---|");
            for (int r = 0; r < rounds; r++) {
                ContinuousBench.Pass plain = passes.get(ContinuousBench.Kind.PLAIN).get(r);
                ContinuousBench.Pass all = passes.get(ContinuousBench.Kind.MATCH_ALL).get(r);
                ContinuousBench.Pass tenth = passes.get(ContinuousBench.Kind.ONE_IN_TEN).get(r);
                System.out.printf(Locale.ROOT, "| %d | %,.0f | %,.0f | %.2f | %,.0f | %.2f | %.1f | %.1f | %.1f"
                        + " |%n", r + 1, plain.rowsPerSecond(), all.rowsPerSecond(), all.rowsPerSecond()
                        / plain.rowsPerSecond(), tenth.rowsPerSecond(), tenth.rowsPerSecond()
                        / plain.rowsPerSecond(), all.producerBytes() / (double) all.sent(),
                        tenth.producerBytes() / (double) tenth.sent(), plain.producerBytes()
                        / (double) plain.sent());
            }
            System.out.println();
            passes.forEach((k, list) -> System.out.println(k + " CPU ns a row by thread: " + cpuPerRow(list) + "; "
                    + syscallsPerRow(list)));
            System.out.println();
        }
    }

    private static void printLatest(String registry, int[] steps, int queries) throws Exception {
        System.out.println("| producers | first query (ms) | p50 (ms) | p99 (ms) | rows per answer |");
        System.out.println("|---|---|---|---|---|");
        try (LatestBench latest = LatestBench.start(registry)) {
            List<String> cpu = new ArrayList<>();
            for (int k : steps) {
                latest.grow(k);
                LatestBench.Step s = latest.measure(queries);
                System.out.printf(Locale.ROOT, "| %,d | %.1f | %.2f | %.2f | %,d to %,d |%n", k, s.firstMillis(),
                        s.percentile(0.5), s.percentile(0.99), s.minRows(), s.maxRows());
                cpu.add(k + " producers, CPU by thread, the first query: " + s.firstCpu() + "; a later one: "
                        + s.cpu());
            }
            System.out.println();
            cpu.forEach(System.out::println);
        }
    }
}
