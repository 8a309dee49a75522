package io.gma.tables;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(value = 30, unit = TimeUnit.SECONDS)
class TableSchemaTest {
    static TableSchema.Builder hostCpu() {
        return TableSchema.builder("host_cpu").column("site", ColumnType.STRING).column("host", ColumnType.STRING)
                .column("load1", ColumnType.DOUBLE).column("up", ColumnType.BOOLEAN)
                .column("sampled", ColumnType.TIMESTAMP).primaryKey("site", "host");
    }

    private static String refused(Runnable r) {
        return assertThrows(TableException.class, r::run).getMessage();
    }

    @Test
    void buildsWithDefaults() {
        TableSchema s = hostCpu().build();
        assertEquals("host_cpu", s.name());
        assertEquals(List.of("site", "host", "load1", "up", "sampled"), s.columnNames());
        assertEquals(List.of("site", "host"), s.primaryKey());
        assertEquals(Optional.empty(), s.predicate());
        assertEquals(Duration.ofMinutes(10), s.latestRetention());
        assertEquals(Duration.ZERO, s.historyRetention());
        assertEquals(2, s.indexOf("load1"));
        assertEquals(-1, s.indexOf("load5"));
        assertEquals(true, s.isKey(1));
        assertEquals(false, s.isKey(2));
        assertEquals("host_cpu (site STRING, host STRING, load1 DOUBLE, up BOOLEAN, sampled TIMESTAMP,"
                + " PRIMARY KEY (site, host))", s.toString());
        assertEquals(s, hostCpu().build());
    }

    @Test
    void refusesNamesThatAreNotIdentifiers() {
        assertEquals("table name 'Host_cpu' must start with a lower-case letter a-z",
                refused(() -> TableSchema.builder("Host_cpu").column("a", ColumnType.STRING).primaryKey("a")
                        .build()));
        assertEquals("column name 'load-1' has '-' at index 4; names are lower-case letters, digits and '_'",
                refused(() -> new Column("load-1", ColumnType.DOUBLE)));
        assertEquals("column name '1st' must start with a lower-case letter a-z",
                refused(() -> new Column("1st", ColumnType.DOUBLE)));
        assertEquals("column name is empty", refused(() -> new Column("", ColumnType.DOUBLE)));
        String long65 = "a".repeat(65);
        assertEquals("column name '" + long65 + "' is 65 characters, over the limit of 64",
                refused(() -> new Column(long65, ColumnType.DOUBLE)));
        new Column("a".repeat(64), ColumnType.DOUBLE);
        assertEquals("column name 'caf\u00e9' has U+00E9 at index 3; names are lower-case letters, digits and '_'",
                refused(() -> new Column("caf\u00e9", ColumnType.STRING)));
    }

    @Test
    void refusesNamesSqlReserves() {
        assertEquals("column name 'order' is a word SQL reserves; a query could not name it",
                refused(() -> TableSchema.builder("t").column("k", ColumnType.STRING)
                        .column("order", ColumnType.INTEGER).primaryKey("k").build()));
        assertEquals("column name 'null' is a word SQL reserves; a query could not name it",
                refused(() -> TableSchema.builder("t").column("null", ColumnType.STRING).primaryKey("null")
                        .build()));
        assertEquals("table name 'select' is a word SQL reserves; a query could not name it",
                refused(() -> TableSchema.builder("select").column("k", ColumnType.STRING).primaryKey("k")
                        .build()));
        // not in the list of words, but the parser reads it as something else than a column
        assertEquals("column name 'current_date' is a word SQL reserves; a query could not name it",
                refused(() -> TableSchema.builder("t").column("k", ColumnType.STRING)
                        .column("current_date", ColumnType.INTEGER).primaryKey("k").build()));
        // common monitoring names are fine
        TableSchema.builder("events").column("timestamp", ColumnType.TIMESTAMP).column("key", ColumnType.STRING)
                .column("value", ColumnType.DOUBLE).column("status", ColumnType.STRING)
                .column("name", ColumnType.STRING).primaryKey("key").build();
    }

    @Test
    void refusesTooManyOrDuplicateColumns() {
        List<Column> columns = new ArrayList<>();
        for (int i = 0; i < 65; i++) {
            columns.add(new Column("c" + i, ColumnType.INTEGER));
        }
        assertEquals("table wide has 65 columns, over the limit of 64", refused(() -> new TableSchema("wide",
                columns, List.of("c0"), null, Duration.ofMinutes(1), Duration.ZERO)));
        new TableSchema("wide", columns.subList(0, 64), List.of("c63"), null, Duration.ofMinutes(1), Duration.ZERO);
        assertEquals("table t has two columns named a (columns 1 and 3)", refused(() -> TableSchema.builder("t")
                .column("a", ColumnType.INTEGER).column("b", ColumnType.INTEGER).column("a", ColumnType.STRING)
                .primaryKey("a").build()));
        assertEquals("table t has no columns; it needs at least one",
                refused(() -> TableSchema.builder("t").primaryKey("a").build()));
    }

    @Test
    void refusesBadPrimaryKeys() {
        assertEquals("table t has no primary key; name at least one column",
                refused(() -> TableSchema.builder("t").column("a", ColumnType.INTEGER).build()));
        assertEquals("primary key column node is not a column of table host_cpu; its columns are"
                + " [site, host, load1, up, sampled]", refused(() -> hostCpu().primaryKey("node").build()));
        assertEquals("primary key names column host twice",
                refused(() -> hostCpu().primaryKey("host", "host").build()));
    }

