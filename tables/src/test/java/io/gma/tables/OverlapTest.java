package io.gma.tables;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(value = 30, unit = TimeUnit.SECONDS)
class OverlapTest {
    private static TableSchema producer(String predicate) {
        return TableSchema.builder("host_cpu").column("site", ColumnType.STRING).column("host", ColumnType.STRING)
                .column("cpu", ColumnType.INTEGER).column("load1", ColumnType.DOUBLE)
                .column("up", ColumnType.BOOLEAN).primaryKey("site", "host", "cpu").predicate(predicate).build();
    }

    private static boolean overlap(String where, String predicate) {
        return TableQuery.parse("SELECT * FROM host_cpu WHERE " + where).mayOverlap(producer(predicate));
    }

    @Test
    void disjointEqualitiesAndListsDoNotOverlap() {
        assertFalse(overlap("site = 'lyon'", "site = 'cardiff'"));
        assertFalse(overlap("site IN ('a', 'b')", "site = 'cardiff'"));
        assertFalse(overlap("site IN ('a', 'b')", "site IN ('c', 'd')"));
        assertFalse(overlap("site = 'lyon' AND load1 > 4", "site = 'cardiff'"));
        assertFalse(overlap("cpu = 2", "cpu IN (0, 1)"));
        assertFalse(overlap("cpu > 1", "cpu IN (0, 1)"));
        assertFalse(overlap("site LIKE 'ly%'", "site IN ('cardiff', 'paris')"));
        assertFalse(overlap("site IS NULL", "site = 'cardiff'"));
        assertFalse(overlap("site <> 'cardiff'", "site = 'cardiff'"));
        assertFalse(overlap("NOT site = 'cardiff'", "site = 'cardiff'"));
        assertFalse(overlap("site NOT IN ('cardiff')", "site = 'cardiff'"));
        assertFalse(overlap("(site = 'a' OR site = 'b') AND load1 > 1", "site = 'cardiff' AND host = 'n1'"));
        assertFalse(overlap("up = FALSE", "up = TRUE"));
        assertFalse(overlap("site = 'lyon' OR host = 'n2'", "site = 'cardiff' AND host = 'n1'"));
    }

    @Test
    void possibleOverlapsAreKept() {
        assertTrue(overlap("site = 'cardiff'", "site = 'cardiff'"));
        assertTrue(overlap("site IN ('lyon', 'cardiff')", "site = 'cardiff'"));
        assertTrue(overlap("site = 'lyon' OR load1 > 4", "site = 'cardiff'"));
        assertTrue(overlap("host = 'n9'", "site = 'cardiff'"));
        assertTrue(overlap("load1 > 4", "site = 'cardiff'"));
        assertTrue(overlap("site LIKE 'car%'", "site = 'cardiff'"));
        assertTrue(overlap("cpu >= 1", "cpu IN (0, 1)"));
        assertTrue(overlap("site IS NOT NULL", "site = 'cardiff'"));
        assertTrue(overlap("NOT site = 'lyon'", "site = 'cardiff'"));
        assertTrue(overlap("site = 'lyon'", null)); // no predicate: anything may come
        assertTrue(TableQuery.parse("SELECT * FROM host_cpu").mayOverlap(producer("site = 'cardiff'")));
        // independent parts are over-approximated: this cannot hold, but saying "may" is safe
        assertTrue(overlap("site = 'a' AND site = 'b'", "site IN ('a', 'b')"));
    }

    @Test
    void integerPredicatesMatchNumbersExactly() {
        assertFalse(overlap("cpu = 1.5", "cpu = 1"));
        assertTrue(overlap("cpu = 1.0", "cpu = 1"));
        assertTrue(overlap("cpu < 1.5", "cpu = 1.0"));
    }

    @Test
    void aQueryThatDoesNotFitTheProducerIsRefused() {
        assertEquals("column region is not a column of table host_cpu; its columns are [site, host, cpu, load1,"
                + " up]", assertThrows(TableException.class, () -> overlap("region = 'eu'", "site = 'a'"))
                        .getMessage());
    }
}
