package io.gma.bench;

import io.gma.archiver.StoreBench;
import io.gma.client.TableHistory;
import io.gma.client.TableRow;
import io.gma.tables.ColumnType;
import io.gma.tables.Row;
import io.gma.tables.TableSchema;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.function.IntFunction;
import java.util.stream.Stream;

/**
 * The archiver's benchmark (issue 24), on H2 on file under a temporary directory and, when one is given as for the
 * registry stage ({@link RegistryStage#database()}), on PostgreSQL.
 *
 * <ul>
 *   <li>Ingest: the same rows of a host_cpu table stored by the archiver's store path (its writer's queue and
 *       thread, batches of {@link StoreBench#BATCH} rows in a transaction each, MERGE on H2 and INSERT ... ON
 *       CONFLICT DO NOTHING on PostgreSQL) and by a plain JDBC batch insert (one PreparedStatement INSERT,
 *       addBatch, executeBatch and commit every {@link StoreBench#BATCH} rows) into a table of the same DDL and
 *       indexes, each round into fresh tables, the two taking turns first; the median of each, and their ratio.
 *       Goal: the archiver at least {@link #GOAL} of plain. Measured on the store path directly, not through a
 *       producer's continuous query, which would measure the links more than the database.</li>
 *   <li>History: an hour of {@link Sizes#hosts} hosts at a row a second, loaded by the plain insert into the
 *       archive's table; then the archiver's history answer (its reader, as a consumer's TABLE_HISTORY reaches
 *       it) for one host's load over the hour, and for every host's over the hour, which is over the consumer's
 *       row bound when the hour holds more than {@link StoreBench#MAX_HISTORY_ROWS} rows: the reader stops at one
 *       row over it, and the consumer gets TOO_LARGE.</li>
 * </ul>
 */
final class ArchiveStage {
    static final String INGEST = "archive-ingest";
    static final String HISTORY = "archive-history";
    static final String ARCHIVER = "archiver store path";
    static final String PLAIN = "plain JDBC batch insert";
    static final String ONE_HOST = "one host, last hour";
    static final String ONE_KEY = "one host and domain, last hour";
    static final String ALL_HOSTS = "all hosts, last hour (row bound)";
    /** The goal: the archiver's ingest at least this share of plain JDBC's. */
    static final double GOAL = 0.70;

    /** @param rows ingest rows per pass; @param rounds ingest rounds; @param hosts history hosts (an hour each) */
    record Sizes(int rows, int rounds, int hosts, int queries, int warmUp) {
        static Sizes of(Plan plan) {
            return switch (plan.name()) {
                case "full" -> new Sizes(200_000, 5, 1_000, 200, 50);
                case "quick" -> new Sizes(50_000, 3, 100, 100, 20);
                default -> new Sizes(3_000, 3, 10, 20, 5);
            };
        }
    }

    private ArchiveStage() {
    }

    static TableSchema schema(String name) {
        return TableSchema.builder(name).column("domain", ColumnType.STRING).column("host", ColumnType.STRING)
                .column("cpu", ColumnType.INTEGER).column("busy", ColumnType.DOUBLE).column("usr", ColumnType.DOUBLE)
                .column("sys", ColumnType.DOUBLE).column("iowait", ColumnType.DOUBLE)
                .column("steal", ColumnType.DOUBLE).column("idle", ColumnType.DOUBLE)
                .column("load1", ColumnType.DOUBLE).column("load5", ColumnType.DOUBLE)
                .column("load15", ColumnType.DOUBLE).column("sampled", ColumnType.TIMESTAMP)
                .primaryKey("domain", "host", "cpu").build();
    }

    /** Host {@code host}'s row of second {@code second}, from its agent, inserted at {@code base} plus that. */
    static TableRow row(long base, int host, int second) {
        long micros = base + second * 1_000_000L + host;
        double x = (host * 31 + second) % 1000 / 10.0;
        return new TableRow("agent-" + host, micros, Row.of("bench", "h" + host, -1L, x, x / 2, x / 4, 0.5, 0.0,
                100 - x, x / 25, x / 30, x / 35, micros));
    }

    /** Batch i of an hour of {@code hosts} hosts, second by second; null past the last. */
    static List<TableRow> hourBatch(long base, int hosts, int i) {
        long first = (long) i * StoreBench.BATCH;
        long total = 3600L * hosts;
        if (first >= total) {
            return null;
        }
        List<TableRow> out = new ArrayList<>(StoreBench.BATCH);
        for (long n = first; n < Math.min(total, first + StoreBench.BATCH); n++) {
            out.add(row(base, (int) (n % hosts), (int) (n / hosts)));
        }
        return out;
    }

