package io.gma.client;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.gma.tables.BoundQuery;
import io.gma.tables.ColumnType;
import io.gma.tables.Row;
import io.gma.tables.TableQuery;
import io.gma.tables.TableSchema;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The order of a history answer when rows share an insert time (two inserts in one microsecond): the newest
 * first means the later inserted first, at the producer that sorts what it kept, and again at the consumer that
 * merges the producers' answers.
 */
class HistoryOrderTest {
    private static final TableSchema CPU = TableSchema.builder("host_cpu").column("host", ColumnType.STRING)
            .column("load1", ColumnType.DOUBLE).primaryKey("host").build();

    private static BoundQuery query(String sql) {
        return TableQuery.parseHistory(sql).bind(CPU);
    }

    private static TableRow row(String producer, long micros, double load) {
        return new TableRow(producer, micros, Row.of("n", load));
    }

    private static List<Double> loads(List<TableRow> rows) {
        return rows.stream().map(r -> r.row().getDouble(1)).toList();
    }

    @Test
    void rowsOfOneMicrosecondComeNewestFirstAtTheProducerAndStaySoThroughTheConsumersMerge() {
        BoundQuery newest = query("SELECT * FROM host_cpu ORDER BY insert_time DESC LIMIT 3");
        // kept in the order inserted: 47 and 48 in the same microsecond
        List<TableRow> kept = List.of(row("p", 10, 46.0), row("p", 20, 47.0), row("p", 20, 48.0),
                row("p", 30, 49.0));
        List<TableRow> answer = KeptHistory.ordered(kept, newest);
        assertEquals(List.of(49.0, 48.0, 47.0), loads(answer));
        // the consumer merges it with another producer's answer (also newest first), and keeps the order
        List<TableRow> other = List.of(row("q", 25, 1.0), row("q", 5, 2.0));
        List<TableRow> both = new java.util.ArrayList<>(answer);
        both.addAll(other);
        assertEquals(List.of(49.0, 1.0, 48.0), loads(KeptHistory.merged(both, newest)));
        assertEquals(List.of(49.0, 48.0, 47.0), loads(KeptHistory.merged(answer, newest)));

        BoundQuery oldest = query("SELECT * FROM host_cpu");
        List<TableRow> ascending = KeptHistory.ordered(kept, oldest);
        assertEquals(List.of(46.0, 47.0, 48.0, 49.0), loads(ascending));
        assertEquals(List.of(46.0, 47.0, 48.0, 49.0), loads(KeptHistory.merged(ascending, oldest)));
    }
}
