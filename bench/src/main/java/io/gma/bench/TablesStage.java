package io.gma.bench;

import io.gma.bench.tables.BenchTable;
import io.gma.bench.tables.ContinuousBench;
import io.gma.bench.tables.ContinuousBench.Kind;
import io.gma.bench.tables.ContinuousBench.Pass;
import io.gma.bench.tables.LatestBench;
import io.gma.bench.tables.TableBench;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.ToDoubleFunction;

/**
 * Monitoring tables (issue 23): continuous queries against plain streaming, predicate push-down, and latest
 * queries over many producers, in one run.
 *
 * <ul>
 *   <li>Continuous ({@link ContinuousBench}): one producer and one consumer over a direct link; plain DATA of each
 *       row's 64-byte encoding, a continuous query whose WHERE matches every row, and one that matches 1 in 10,
 *       in alternated rounds; rows/s first send to last arrival, and the bytes the producer's link wrote.
 *   <li>Latest ({@link LatestBench}): producers of one table, each its own endpoint in this JVM, added in steps;
 *       after each, the first latest query (it opens the links to the new producers) and then more, one at a
 *       time: p50, p99 and the rows each answer had.
 * </ul>
 *
 * Goals: the match-all continuous query at least {@link #GOAL_RATIO} of plain streaming's rows/s (the median of
 * the rounds' ratios), and the 1-in-10 query moving 10 times fewer bytes on the producer's link (within 1%).
 */
final class TablesStage {
    static final String CONTINUOUS = "tables-continuous";
    static final String LATEST = "tables-latest";
    static final String PLAIN = "plain DATA streaming (send of the encoded row)";
    static final String MATCH_ALL = "continuous query, WHERE matches every row";
    static final String ONE_IN_TEN = "continuous query, WHERE matches 1 row in 10";
    static final String LATEST_SERIES = "latest query, one consumer";
    static final double GOAL_RATIO = 0.5;
    static final double GOAL_FEWER_BYTES = 10;
    /** The bytes goal allows this share for what is not rows (a PING, an ACK). */
    static final double BYTES_SLACK = 0.01;

    private TablesStage() {
    }

    static List<Figure> run(Plan plan, Peers peers, Progress progress) throws Exception {
        Figure continuous = new Figure(CONTINUOUS, "Monitoring tables: continuous queries against plain streaming, 64 B"
                + " rows", "round", "rows/s sent or inserted", false, false, "round", "rows_per_s",
                "delivered_per_s", "producer_bytes_per_row", "consumer_bytes_per_row", "rows", "delivered");
        Figure latest = new Figure(LATEST, "Monitoring tables: latest query over many producers of one table",
                "producers", "latest query, p50 (ms)", true, false, "producers", "p50_ms", "p99_ms", "first_ms",
                "max_ms", "queries", "rows_per_answer");
        int[] steps = plan.tablesProducers();
        progress.stage("tables", 1 + 3 * plan.tablesRounds() + 2 * steps.length);
        String registry = peers.registry.url();
        try (ContinuousBench bench = ContinuousBench.start(registry)) {
            progress.step("warm-up, " + plan.tablesRows() + " rows a pass");
            Map<Kind, List<Pass>> passes = TableBench.alternated(bench, plan.tablesRows(), plan.tablesRounds(),
                    plan.tablesWarmUpMillis() * 1_000_000L, () -> progress.step("alternated rounds"));
            for (Kind k : Kind.values()) {
                List<Pass> list = passes.get(k);
                for (int r = 0; r < list.size(); r++) {
                    Pass p = list.get(r);
                    continuous.add(series(k), r + 1, p.rowsPerSecond(), p.deliveredPerSecond(),
                            p.producerBytes() / (double) p.sent(), p.consumerBytes() / (double) p.sent(), p.sent(),
                            p.delivered());
                }
            }
            continuousNotes(continuous, passes, plan.tablesRows());
        }
        List<LatestBench.Step> measured = new ArrayList<>();
        try (LatestBench bench = LatestBench.start(registry)) {
            for (int k : steps) {
                progress.step(String.format(Locale.ROOT, "starting %,d producers", k));
                bench.grow(k);
                progress.step(String.format(Locale.ROOT, "%,d latest queries", plan.tablesQueries()));
                LatestBench.Step s = bench.measure(plan.tablesQueries());
                measured.add(s);
                latest.add(LATEST_SERIES, k, s.percentile(0.5), s.percentile(0.99), s.firstMillis(),
                        s.percentile(1), s.millis().length, s.maxRows());
            }
            latestNotes(latest, measured);
        }
        progress.finish();
        return List.of(continuous, latest);
    }