    static List<Figure> run(Plan plan, Peers peers, Progress progress) throws Exception {
        Sizes sizes = Sizes.of(plan);
        Figure ingest = new Figure(INGEST, "Archive ingest: the archiver's store path beside a plain JDBC batch"
                + " insert",
                "round", "rows/s", false, false, "round", "rows_per_s", "rows");
        Figure history = new Figure(HISTORY, "Archive history query latency, an hour of " + sizes.hosts()
                + " hosts at 1 row/s", "hosts", "p50 ms", false, false, "hosts", "p50_ms", "p99_ms", "max_ms",
                "queries", "rows_per_answer");
        String pg = RegistryStage.database();
        boolean postgres = pg != null && pg.startsWith("jdbc:postgresql:");
        progress.stage("archive: ingest and history", (postgres ? 2 : 1) * (2 * sizes.rounds() + 4));
        Path dir = Files.createTempDirectory("gma-bench-archive");
        try {
            measure("H2", "jdbc:h2:file:" + dir.resolve("archive").toAbsolutePath() + ";DB_CLOSE_DELAY=0", sizes,
                    ingest, history, progress);
            if (postgres) {
                measure("PostgreSQL", pg, sizes, ingest, history, progress);
            }
        } finally {
            delete(dir);
        }
        ingest.notes.add("- Rows: " + Figure.number(sizes.rows()) + " host_cpu rows a pass (13 columns, key domain,"
                + " host, cpu; unique (producer, insert time, key) and the archive's indexes: docs/tables.md),"
                + " batches of " + StoreBench.BATCH + " rows, a transaction each; " + sizes.rounds() + " rounds,"
                + " each into fresh tables, the two paths taking turns first. H2 is on file.");
        ingest.notes.add("- The archiver's store path is measured directly (its writer's queue, thread and batch"
                + " write: MERGE on H2, INSERT ... ON CONFLICT DO NOTHING on PostgreSQL), not through a producer's"
                + " continuous query, which would measure the links more than the database.");
        for (String db : postgres ? List.of("H2", "PostgreSQL") : List.of("H2")) {
            double a = median(ingest, ARCHIVER + ", " + db);
            double p = median(ingest, PLAIN + ", " + db);
            double ratio = a / p;
            ingest.notes.add(String.format(Locale.ROOT, "- Goal: archive ingest at least %d%% of a plain JDBC batch"
                    + " insert's rows/s, %s: %s rows/s against %s, %.2f: %s", Math.round(GOAL * 100), db,
                    Figure.number(a), Figure.number(p), ratio, ratio >= GOAL ? "met" : "NOT met"));
        }
        if (!postgres) {
            ingest.notes.add("- PostgreSQL: skipped (set " + RegistryStage.DATABASE + " or source .ci/postgres.sh;"
                    + " gma_postgres_start)");
        }
        history.notes.add("- An hour of " + Figure.number(sizes.hosts()) + " hosts at 1 row/s ("
                + Figure.number(3600L * sizes.hosts()) + " rows" + (sizes.hosts() < 1000 ? "; the full plan has"
                + " 1,000 hosts, 3.6 million rows" : "") + "), loaded by the plain insert. Each query is the"
                + " archiver's reader answering a TABLE_HISTORY since an hour ago, timed to its answer; "
                + sizes.queries() + " queries after " + sizes.warmUp() + " as warm-up.");
        history.notes.add("- " + ONE_HOST + ": `SELECT host, load1, sampled FROM host_cpu WHERE host = 'h<n>'`, a"
                + " different host each time (3,600 rows); " + ONE_KEY + ": the same with `domain = 'bench' AND`,"
                + " which the archive's key index (domain, host, cpu, insert time) serves; host alone has its own,"
                + " (host, insert time). " + ALL_HOSTS + ": `SELECT host, load1, sampled FROM"
                + " host_cpu`, which reads at most " + Figure.number(StoreBench.MAX_HISTORY_ROWS + 1) + " rows: past"
                + " " + Figure.number(StoreBench.MAX_HISTORY_ROWS) + " the consumer gets TOO_LARGE (the period"
                + " index, (insert time, producer), gives the rows in the answer's order, so that reading stops"
                + " there).");
        return List.of(ingest, history);
    }

