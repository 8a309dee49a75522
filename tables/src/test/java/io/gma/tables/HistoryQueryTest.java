package io.gma.tables;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * History queries ({@link TableQuery#parseHistory}): a table query plus {@code ORDER BY insert_time} and
 * {@code LIMIT}, nothing more; and the values a WHERE requires, which a store narrows by.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class HistoryQueryTest {
    private static String refused(String sql) {
        return assertThrows(TableException.class, () -> TableQuery.parseHistory(sql)).getMessage();
    }

    @Test
    void takesOrderByInsertTimeAndLimit() {
        TableQuery plain = TableQuery.parseHistory("SELECT host, load1 FROM host_cpu WHERE host = 'n1'");
        assertTrue(plain.isHistory());
        assertFalse(plain.descending());
        assertEquals(-1, plain.limit());
        TableQuery last = TableQuery.parseHistory("SELECT * FROM host_cpu ORDER BY insert_time DESC LIMIT 10");
        assertTrue(last.descending());
        assertEquals(10, last.limit());
        assertFalse(TableQuery.parseHistory("SELECT * FROM host_cpu ORDER BY INSERT_TIME ASC").descending());
        assertFalse(TableQuery.parseHistory("SELECT * FROM host_cpu ORDER BY host_cpu.insert_time").descending());
        assertEquals(TableQuery.MAX_LIMIT, TableQuery.parseHistory("SELECT * FROM host_cpu LIMIT "
                + TableQuery.MAX_LIMIT).limit());
        // what continuous and latest queries take, a history query takes too, and binds the same way
        BoundQuery b = TableQuery.parseHistory("SELECT host FROM host_cpu WHERE load1 > 4 ORDER BY insert_time")
                .bind(TableQueryTest.CPU);
        assertTrue(b.filter().test(TableQueryTest.CARDIFF));
        assertFalse(TableQuery.parse("SELECT * FROM host_cpu").isHistory());
    }

    @Test
    void continuousAndLatestQueriesStillRefuseThem() {
        assertEquals("the query uses ORDER BY, which a table query does not allow", assertThrows(
                TableException.class, () -> TableQuery.parse("SELECT * FROM host_cpu ORDER BY insert_time"))
                .getMessage());
        assertEquals("the query uses LIMIT, which a table query does not allow", assertThrows(
                TableException.class, () -> TableQuery.parse("SELECT * FROM host_cpu LIMIT 1")).getMessage());
    }

    @Test
    void refusesEverythingElseNamingIt() {
        List<String[]> corpus = List.of(
                new String[] {"SELECT * FROM host_cpu ORDER BY host",
                    "the query orders by host; a history query orders by insert_time (the insert time), ASC or"
                            + " DESC"},
                new String[] {"SELECT * FROM host_cpu ORDER BY insert_time, host",
                    "the query orders by 2 things; a history query orders by insert_time alone"},
                new String[] {"SELECT * FROM host_cpu ORDER BY insert_time NULLS FIRST",
                    "the query orders with NULLS FIRST or NULLS LAST; insert_time is never NULL, so leave it out"},
                new String[] {"SELECT * FROM host_cpu ORDER BY 1",
                    "the query orders by 1; a history query orders by insert_time (the insert time), ASC or DESC"},
                new String[] {"SELECT * FROM host_cpu ORDER BY LOWER(host)",
                    "the query orders by LOWER(host); a history query orders by insert_time (the insert time), ASC"
                            + " or DESC"},
                new String[] {"SELECT * FROM host_cpu ORDER BY host_mem.insert_time",
                    "column host_mem.insert_time names host_mem, which is not the table the query reads"
                            + " (host_cpu)"},
                new String[] {"SELECT * FROM host_cpu LIMIT 0", "LIMIT 0 is outside 1..2147483647"},
                new String[] {"SELECT * FROM host_cpu LIMIT 2147483648", "LIMIT 2147483648 is outside"
                        + " 1..2147483647"},
                new String[] {"SELECT * FROM host_cpu LIMIT ALL",
                    "LIMIT ALL is not a whole number; a history query's LIMIT is 1..2147483647"},
                new String[] {"SELECT * FROM host_cpu LIMIT NULL",
                    "LIMIT NULL is not a whole number; a history query's LIMIT is 1..2147483647"},
                new String[] {"SELECT * FROM host_cpu LIMIT 1 + 1",
                    "LIMIT 1 + 1 is not a whole number; a history query's LIMIT is 1..2147483647"},
                new String[] {"SELECT * FROM host_cpu LIMIT ?",
                    "LIMIT ? is not a whole number; a history query's LIMIT is 1..2147483647"},
                new String[] {"SELECT * FROM host_cpu LIMIT (SELECT 1)",
                    "LIMIT (SELECT 1) is not a whole number; a history query's LIMIT is 1..2147483647"},
                new String[] {"SELECT * FROM host_cpu LIMIT 5, 10",
                    "the query uses OFFSET, which a history query does not allow; narrow the period or the WHERE"
                            + " instead"},
                new String[] {"SELECT * FROM host_cpu LIMIT 10 OFFSET 5",
                    "the query uses OFFSET, which a table query does not allow"},
                new String[] {"SELECT * FROM host_cpu FETCH FIRST 5 ROWS ONLY",
                    "the query uses FETCH, which a table query does not allow"},
                new String[] {"SELECT * FROM host_cpu ORDER BY insert_time DESC LIMIT 1 UNION SELECT * FROM h",
                    "the query combines SELECTs with UNION, INTERSECT or EXCEPT; a table query is one SELECT"},
                new String[] {"SELECT DISTINCT host FROM host_cpu ORDER BY insert_time",
                    "the query uses DISTINCT, which a table query does not allow"},
                new String[] {"SELECT * FROM host_cpu GROUP BY host ORDER BY insert_time",
                    "the query uses GROUP BY, which a table query does not allow"});
        List<String> failures = new ArrayList<>();
        for (String[] c : corpus) {
            String got;
            try {
                TableQuery.parseHistory(c[0]);
                got = "(accepted)";
            } catch (TableException e) {
                got = e.getMessage();
            }
            if (!got.equals(c[1])) {
                failures.add(c[0] + "\n    expected: " + c[1] + "\n    but was:  " + got);
            }
        }
        if (!failures.isEmpty()) {
            fail(failures.size() + " history queries were not refused as expected:\n" + String.join("\n", failures));
        }
    }

    @Test
    void theWholeHostileCorpusIsRefusedAsHistoryToo() {
        for (HostileQueryTest.Case c : HostileQueryTest.corpus()) {
            if (c.sql().contains("ORDER BY") || c.sql().contains("LIMIT")) {
                continue; // the clauses history allows, with their own sentences above
            }
            assertThrows(TableException.class, () -> TableQuery.parseHistory(c.sql()), c.sql());
        }
    }

    @Test
    void requiredValuesComeFromEqualitiesAndInAtTheTop() {
        TableSchema cpu = TableQueryTest.CPU;
        assertEquals(Map.of("host", List.of("n1")), TableQuery.parseHistory("SELECT * FROM host_cpu WHERE host ="
                + " 'n1' AND load1 > 4").bind(cpu).requiredValues());
        assertTrue(TableQuery.parse("SELECT * FROM host_cpu WHERE host IN ('a', 'b') AND cpu = 1 OR cpu = 2")
                .bind(cpu).requiredValues().isEmpty());
        assertEquals(Map.of("host", List.of("a", "b"), "cpu", List.of(1L, 2L), "up", List.of(true)),
                TableQuery.parse("SELECT * FROM host_cpu WHERE host IN ('a', 'b') AND cpu IN (1, 2) AND up = TRUE")
                        .bind(cpu).requiredValues());
        // ANDed twice: what both allow
        assertEquals(Map.of("host", List.of("b")), TableQuery.parse("SELECT * FROM host_cpu WHERE host IN ('a',"
                + " 'b') AND host = 'b'").bind(cpu).requiredValues());
        assertEquals(Map.of("sampled", List.of(1_714_564_800_000_000L, 5L)), TableQuery.parse("SELECT * FROM"
                + " host_cpu WHERE sampled IN (TIMESTAMP '2024-05-01 12:00:00', 5)").bind(cpu).requiredValues());
        // not certain: OR at the top, NOT IN, <>, a DOUBLE column, an INTEGER column against 3.0
        for (String where : List.of("host = 'a' OR host = 'b'", "host NOT IN ('a')", "host <> 'a'", "load1 = 1",
                "cpu = 3.0", "NOT (host = 'a')", "host LIKE 'a'")) {
            assertTrue(TableQuery.parse("SELECT * FROM host_cpu WHERE " + where).bind(cpu).requiredValues()
                    .isEmpty(), where);
        }
        assertTrue(TableQuery.parse("SELECT * FROM host_cpu").bind(cpu).requiredValues().isEmpty());
    }
}
