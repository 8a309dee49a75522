package io.gma.tables;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(value = 30, unit = TimeUnit.SECONDS)
class TableQueryTest {
    static final TableSchema CPU = TableSchema.builder("host_cpu").column("site", ColumnType.STRING)
            .column("host", ColumnType.STRING).column("cpu", ColumnType.INTEGER).column("load1", ColumnType.DOUBLE)
            .column("up", ColumnType.BOOLEAN).column("sampled", ColumnType.TIMESTAMP)
            .primaryKey("site", "host", "cpu").build();

    static final Row CARDIFF = Row.of("cardiff", "node-1", 3L, 4.5, true, 1_714_564_800_000_000L);
    static final Row LYON_NULLS = Row.of("lyon", "node-2", 0L, null, null, null);

    private static boolean matches(String where, Row row) {
        return TableQuery.parse("SELECT * FROM host_cpu WHERE " + where).bind(CPU).filter().test(row);
    }

    private static String refusedBind(String sql) {
        return assertThrows(TableException.class, () -> TableQuery.parse(sql).bind(CPU)).getMessage();
    }

    @Test
    void parsesProjectionTableAndWhere() {
        TableQuery q = TableQuery.parse("SELECT host, LOAD1 FROM Host_Cpu WHERE load1 > 4");
        assertEquals("host_cpu", q.table());
        assertEquals(List.of("host", "load1"), q.columns());
        assertFalse(q.selectsAll());
        assertTrue(q.hasWhere());
        BoundQuery b = q.bind(CPU);
        assertArrayEquals(new int[] {1, 3}, b.projection());
        assertEquals(List.of(new Column("host", ColumnType.STRING), new Column("load1", ColumnType.DOUBLE)),
                b.resultColumns());
        assertEquals(Row.of("node-1", 4.5), b.project(CARDIFF));
        assertTrue(b.filter().test(CARDIFF));

        TableQuery all = TableQuery.parse("select * from host_cpu;");
        assertTrue(all.selectsAll());
        assertFalse(all.hasWhere());
        assertArrayEquals(new int[] {0, 1, 2, 3, 4, 5}, all.bind(CPU).projection());
        assertTrue(all.bind(CPU).filter().test(LYON_NULLS));
        assertEquals(List.of("host"), TableQuery.parse("SELECT host_cpu.host, \"host\" FROM host_cpu")
                .columns().subList(0, 1));
    }

    @Test
    void comparesEveryType() {
        assertTrue(matches("site = 'cardiff'", CARDIFF));
        assertTrue(matches("'cardiff' = site", CARDIFF));
        assertTrue(matches("site <> 'lyon' AND site != 'paris'", CARDIFF));
        assertTrue(matches("site < 'd' AND site >= 'cardiff' AND site <= 'cardiff' AND site > 'c'", CARDIFF));
        assertTrue(matches("cpu = 3 AND cpu >= 3 AND cpu < 4 AND 2 < cpu", CARDIFF));
        assertTrue(matches("load1 > 4 AND load1 = 4.5 AND load1 < 4.6 AND load1 <> -1", CARDIFF));
        assertTrue(matches("up = TRUE AND up <> false", CARDIFF));
        assertTrue(matches("sampled = TIMESTAMP '2024-05-01 12:00:00'", CARDIFF));
        assertTrue(matches("sampled = TIMESTAMP '2024-05-01T14:00:00+02:00'", CARDIFF));
        assertTrue(matches("sampled > TIMESTAMP '2024-05-01' AND sampled < 1714564800000001", CARDIFF));
        assertTrue(matches("sampled >= TIMESTAMP '2024-05-01 12:00:00.000000Z'", CARDIFF));
        assertFalse(matches("sampled > TIMESTAMP '2024-05-01 12:00:00'", CARDIFF));
        assertTrue(matches("site = 'it''s' OR host = 'node-1'", CARDIFF));
    }