    private static void measure(String db, String url, Sizes sizes, Figure ingest, Figure history,
            Progress progress) throws Exception {
        long base = System.currentTimeMillis() * 1000 - 3_600_000_000L;
        List<TableRow> rows = new ArrayList<>(sizes.rows());
        int hosts = 1000;
        for (int n = 0; n < sizes.rows(); n++) {
            rows.add(row(base, n % hosts, n / hosts));
        }
        String tag = Long.toString(System.currentTimeMillis() % 1_000_000, 36);
        try (StoreBench store = StoreBench.open(url)) {
            for (int round = 1; round <= sizes.rounds(); round++) {
                for (int turn = 0; turn < 2; turn++) {
                    boolean archiveNow = (turn == 0) == (round % 2 == 1);
                    String name = "bench_" + tag + "_" + (archiveNow ? "a" : "p") + round;
                    TableSchema schema = schema(name);
                    long nanos;
                    if (archiveNow) {
                        progress.step(db + " ingest round " + round + ": archiver");
                        StoreBench.Table t = store.prepare(schema);
                        nanos = t.archive(rows);
                        if (t.stored() != rows.size() || t.count() != rows.size()) {
                            throw new IllegalStateException("the archiver stored " + t.stored() + " rows of "
                                    + rows.size());
                        }
                    } else {
                        progress.step(db + " ingest round " + round + ": plain");
                        store.createPlain(schema);
                        nanos = store.plain(schema, i -> i * StoreBench.BATCH >= rows.size() ? null
                                : rows.subList(i * StoreBench.BATCH, Math.min(rows.size(), (i + 1)
                                        * StoreBench.BATCH)));
                    }
                    store.drop(name);
                    ingest.add((archiveNow ? ARCHIVER : PLAIN) + ", " + db, round,
                            rows.size() / (nanos / 1e9), rows.size());
                }
            }
            rows.clear();
            progress.step(db + " history: loading an hour of " + sizes.hosts() + " hosts");
            String name = "host_cpu";
            TableSchema schema = schema(name);
            StoreBench.Table t = store.prepare(schema);
            if (t.count() > 0) {
                throw new IllegalStateException("the history's table " + name + " in " + db + " holds rows already");
            }
            store.plain(schema, i -> hourBatch(base, sizes.hosts(), i));
            long since = base - 1;
            progress.step(db + " history: " + ONE_HOST);
            time(history, ONE_HOST + ", " + db, sizes, t, q -> "SELECT host, load1, sampled FROM host_cpu WHERE"
                    + " host = 'h" + (q * 7919 % sizes.hosts()) + "'", since);
            progress.step(db + " history: " + ONE_KEY);
            time(history, ONE_KEY + ", " + db, sizes, t, q -> "SELECT host, load1, sampled FROM host_cpu WHERE"
                    + " domain = 'bench' AND host = 'h" + (q * 7919 % sizes.hosts()) + "'", since);
            progress.step(db + " history: " + ALL_HOSTS);
            time(history, ALL_HOSTS + ", " + db, sizes, t, q -> "SELECT host, load1, sampled FROM host_cpu",
                    since);
            store.drop(name);
        }
    }

    private static void time(Figure figure, String series, Sizes sizes, StoreBench.Table t, IntFunction<String> sql,
            long since) throws Exception {
        for (int q = 0; q < sizes.warmUp(); q++) {
            t.history(sql.apply(q), since);
        }
        long[] nanos = new long[sizes.queries()];
        long rows = 0;
        for (int q = 0; q < nanos.length; q++) {
            long start = System.nanoTime();
            TableHistory h = t.history(sql.apply(q), since);
            nanos[q] = System.nanoTime() - start;
            rows += h.rows().size();
        }
        Arrays.sort(nanos);
        int p99 = (int) Math.ceil(nanos.length * 0.99) - 1;
        figure.add(series, sizes.hosts(), nanos[nanos.length / 2] / 1e6, nanos[p99] / 1e6,
                nanos[nanos.length - 1] / 1e6, nanos.length, (double) rows / nanos.length);
    }

    private static double median(Figure f, String series) {
        double[] ys = f.series.get(series).stream().mapToDouble(p -> p[1]).sorted().toArray();
        return ys.length % 2 == 1 ? ys[ys.length / 2] : (ys[ys.length / 2 - 1] + ys[ys.length / 2]) / 2;
    }

    /** The goal lines, for the summary. */
    static List<String> goals(List<Figure> figures) {
        List<String> lines = new ArrayList<>();
        for (Figure f : figures) {
            if (f.id.equals(INGEST)) {
                f.notes.stream().filter(n -> n.startsWith("- Goal") || n.startsWith("- PostgreSQL"))
                        .map(n -> "- Archive: " + n.substring(2)).forEach(lines::add);
            }
        }
        return lines;
    }

    private static void delete(Path dir) throws IOException {
        try (Stream<Path> files = Files.walk(dir)) {
            for (Path p : files.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        }
    }
}