    private static String series(Kind k) {
        return switch (k) {
            case PLAIN -> PLAIN;
            case MATCH_ALL -> MATCH_ALL;
            case ONE_IN_TEN -> ONE_IN_TEN;
        };
    }

    private static void continuousNotes(Figure f, Map<Kind, List<Pass>> passes, int rows) {
        List<Pass> plain = passes.get(Kind.PLAIN);
        List<Pass> all = passes.get(Kind.MATCH_ALL);
        List<Pass> tenth = passes.get(Kind.ONE_IN_TEN);
        f.notes.add(String.format(Locale.ROOT, "One producer and one consumer in this JVM over their direct link, kept"
                + " for every pass; %,d rows a pass of table `%s` (host, cpu, load1, user_pct, system_pct,"
                + " iowait_pct, sampled; key host and cpu; %d bytes encoded, %d in a TABLE_ROWS with its insert time"
                + " and length, rows that follow each other within 1 ms going together, up to 32 a message),"
                + " 10,000 keys of 1,000 hosts in turn (a host's rows share its name, one string)."
                + " Plain: `producer.send` of each row's encoding as DATA."
                + " Continuous: `producer.insert` of each row, the query `%s` (every row) or `%s` (1 in 10), its rows"
                + " counted by the row handler. Each pass after one untimed message; time from the first send to the"
                + " last arrival, the client's flow control throttling the producer (BLOCK, 8 MiB per peer). Rounds"
                + " alternate, each starting one kind further on, after a warm-up of each; a ratio is of one"
                + " round's passes.", rows, BenchTable.CONTINUOUS, BenchTable.ROW_BYTES, BenchTable.ROW_BYTES + 9,
                BenchTable.MATCH_ALL, BenchTable.ONE_IN_TEN));
        StringBuilder t = new StringBuilder("| round | plain rows/s | match all rows/s | match all ÷ plain | 1 in 10"
                + " rows/s inserted | 1 in 10 ÷ plain |\n|---|---|---|---|---|---|\n");
        double[] allRatio = new double[plain.size()];
        double[] tenthRatio = new double[plain.size()];
        for (int r = 0; r < plain.size(); r++) {
            allRatio[r] = all.get(r).rowsPerSecond() / plain.get(r).rowsPerSecond();
            tenthRatio[r] = tenth.get(r).rowsPerSecond() / plain.get(r).rowsPerSecond();
            t.append(String.format(Locale.ROOT, "| %d | %,.0f | %,.0f | %.2f | %,.0f | %.2f |%n", r + 1,
                    plain.get(r).rowsPerSecond(), all.get(r).rowsPerSecond(), allRatio[r],
                    tenth.get(r).rowsPerSecond(), tenthRatio[r]));
        }
        double ratio = TableBench.median(allRatio);
        t.append(String.format(Locale.ROOT, "| median | %,.0f | %,.0f | %.2f | %,.0f | %.2f |%n",
                median(plain, Pass::rowsPerSecond), median(all, Pass::rowsPerSecond), ratio,
                median(tenth, Pass::rowsPerSecond), TableBench.median(tenthRatio)));
        f.notes.add(t.toString());
        double allBytes = median(all, p -> p.producerBytes() / (double) p.sent());
        double tenthBytes = median(tenth, p -> p.producerBytes() / (double) p.sent());
        f.notes.add(String.format(Locale.ROOT, "Bytes a row inserted or sent, median pass, as the endpoints count them"
                + " (`EndpointStats`: what the producer's links wrote to their sockets, its only link being the one"
                + " to the consumer; what the consumer's read): plain %.1f and %.1f, match all %.1f and %.1f, 1 in 10"
                + " %.1f and %.1f. CPU a row by thread (ns; every measured pass added up; the inserting thread is"
                + " `main`), and the process's read and write system calls a row (`/proc/self/io`: the sockets'"
                + " reads and writes, and the event loops' wake-ups): plain: %s; %s. Match all: %s; %s. 1 in 10: %s;"
                + " %s.", median(plain, p -> p.producerBytes() / (double) p.sent()),
                median(plain, p -> p.consumerBytes() / (double) p.sent()), allBytes,
                median(all, p -> p.consumerBytes() / (double) p.sent()), tenthBytes,
                median(tenth, p -> p.consumerBytes() / (double) p.sent()), TableBench.cpuPerRow(plain),
                TableBench.syscallsPerRow(plain), TableBench.cpuPerRow(all), TableBench.syscallsPerRow(all),
                TableBench.cpuPerRow(tenth), TableBench.syscallsPerRow(tenth)));
        StringBuilder rounds = new StringBuilder();
        for (double r : allRatio) {
            rounds.append(rounds.length() == 0 ? "" : ", ").append(String.format(Locale.ROOT, "%.2f", r));
        }
        f.notes.add(String.format(Locale.ROOT, "- Goal: a continuous query that matches every row delivers at least"
                + " %.0f%% of plain streaming's rows/s: %.2f, the median of the rounds' ratios (%s): **%s**",
                GOAL_RATIO * 100, ratio, rounds, ratio >= GOAL_RATIO ? "met" : "not met"));
        double fewer = allBytes / tenthBytes;
        f.notes.add(String.format(Locale.ROOT, "- Goal: the 1-in-10 query moves %.0fx fewer bytes than the match-all"
                + " one on the producer's link (within %.0f%%): %.1f against %.1f bytes a row inserted, %.2fx fewer:"
                + " **%s**", GOAL_FEWER_BYTES, BYTES_SLACK * 100, tenthBytes, allBytes, fewer,
                fewer >= GOAL_FEWER_BYTES * (1 - BYTES_SLACK) ? "met" : "not met"));
    }

