package io.gma.tables;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Instant;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import java.util.stream.Stream;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class InsertStatementTest {
    private static final TableSchema HOST_CPU = TableSchema.builder("host_cpu")
            .column("host", ColumnType.STRING)
            .column("cpu", ColumnType.INTEGER)
            .column("busy", ColumnType.DOUBLE)
            .column("online", ColumnType.BOOLEAN)
            .column("at", ColumnType.TIMESTAMP)
            .primaryKey("host", "cpu")
            .build();

    @Test
    void parametersFillTheirColumnsAndTheOthersAreNull() {
        InsertStatement ins = InsertStatement.parse("INSERT INTO host_cpu (host, busy, cpu) VALUES (?, ?, ?)");
        assertEquals("host_cpu", ins.table());
        assertEquals(3, ins.parameters());
        Row row = ins.bind(HOST_CPU, "node1", 12.5, 3);
        assertEquals(Row.of("node1", 3L, 12.5, null, null), row);
        HOST_CPU.validate(row);
        assertEquals(Row.of("node2", 4L, 0.0, null, null), ins.bind(HOST_CPU, "node2", 0.0, 4L));
    }

    @Test
    void literalsOfEveryTypeAndNull() {
        Row row = InsertStatement.parse("INSERT INTO host_cpu VALUES ('it''s', -1, -2.5, TRUE,"
                + " TIMESTAMP '2024-05-01 12:00:00.000250Z')").bind(HOST_CPU);
        assertEquals(Row.of("it's", -1L, -2.5, true, 1_714_564_800_000_250L), row);
        Row nulls = InsertStatement.parse("INSERT INTO host_cpu (host, cpu, busy, online, at)"
                + " VALUES ('a', 1, NULL, NULL, NULL)").bind(HOST_CPU);
        assertTrue(nulls.isNull(2) && nulls.isNull(3) && nulls.isNull(4));
    }

    @Test
    void argumentsConvertAsSqlWould() {
        InsertStatement ins = InsertStatement.parse("INSERT INTO host_cpu (host, cpu, busy, at) VALUES (?, ?, ?, ?)");
        Instant at = Instant.parse("2024-05-01T12:00:00.000250999Z");
        Row row = ins.bind(HOST_CPU, "a", (short) 2, 7, at);
        assertEquals(2L, row.getLong(1));
        assertEquals(7.0, row.getDouble(2));
        assertEquals(1_714_564_800_000_250L, row.getLong(4), "an Instant is kept to the microsecond");
        assertEquals(99L, ins.bind(HOST_CPU, "a", 2, 7.5f, 99L).getLong(4), "a long is microseconds");
        assertTrue(ins.bind(HOST_CPU, "a", 2, null, null).isNull(2));
    }

    @Test
    void unquotedNamesAreReadInLowerCase() {
        assertEquals(Row.of("x", 1L, null, null, null),
                InsertStatement.parse("insert into HOST_CPU (Host, CPU) values (?, 1)").bind(HOST_CPU, "x"));
    }

    static Stream<Arguments> bindingErrorsNameTheColumnAndTheValue() {
        return Stream.of(
                Arguments.of("INSERT INTO host_cpu (host, cpu) VALUES (?, ?)",
                        "the insert has 2 parameters (?) and 1 argument was given"),
                Arguments.of("INSERT INTO host_cpu (host, load1) VALUES (?, 1)",
                        "column load1 is not a column of table host_cpu; "
                                + "its columns are [host, cpu, busy, online, at]"),
                Arguments.of("INSERT INTO host_cpu VALUES (?, 1)",
                        "the insert gives 2 values and table host_cpu has 5 columns [host, cpu, busy, online, at]; "
                                + "name the columns it gives"),
                Arguments.of("INSERT INTO host_cpu (host, cpu) VALUES (?, 'one')",
                        "column cpu is INTEGER and value 2 is 'one' (a String)"),
                Arguments.of("INSERT INTO host_cpu (host, cpu) VALUES (?, 1.5)",
                        "column cpu is INTEGER and value 2 is 1.5 (a Double)"),
                Arguments.of("INSERT INTO host_cpu (host, online) VALUES (?, 1)",
                        "column online is BOOLEAN and value 2 is 1 (a Long)"),
                Arguments.of("INSERT INTO host_cpu (host, at) VALUES (?, '2024-05-01')",
                        "column at is TIMESTAMP and value 2 is '2024-05-01' (a String)"),
                Arguments.of("INSERT INTO other (host) VALUES (?)",
                        "the insert is into other, not host_cpu"));
    }

    @ParameterizedTest
    @MethodSource
    void bindingErrorsNameTheColumnAndTheValue(String sql, String message) {
        InsertStatement ins = InsertStatement.parse(sql);
        assertEquals(message, assertThrows(TableException.class, () -> ins.bind(HOST_CPU, "node1")).getMessage());
    }

    @Test
    void anArgumentOfAnotherClassIsNamed() {
        InsertStatement ins = InsertStatement.parse("INSERT INTO host_cpu (host, cpu) VALUES (?, ?)");
        assertEquals("column cpu is INTEGER and argument 2 is 2.0 (a Double)",
                assertThrows(TableException.class, () -> ins.bind(HOST_CPU, "a", 2.0)).getMessage());
        assertEquals("column host is STRING and argument 1 is 7 (a Integer)",
                assertThrows(TableException.class, () -> ins.bind(HOST_CPU, 7, 2)).getMessage());
    }

    static Stream<Arguments> whatIsNotOneRowOfLiteralsIsRefused() {
        return Stream.of(
                Arguments.of("SELECT * FROM host_cpu",
                        "only INSERT is allowed here, and this is PLAINSELECT"),
                Arguments.of("INSERT INTO host_cpu (host) VALUES ('a'), ('b')",
                        "the insert has 2 rows of VALUES; insert one row at a time"),
                Arguments.of("INSERT INTO host_cpu (host) SELECT host FROM other",
                        "the insert takes its row from a query; write INSERT INTO host_cpu (columns) VALUES (values)"),
                Arguments.of("INSERT INTO host_cpu (host) VALUES (?1)",
                        "the insert uses JdbcParameter.useFixedIndex, which a table insert does not allow"),
                Arguments.of("INSERT INTO host_cpu (host, host) VALUES (?, ?)",
                        "the insert names column host twice"),
                Arguments.of("INSERT INTO host_cpu (host, cpu) VALUES (?)",
                        "the insert names 2 columns and gives 1 values"),
                Arguments.of("INSERT INTO host_cpu (host) VALUES (lower('A'))",
                        "function lower is not allowed; a table query has no functions"),
                Arguments.of("INSERT INTO host_cpu (host) VALUES (?); DROP TABLE host_cpu",
                        "the insert holds 2 statements; send one INSERT"),
                Arguments.of("INSERT INTO host_cpu (host) VALUES (?) -- note",
                        "the insert holds a comment (-- at index 39); comments are not allowed in a table insert"),
                Arguments.of("INSERT INTO s.host_cpu (host) VALUES (?)",
                        "table s.host_cpu names a schema; write the table name alone"),
                Arguments.of("INSERT INTO host_cpu (host) VALUES (?) RETURNING host",
                        "the insert uses Insert.returningClause, which a table insert does not allow"),
                Arguments.of("INSERT INTO host_cpu (host) VALUES (?) ON DUPLICATE KEY UPDATE cpu = 1",
                        "the insert uses Insert.duplicateUpdateSets, which a table insert does not allow"),
                Arguments.of("INSERT INTO host_cpu (host) VALUES (host)",
                        "the insert has (host), where Column (host) is not a literal; "
                                + "give each column a number, a string, TRUE, FALSE or TIMESTAMP '...'"),
                Arguments.of("INSERT INTO host_cpu (other.host) VALUES (?)",
                        "column other.host names other, which is not the table the query reads (host_cpu)"),
                Arguments.of(" ",
                        "the insert is empty; send one INSERT"));
    }

    @ParameterizedTest
    @MethodSource
    void whatIsNotOneRowOfLiteralsIsRefused(String sql, String message) {
        TableException e = assertThrows(TableException.class, () -> InsertStatement.parse(sql));
        assertEquals(message, e.getMessage());
    }

    @Test
    void aParsedInsertHasNoParametersWhenItHasOnlyLiterals() {
        InsertStatement ins = InsertStatement.parse("INSERT INTO host_cpu (host, cpu) VALUES ('a', 1)");
        assertEquals(0, ins.parameters());
        assertNull(ins.bind(HOST_CPU).get(2));
        assertEquals("INSERT INTO host_cpu (host, cpu) VALUES ('a', 1)", ins.toString());
    }
}
