package io.gma.archiver;

import io.gma.wire.PrometheusText;
import java.util.Map;
import java.util.function.ToLongFunction;

/**
 * The archiver's {@code GET /metrics} ({@link Archiver.Builder#http}), in the Prometheus text format 0.0.4: what
 * {@link ArchiverStats} counts, per table ({@code table="host_cpu"}), and its gauges.
 */
final class ArchiverMetrics {
    private ArchiverMetrics() {
    }

    static String page(Archiver archiver) {
        Map<String, Counters> tables = archiver.tableCounters();
        ArchiverStats stats = archiver.stats();
        StringBuilder out = new StringBuilder(2048);
        perTable(out, tables, "gma_archiver_rows_stored_total", "Rows written to the database, each once (those"
                + " caught up included)", c -> c.stored.get());
        perTable(out, tables, "gma_archiver_rows_duplicate_total", "Rows that came again (a re-delivery, a catch-up"
                + " that overlapped) and were not stored twice", c -> c.duplicates.get());
        perTable(out, tables, "gma_archiver_rows_caught_up_total", "Rows stored from a producer's history, asked for"
                + " when the archiver found the producer", c -> c.caughtUp.get());
        perTable(out, tables, "gma_archiver_gaps_total", "Periods in which a producer's rows may be missing: not"
                + " followed, and no history back that far (each logged)", c -> c.gaps.get());
        perTable(out, tables, "gma_archiver_gap_seconds_total", "The length of those periods together, in seconds",
                c -> c.gapMicros.get() / 1_000_000);
        perTable(out, tables, "gma_archiver_rows_dropped_total", "Rows that came while the write queue was full, not"
                + " stored (their producer is asked for them again)", c -> c.dropped.get());
        perTable(out, tables, "gma_archiver_rows_refused_total", "Rows the database refused, not stored",
                c -> c.refused.get());
        perTable(out, tables, "gma_archiver_rows_deleted_total", "Rows deleted as older than the retention",
                c -> c.deleted.get());
        PrometheusText.counter(out, "gma_archiver_store_failures_total", "Writes that failed because the database"
                + " could not be reached, and were tried again", null, stats.storeFailures());
        PrometheusText.gauge(out, "gma_archiver_queued_rows", "Rows waiting to be written now", null, stats.queued());
        PrometheusText.gauge(out, "gma_archiver_tables_archived", "Tables archived now", null,
                stats.tablesArchived());
        PrometheusText.gauge(out, "gma_archiver_tables_waiting", "Tables named to archive that the registry does not"
                + " declare yet", null, stats.tablesWaiting());
        PrometheusText.gauge(out, "gma_archiver_live_charts", "Live charts of the dashboard that this archiver"
                + " feeds now", null, archiver.liveCharts());
        return out.toString();
    }

    private static void perTable(StringBuilder out, Map<String, Counters> tables, String name, String help,
            ToLongFunction<Counters> value) {
        PrometheusText.metric(out, name, "counter", help);
        tables.forEach((table, c) -> PrometheusText.sample(out, name, PrometheusText.label("table", table),
                value.applyAsLong(c)));
    }
}
