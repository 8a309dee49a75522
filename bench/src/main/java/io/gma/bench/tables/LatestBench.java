package io.gma.bench.tables;

import io.gma.bench.streaming.ThreadCpu;
import io.gma.client.Consumer;
import io.gma.client.Producer;
import io.gma.client.TableRow;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

/**
 * Latest queries over many producers of one table (issue 23): producers of {@link BenchTable#LATEST}, each an
 * endpoint of its own in this JVM (one event loop each), each the agent of one host: it declares the table
 * with the predicate {@code host = '<its host>'} and inserts {@link #ROWS_PER_PRODUCER} rows (CPUs 0 to 3);
 * then one consumer runs {@link #QUERY} again and again. Every answer should hold every row: producers x
 * {@link #ROWS_PER_PRODUCER}.
 *
 * <p>Producers are added in steps ({@link #grow}); the first query after a step opens the consumer's links to
 * the producers it added (a registry look-up and a connection each), and is timed on its own.
 *
 * <p>The producers hold a 10-minute lease, so that their renewals (a third of the lease apart) do not load this
 * JVM during the queries as 1,000 producers on 30-second leases would (about 100 calls a second): on a grid each
 * producer runs on a machine of its own.
 */
public final class LatestBench implements AutoCloseable {
    /** Rows each producer inserts: its host's CPUs 0 to 3. */
    public static final int ROWS_PER_PRODUCER = 4;
    /** The query: every row, three of the columns. */
    public static final String QUERY = "SELECT host, cpu, load1 FROM " + BenchTable.LATEST;
    /** Producers started at once. */
    private static final int STARTING_AT_ONCE = 8;

    /**
     * The queries after a step.
     *
     * @param producers producers of the table then
     * @param firstMillis the first query's time, which opened the links to the producers the step added
     * @param millis each later query's time, in the order run
     * @param rows each later answer's row count, in the same order
     * @param firstRows the first answer's row count
     * @param firstCpu the CPU each group of threads spent on the first query, as {@link #millis} says it
     * @param cpu the CPU each group of threads spent a later query
     */
    public record Step(int producers, double firstMillis, int firstRows, double[] millis, int[] rows,
            String firstCpu, String cpu) {
        /** The nearest-rank percentile of the later queries' times, p in (0, 1]. */
        public double percentile(double p) {
            double[] sorted = millis.clone();
            Arrays.sort(sorted);
            return sorted[Math.max(0, (int) Math.ceil(p * sorted.length) - 1)];
        }

        /** The fewest rows an answer had, the first's included. */
        public int minRows() {
            return Math.min(firstRows, Arrays.stream(rows).min().orElse(firstRows));
        }

        /** The most rows an answer had, the first's included. */
        public int maxRows() {
            return Math.max(firstRows, Arrays.stream(rows).max().orElse(firstRows));
        }
    }

    private final String registry;
    private final Consumer consumer;
    private final List<Producer> producers = new ArrayList<>();
    private final long micros = System.currentTimeMillis() * 1000;

    private LatestBench(String registry) throws Exception {
        this.registry = registry;
        this.consumer = Consumer.builder().registry(registry).domain("lan").label("latest-reader").build();
    }

    /** The consumer, registered at {@code registry}; no producers yet. */
    public static LatestBench start(String registry) throws Exception {
        return new LatestBench(registry);
    }

    /**
     * Raises this process's caps on connections accepted and not yet authenticated (docs/security.md), unless set:
     * they are per process, and this one holds the many producers that would each be a process of their own, so
     * that the consumer's first query, which connects to all of them at once from 127.0.0.1, would find the cap of
     * 64 per source address of one process rather than of each. Takes effect only before this process's first
     * endpoint starts (the caps are read then).
     */
    public static void oneProcessOfMany() {
        for (String cap : new String[] {"gma.maxUnauthenticated", "gma.maxUnauthenticatedPerAddress"}) {
            if (System.getProperty(cap) == null) {
                System.setProperty(cap, "100000");
            }
        }
    }