    @Test
    void comparesNumbersExactly() {
        Row big = Row.of("a", "b", 9_007_199_254_740_993L, 9_007_199_254_740_992.0, false, 0L);
        // as doubles, 9007199254740993 and 9007199254740992 are equal; exactly, they are not
        assertFalse(matches("cpu = 9007199254740992.0", big));
        assertTrue(matches("cpu > 9007199254740992.0", big));
        assertFalse(matches("load1 = 9007199254740993", big));
        assertTrue(matches("load1 < 9007199254740993", big));
        assertTrue(matches("load1 IN (9007199254740992, 1)", big));
        assertFalse(matches("load1 IN (9007199254740993)", big));
        assertTrue(matches("cpu > 3.5 AND cpu <> 3.5", CARDIFF) == false);
        assertTrue(matches("cpu < 3.5 AND cpu > 2.5 AND cpu <> 3.5", CARDIFF));
        assertFalse(matches("cpu = 3.5", CARDIFF));
        assertTrue(matches("cpu IN (3.0, 7)", CARDIFF));
        assertTrue(matches("cpu < 1e300 AND cpu > -1e300", CARDIFF));
        assertTrue(matches("cpu = -9223372036854775808", Row.of("a", "b", Long.MIN_VALUE, 0.0, false, 0L)));
        // -0.0 equals 0.0, NaN equals NaN and is above every number (PostgreSQL's order)
        Row nan = Row.of("a", "b", 0L, Double.NaN, false, 0L);
        assertTrue(matches("load1 > 1e300", nan));
        assertFalse(matches("load1 = 0", nan));
        assertTrue(matches("load1 = 0 AND load1 IN (0.0)", Row.of("a", "b", 0L, -0.0, false, 0L)));
    }

    @Test
    void ordersStringsByCodePoint() {
        // U+FF5E (one UTF-16 unit) sorts below U+1F600 (two units starting 0xD83D) by code point, not by unit
        Row fullwidth = Row.of("\uff5e", "h", 0L, null, null, null);
        assertTrue(matches("site < '\ud83d\ude00'", fullwidth));
        assertTrue(matches("site > 'z'", fullwidth));
    }

    @Test
    void inListsAndNotIn() {
        assertTrue(matches("site IN ('lyon', 'cardiff') AND host = 'node-1'", CARDIFF));
        assertTrue(matches("host = 'node-1' AND site IN ('lyon', 'cardiff') AND cpu IN (1, 2, 3)", CARDIFF));
        assertTrue(matches("site IN ('x') OR host = 'node-1'", CARDIFF));
        assertFalse(matches("site NOT IN ('lyon', 'cardiff') AND host = 'node-1'", CARDIFF));
        assertTrue(matches("up IN (TRUE)", CARDIFF));
        assertTrue(matches("site NOT IN ('x', 'y')", CARDIFF));
        assertTrue(matches("NOT (site IN ('a', 'b') OR cpu IN (7)) AND up = TRUE", CARDIFF));
    }

    @Test
    void likeMatchesWithoutRegularExpressions() {
        assertTrue(matches("host LIKE 'node-%'", CARDIFF));
        assertTrue(matches("host LIKE 'node-_'", CARDIFF));
        assertTrue(matches("host LIKE '%-1'", CARDIFF));
        assertTrue(matches("host LIKE '%od%1'", CARDIFF));
        assertTrue(matches("host LIKE '%'", CARDIFF));
        assertTrue(matches("host LIKE 'n%e%1'", CARDIFF));
        assertFalse(matches("host LIKE 'node'", CARDIFF));
        assertFalse(matches("host LIKE 'Node-1'", CARDIFF));
        assertFalse(matches("host LIKE '_'", CARDIFF));
        assertTrue(matches("host NOT LIKE 'x%'", CARDIFF));
        Row percent = Row.of("100%", "a_b", 0L, null, null, null);
        assertTrue(matches("site LIKE '100!%' ESCAPE '!'", percent));
        assertFalse(matches("site LIKE '10!%' ESCAPE '!'", percent));
        assertTrue(matches("host LIKE 'a!_b' ESCAPE '!'", percent));
        assertFalse(matches("host LIKE 'a!_c' ESCAPE '!'", percent));
        Row emoji = Row.of("\ud83d\ude00x", "h", 0L, null, null, null);
        assertTrue(matches("site LIKE '_x'", emoji)); // _ is one code point, though two UTF-16 units
        assertTrue(matches("site LIKE '%x'", emoji));
        assertFalse(matches("site LIKE '__x'", emoji));
        LikePattern p = LikePattern.compile("%a%a%a%a%a%a%a%b", -1);
        assertFalse(p.matches("a".repeat(65_535)));
        assertTrue(p.matches("a".repeat(1000) + "b"));
        assertTrue(LikePattern.compile("ab%ba", -1).matches("aba") == false);
        assertTrue(LikePattern.compile("ab%ba", -1).matches("abba"));
        assertTrue(LikePattern.compile("", -1).matches(""));
        assertFalse(LikePattern.compile("", -1).matches("a"));
    }