    @Test
    void refusesRetentionsOutOfRange() {
        assertEquals("latestRetention PT0S is outside (0, PT168H]",
                refused(() -> hostCpu().latestRetention(Duration.ZERO).build()));
        assertEquals("latestRetention PT192H is outside (0, PT168H]",
                refused(() -> hostCpu().latestRetention(Duration.ofDays(8)).build()));
        assertEquals("historyRetention PT-1S is outside [0, PT8784H]",
                refused(() -> hostCpu().historyRetention(Duration.ofSeconds(-1)).build()));
        hostCpu().latestRetention(Duration.ofDays(7)).historyRetention(Duration.ofDays(366)).build();
    }

    @Test
    void acceptsPredicatesOfEqualsInAndAnd() {
        TableSchema s = hostCpu().predicate(" site = 'cardiff' ").build();
        assertEquals(Optional.of("site = 'cardiff'"), s.predicate());
        hostCpu().predicate("site IN ('cardiff', 'lyon') AND host = 'n1' AND up = TRUE").build();
        hostCpu().predicate("'cardiff' = site AND (host = 'n1')").build();
        hostCpu().predicate("sampled = TIMESTAMP '2024-05-01 00:00:00'").build();
    }

    @Test
    void refusesOtherPredicates() {
        String only = "; a predicate may use only column = literal, column IN (literals) and AND";
        assertEquals("the predicate has OR" + only, refused(() -> hostCpu()
                .predicate("site = 'a' OR site = 'b'").build()));
        assertEquals("the predicate has NOT" + only, refused(() -> hostCpu().predicate("NOT site = 'a'").build()));
        assertEquals("the predicate has site > 'a'" + only, refused(() -> hostCpu().predicate("site > 'a'")
                .build()));
        assertEquals("the predicate has NOT IN" + only, refused(() -> hostCpu().predicate("site NOT IN ('a')")
                .build()));
        assertEquals("the predicate has LIKE" + only, refused(() -> hostCpu().predicate("site LIKE 'a%'")
                .build()));
        assertEquals("the predicate names column load1, which is DOUBLE; a predicate names columns whose value is"
                + " fixed: INTEGER, STRING, BOOLEAN or TIMESTAMP", refused(() -> hostCpu().predicate("load1 = 1")
                        .build()));
        assertEquals("column region is not a column of table host_cpu; its columns are [site, host, load1, up,"
                + " sampled]", refused(() -> hostCpu().predicate("region = 'eu'").build()));
        assertEquals("column site is STRING and cannot be compared with 3 (an integer) by =",
                refused(() -> hostCpu().predicate("site = 3").build()));
        assertEquals("the predicate can never hold: it leaves no value for column site",
                refused(() -> hostCpu().predicate("site = 'a' AND site IN ('b', 'c')").build()));
        assertEquals("the query holds 2 statements; send one SELECT",
                refused(() -> hostCpu().predicate("site = 'a'; DROP TABLE x").build()));
        assertEquals("function lower is not allowed; a table query has no functions",
                refused(() -> hostCpu().predicate("site = lower('A')").build()));
    }

    @Test
    void validatesRowsAgainstTypesKeysAndPredicate() {
        TableSchema s = hostCpu().predicate("site = 'cardiff'").build();
        s.validate(Row.of("cardiff", "n1", 0.5, true, 1L));
        s.validate(Row.of("cardiff", "n1", null, null, null));
        assertEquals("column load1 is DOUBLE, but the row holds a String ('high')",
                refused(() -> s.validate(Row.of("cardiff", "n1", "high", true, 1L))));
        assertEquals("key column host is NULL; a key column needs a value",
                refused(() -> s.validate(Row.of("cardiff", null, 0.5, true, 1L))));
        assertEquals("the row has 4 values, but table host_cpu has 5 columns",
                refused(() -> s.validate(Row.of("cardiff", "n1", 0.5, true))));
        assertEquals("the row has site = 'lyon', outside this producer's predicate site = 'cardiff'",
                refused(() -> s.validate(Row.of("lyon", "n1", 0.5, true, 1L))));
    }

    @Test
    void sameTableHasNoDifference() {
        TableSchema mine = hostCpu().predicate("site = 'cardiff'").latestRetention(Duration.ofMinutes(1)).build();
        assertEquals(Optional.empty(), mine.difference(hostCpu().build()));
    }

    @Test
    void differenceNamesTypeMissingExtraOrderAndKey() {
        TableSchema registered = hostCpu().build();
        TableSchema intLoad = TableSchema.builder("host_cpu").column("site", ColumnType.STRING)
                .column("host", ColumnType.STRING).column("load1", ColumnType.INTEGER)
                .column("up", ColumnType.BOOLEAN).column("sampled", ColumnType.TIMESTAMP)
                .primaryKey("site", "host").build();
        assertEquals(Optional.of("column load1 is INTEGER here, DOUBLE in the registry"),
                intLoad.difference(registered));
        TableSchema noSite = TableSchema.builder("host_cpu").column("host", ColumnType.STRING)
                .column("load1", ColumnType.DOUBLE).column("up", ColumnType.BOOLEAN)
                .column("sampled", ColumnType.TIMESTAMP).column("load5", ColumnType.DOUBLE)
                .primaryKey("host").build();
        assertEquals(Optional.of("column site is missing; column load5 is not in the registry; the primary key is"
                + " (host) here, (site, host) in the registry"), noSite.difference(registered));
        TableSchema swapped = TableSchema.builder("host_cpu").column("host", ColumnType.STRING)
                .column("site", ColumnType.STRING).column("load1", ColumnType.DOUBLE)
                .column("up", ColumnType.BOOLEAN).column("sampled", ColumnType.TIMESTAMP)
                .primaryKey("site", "host").build();
        assertEquals(Optional.of("column host is column 1 here, column 2 in the registry"),
                swapped.difference(registered));
    }
}