    private static void latestNotes(Figure f, List<LatestBench.Step> steps) {
        f.notes.add(String.format(Locale.ROOT, "Producers of table `%s`, each an endpoint of its own in this JVM (one"
                + " event loop, a 10-minute lease), each a host's agent: it declares the table with the predicate"
                + " `host = '<its host>'` and inserts %d rows (CPUs 0 to 3). One consumer runs `%s` (every row), one"
                + " query at a time: each producer is asked (TABLE_LATEST) and the answers are merged, the newest row"
                + " per key. The first query after a step opens the consumer's links to the producers it added (a"
                + " registry look-up, a connection and a handshake each) and is each new producer's first parse of"
                + " the query; p50 and p99 are of the queries after it. All producers share this JVM's %d cores:"
                + " their CPU below, which on a grid each producer spends on its own machine, is in the latency.",
                BenchTable.LATEST, LatestBench.ROWS_PER_PRODUCER, LatestBench.QUERY,
                Runtime.getRuntime().availableProcessors()));
        StringBuilder t = new StringBuilder("| producers | first query (ms) | p50 (ms) | p99 (ms) | max (ms) | queries"
                + " | rows an answer had | expected |\n|---|---|---|---|---|---|---|---|\n");
        for (LatestBench.Step s : steps) {
            int expected = s.producers() * LatestBench.ROWS_PER_PRODUCER;
            t.append(String.format(Locale.ROOT, "| %,d | %,.1f | %.2f | %.2f | %.2f | %,d | %s | %,d |%n",
                    s.producers(), s.firstMillis(), s.percentile(0.5), s.percentile(0.99), s.percentile(1),
                    s.millis().length, s.minRows() == s.maxRows() ? String.format(Locale.ROOT, "%,d", s.minRows())
                            : String.format(Locale.ROOT, "%,d to %,d", s.minRows(), s.maxRows()), expected));
        }
        f.notes.add(t.toString());
        for (LatestBench.Step s : steps) {
            f.notes.add(String.format(Locale.ROOT, "CPU by thread, %,d producers (`agent-link`: the producers'"
                    + " event loops; `agent-accept`: their accepting threads; `latest-reader-link`: the consumer's"
                    + " event loops; `latest-reader-connect`: its connecting threads, which look each producer up in"
                    + " the registry; `main`: the querying thread): the first query %s; a later query %s.",
                    s.producers(), s.firstCpu(), s.cpu()));
        }
        for (LatestBench.Step s : steps) {
            boolean whole = s.minRows() == s.producers() * LatestBench.ROWS_PER_PRODUCER
                    && s.maxRows() == s.minRows();
            f.notes.add(String.format(Locale.ROOT, "- Latest query with %,d producers of one table: p50 %.2f ms, p99"
                    + " %.2f ms, the first %,.0f ms; %s rows an answer (issue 23 sets no goal: measured)%s",
                    s.producers(), s.percentile(0.5), s.percentile(0.99), s.firstMillis(),
                    String.format(Locale.ROOT, "%,d", s.maxRows()), whole ? "" : ": **some answers were incomplete**"));
        }
    }

    private static double median(List<Pass> passes, ToDoubleFunction<Pass> value) {
        return TableBench.median(passes.stream().mapToDouble(value).toArray());
    }

    /** The goals' lines of the tables figures, for the summary's goals. */
    static List<String> goals(List<Figure> figures) {
        List<String> lines = new ArrayList<>();
        for (Figure f : figures) {
            if (f.id.equals(CONTINUOUS) || f.id.equals(LATEST)) {
                f.notes.stream().filter(n -> n.startsWith("- Goal") || n.startsWith("- Latest"))
                        .map(n -> "- Monitoring tables: " + n.substring(2)).forEach(lines::add);
            }
        }
        return lines;
    }
}