    @Test
    void followsThreeValuedLogic() {
        // load1, up and sampled are NULL: each comparison is UNKNOWN, and UNKNOWN is not kept
        assertFalse(matches("load1 > 1", LYON_NULLS));
        assertFalse(matches("load1 <= 1", LYON_NULLS));
        assertFalse(matches("NOT load1 > 1", LYON_NULLS));
        assertFalse(matches("load1 = 1 OR NOT load1 = 1", LYON_NULLS));
        assertFalse(matches("up = TRUE OR up = FALSE", LYON_NULLS));
        assertFalse(matches("load1 IN (1, 2)", LYON_NULLS));
        assertFalse(matches("load1 NOT IN (1, 2)", LYON_NULLS));
        // UNKNOWN OR TRUE is TRUE; UNKNOWN AND FALSE is FALSE, so NOT of it is TRUE
        assertTrue(matches("load1 > 1 OR site = 'lyon'", LYON_NULLS));
        assertFalse(matches("load1 > 1 AND site = 'lyon'", LYON_NULLS));
        assertTrue(matches("NOT (load1 > 1 AND site = 'paris')", LYON_NULLS));
        assertFalse(matches("NOT (load1 > 1 AND site = 'lyon')", LYON_NULLS));
        assertTrue(matches("load1 IS NULL AND up IS NULL AND site IS NOT NULL", LYON_NULLS));
        assertFalse(matches("NOT load1 IS NULL", LYON_NULLS));
        assertTrue(matches("load1 IS NOT NULL", CARDIFF));
    }

    @Test
    void bindNamesUnknownColumnsAndTypeMismatches() {
        assertEquals("column lod1 is not a column of table host_cpu; its columns are [site, host, cpu, load1, up,"
                + " sampled]", refusedBind("SELECT * FROM host_cpu WHERE lod1 > 4"));
        assertEquals("column node is not a column of table host_cpu; its columns are [site, host, cpu, load1, up,"
                + " sampled]", refusedBind("SELECT node FROM host_cpu"));
        assertEquals("the query reads table host_mem, but the schema is of table host_cpu",
                refusedBind("SELECT * FROM host_mem"));
        assertEquals("column load1 is DOUBLE and cannot be compared with 'high' (a string) by >",
                refusedBind("SELECT * FROM host_cpu WHERE load1 > 'high'"));
        assertEquals("column site is STRING and cannot be compared with 4 (an integer) by IN",
                refusedBind("SELECT * FROM host_cpu WHERE site IN ('a', 4)"));
        assertEquals("column up is BOOLEAN and cannot be compared with 1 (an integer) by =",
                refusedBind("SELECT * FROM host_cpu WHERE up = 1"));
        assertEquals("column up is BOOLEAN, which has no order; compare it with = or <>, not <",
                refusedBind("SELECT * FROM host_cpu WHERE up < TRUE"));
        assertEquals("column sampled is TIMESTAMP and cannot be compared with '2024-05-01' (a string) by >;"
                + " write TIMESTAMP '2024-05-01'", refusedBind("SELECT * FROM host_cpu WHERE sampled > '2024-05-01'"));
        assertEquals("column cpu is INTEGER and cannot be compared with TIMESTAMP '2024-05-01' (a timestamp) by =",
                refusedBind("SELECT * FROM host_cpu WHERE cpu = TIMESTAMP '2024-05-01'"));
        assertEquals("column cpu is INTEGER; LIKE needs a STRING column",
                refusedBind("SELECT * FROM host_cpu WHERE cpu LIKE '1%'"));
        assertEquals("TIMESTAMP 'yesterday' is not a date and time such as '2024-05-01 12:00:00',"
                + " '2024-05-01T12:00:00.250Z' or '2024-05-01 14:00:00+02:00'",
                refusedBind("SELECT * FROM host_cpu WHERE sampled > TIMESTAMP 'yesterday'"));
    }

    @Test
    void filterAllocatesNothing() {
        RowFilter f = TableQuery.parse("SELECT * FROM host_cpu WHERE site IN ('lyon', 'cardiff') AND load1 > 4"
                + " AND host LIKE 'node-%' AND (up = TRUE OR sampled IS NULL) AND cpu <> 7").bind(CPU).filter();
        com.sun.management.ThreadMXBean mx =
                (com.sun.management.ThreadMXBean) java.lang.management.ManagementFactory.getThreadMXBean();
        long id = Thread.currentThread().getId();
        int kept = 0;
        for (int i = 0; i < 20_000; i++) { // warm up, so that the JIT does not count
            kept += f.test(CARDIFF) ? 1 : 0;
        }
        long before = mx.getThreadAllocatedBytes(id);
        for (int i = 0; i < 100_000; i++) {
            kept += f.test(CARDIFF) ? 1 : 0;
        }
        long allocated = mx.getThreadAllocatedBytes(id) - before;
        assertEquals(120_000, kept);
        // 100,000 evaluations; boxing or a regex per row would allocate megabytes
        assertTrue(allocated < 64 * 1024, allocated + " bytes allocated");
    }
}
