package io.gma.client;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.gma.tables.ColumnType;
import io.gma.tables.Row;
import io.gma.tables.TableQuery;
import io.gma.tables.TableSchema;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The latest row per key without boxed keys: the same keys as the boxed values' equality makes (a list of the
 * key's values, what the producer kept before), whatever the key's types; a row replaced in place; copies that a
 * later insert leaves alone; and the purge by insert time.
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class LatestRowsTest {
    private static final TableSchema MIXED = TableSchema.builder("mixed").column("host", ColumnType.STRING)
            .column("cpu", ColumnType.INTEGER).column("ratio", ColumnType.DOUBLE).column("up", ColumnType.BOOLEAN)
            .column("at", ColumnType.TIMESTAMP).column("load1", ColumnType.DOUBLE)
            .primaryKey("up", "ratio", "host", "cpu", "at").build();

    private static Row row(String host, long cpu, double ratio, boolean up, long at, double load) {
        return Row.of(host, cpu, ratio, up, at, load);
    }

    @Test
    void keysAreTheBoxedValuesKeys() {
        Random r = new Random(23);
        LatestRows latest = new LatestRows(MIXED);
        Map<List<Object>, Row> boxed = new HashMap<>();
        String[] hosts = {"a", "b", "node-0042.cardiff.gma", "\u00e9"};
        double[] ratios = {0.0, -0.0, Double.NaN, Double.longBitsToDouble(0x7FF0000000000001L), 1.5, -1.5};
        for (int i = 0; i < 20_000; i++) {
            Row row = row(hosts[r.nextInt(hosts.length)], r.nextInt(3) - 1, ratios[r.nextInt(ratios.length)],
                    r.nextBoolean(), r.nextInt(3) + (1L << 40), i);
            latest.put(row, i);
            boxed.put(List.of(row.get(3), row.get(2), row.get(0), row.get(1), row.get(4)), row);
        }
        assertEquals(boxed.size(), latest.size());
        Map<Row, Long> kept = new HashMap<>();
        for (LatestRows.Kept k : latest.since(Long.MIN_VALUE, null)) {
            kept.put(k.row(), k.insertMicros());
        }
        assertEquals(boxed.values().stream().sorted(LatestRowsTest::byLoad).toList(),
                kept.keySet().stream().sorted(LatestRowsTest::byLoad).toList());
        kept.forEach((row, micros) -> assertEquals((long) row.getDouble(5), micros)); // the newest of its key
    }

    @Test
    void putsAndPurgesInAnyOrderKeepWhatAMapOfTheBoxedKeysKeeps() {
        Random r = new Random(42);
        LatestRows latest = new LatestRows(MIXED);
        Map<List<Object>, LatestRows.Kept> boxed = new HashMap<>();
        for (int i = 0; i < 50_000; i++) {
            if (r.nextInt(500) == 0) {
                long oldest = i - r.nextInt(2_000);
                latest.purge(oldest);
                boxed.values().removeIf(k -> k.insertMicros() < oldest);
            } else {
                // few hosts and CPUs: keys come again, and clusters of probes form and break up
                Row row = row("h" + r.nextInt(40), r.nextInt(50), 0.5, true, 7, i);
                latest.put(row, i);
                boxed.put(List.of(row.get(0), row.get(1)), new LatestRows.Kept(i, row));
            }
            if (i % 997 == 0 || i == 49_999) {
                assertEquals(boxed.size(), latest.size(), "after " + i);
                List<LatestRows.Kept> kept = new ArrayList<>(latest.since(Long.MIN_VALUE, null));
                kept.sort((x, y) -> Long.compare(x.insertMicros(), y.insertMicros()));
                assertEquals(boxed.values().stream().sorted((x, y) -> Long.compare(x.insertMicros(),
                        y.insertMicros())).toList(), kept, "after " + i);
            }
        }
    }

    private static int byLoad(Row a, Row b) {
        return Double.compare(a.getDouble(5), b.getDouble(5));
    }

    @Test
    void aRowIsReplacedInPlaceAndCopiesStayAsTaken() {
        LatestRows latest = new LatestRows(MIXED);
        latest.put(row("a", 1, 0.5, true, 7, 1.0), 100);
        List<LatestRows.Kept> before = latest.since(Long.MIN_VALUE, null);
        latest.put(row("a", 1, 0.5, true, 7, 2.0), 200);
        latest.put(row("a", 2, 0.5, true, 7, 3.0), 300);
        assertEquals(List.of(new LatestRows.Kept(100, row("a", 1, 0.5, true, 7, 1.0))), before);
        assertEquals(2, latest.size());
        List<LatestRows.Kept> now = new ArrayList<>(latest.since(200, null));
        now.sort((x, y) -> Long.compare(x.insertMicros(), y.insertMicros()));
        assertEquals(List.of(new LatestRows.Kept(200, row("a", 1, 0.5, true, 7, 2.0)),
                new LatestRows.Kept(300, row("a", 2, 0.5, true, 7, 3.0))), now);
        assertEquals(List.of(new LatestRows.Kept(300, row("a", 2, 0.5, true, 7, 3.0))), latest.since(0,
                TableQuery.parse("SELECT * FROM mixed WHERE load1 > 2.5").bind(MIXED).filter()));
        latest.purge(250);
        assertEquals(List.of(new LatestRows.Kept(300, row("a", 2, 0.5, true, 7, 3.0))),
                latest.since(Long.MIN_VALUE, null));
        latest.purge(301);
        assertEquals(0, latest.size());
    }
}