    /** Producers now. */
    public int producers() {
        return producers.size();
    }

    /** Starts producers until there are {@code count}, each declaring the table and inserting its rows. */
    public void grow(int count) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(STARTING_AT_ONCE);
        try {
            List<Future<Producer>> starting = new ArrayList<>();
            for (int h = producers.size(); h < count; h++) {
                int host = h;
                starting.add(pool.submit(() -> producer(host)));
            }
            Exception failed = null;
            for (Future<Producer> f : starting) {
                try {
                    producers.add(f.get());
                } catch (ExecutionException e) {
                    failed = failed != null ? failed : (Exception) (e.getCause() instanceof Exception x ? x : e);
                }
            }
            if (failed != null) {
                throw failed;
            }
        } finally {
            pool.shutdown();
        }
    }

    private Producer producer(int host) throws Exception {
        Producer p = Producer.builder().registry(registry).domain("lan").label("agent").ioThreads(1)
                .lease(Duration.ofMinutes(10)).build();
        try {
            p.declare(BenchTable.schema(BenchTable.LATEST, "host = '" + BenchTable.host(host) + "'"));
            for (int cpu = 0; cpu < ROWS_PER_PRODUCER; cpu++) {
                p.insert(BenchTable.LATEST, BenchTable.row(host, cpu, micros));
            }
            return p;
        } catch (Exception e) {
            p.close();
            throw e;
        }
    }

    /** The first query, then {@code queries} more, each waited for before the next. */
    public Step measure(int queries) throws Exception {
        ThreadCpu first = new ThreadCpu();
        long start = System.nanoTime();
        int firstRows = consumer.latest(QUERY).size();
        double firstMillis = (System.nanoTime() - start) / 1e6;
        String firstCpu = millis(first.used(), 1, System.nanoTime() - start);
        double[] millis = new double[queries];
        int[] rows = new int[queries];
        ThreadCpu cpu = new ThreadCpu();
        long later = System.nanoTime();
        for (int q = 0; q < queries; q++) {
            long t = System.nanoTime();
            List<TableRow> answer = consumer.latest(QUERY);
            millis[q] = (System.nanoTime() - t) / 1e6;
            rows[q] = answer.size();
        }
        return new Step(producers.size(), firstMillis, firstRows, millis, rows, firstCpu,
                millis(cpu.used(), Math.max(1, queries), System.nanoTime() - later));
    }

    /**
     * The CPU of each group of threads that used 1% of the wall time or more, a query, in milliseconds:
     * {@code gma-agent-link 58.6, main 16.1; total 78.2, wall 78.5 ms}.
     */
    static String millis(Map<String, Long> used, int queries, long wallNanos) {
        StringBuilder s = new StringBuilder();
        long total = 0;
        for (Map.Entry<String, Long> e : used.entrySet()) {
            if (e.getValue() >= wallNanos / 100) {
                s.append(s.length() == 0 ? "" : ", ").append(String.format(Locale.ROOT, "%s %.1f", e.getKey(),
                        e.getValue() / 1e6 / queries));
                total += e.getValue();
            }
        }
        return s + String.format(Locale.ROOT, "; total %.1f, wall %.1f ms", total / 1e6 / queries,
                wallNanos / 1e6 / queries);
    }

    /** Closes the consumer, then the producers, several at once (each unregisters and says BYE). */
    @Override
    public void close() {
        consumer.close();
        ExecutorService pool = Executors.newFixedThreadPool(STARTING_AT_ONCE);
        try {
            for (Producer p : producers) {
                pool.execute(p::close);
            }
        } finally {
            pool.shutdown();
        }
        try {
            if (!pool.awaitTermination(2, TimeUnit.MINUTES)) {
                throw new IllegalStateException("producers still closing after 2 minutes");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        producers.clear();
    }
}
