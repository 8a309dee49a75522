package io.gma.archiver;

import io.gma.registry.DashboardServlet;
import io.gma.tables.Column;
import io.gma.tables.ColumnType;
import io.gma.tables.TableException;
import io.gma.tables.TableQuery;
import io.gma.tables.TableSchema;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;

/**
 * What a chart asks of {@link TableData}, checked: a numeric column of a declared table, the key columns whose
 * values make a series, an optional {@code where COLUMN equals VALUE}, the period and the bounds. Every name must
 * be the declared table's (read from the registry's {@code table_columns}), never text put into SQL unchecked; the
 * query built from them goes through the tables module's guard ({@link TableQuery}) as any other. Each refusal is
 * a {@link Refused} whose sentence names the value and the limit.
 *
 * <pre>
 *   table    a declared table (required)
 *   column   an INTEGER or DOUBLE column of it (required)
 *   by       key columns, separated by commas: one series per value of them (default the whole primary key)
 *   where    a STRING or INTEGER column, with equals: only rows where it holds that value
 *   range    5m, 1h or 1d (default 5m): {@link DashboardServlet#RANGES}
 *   points   points per series in an answer, 10..1000 (default 600): the bucket is range / points
 *   top      series drawn, 1..20 (default 20): the keys of the highest latest values
 * </pre>
 */
record ChartRequest(TableSchema schema, String column, List<String> by, String where, String literal, String range,
        Duration period, int points, int top) {
    static final int MIN_POINTS = 10;
    static final int MAX_POINTS = 1000;
    static final int DEFAULT_POINTS = 600;
    static final int MAX_SERIES = 20;
    /** The longest value {@code equals} may hold. */
    static final int MAX_EQUALS_CHARS = 256;
    private static final String NAME_RULE = "1..64 of a-z, 0-9 and _, starting with a letter";

    /** A request refused: 400 with the sentence. */
    static final class Refused extends Exception {
        private static final long serialVersionUID = 1L;

        Refused(String message) {
            super(message, null, false, false);
        }
    }

    /**
     * Checks the parameters of a request.
     *
     * @param parameter a parameter's value by name, null when absent
     * @param declared the table of that name as the registry declares it, null when it declares none
     * @throws Refused naming the parameter, its value and the rule or limit it breaks
     */
    static ChartRequest of(Function<String, String> parameter, Function<String, TableSchema> declared)
            throws Refused {
        String table = required(parameter, "table", "the table to chart, such as table=host_cpu");
        name("table", table);
        TableSchema schema = declared.apply(table);
        if (schema == null) {
            throw new Refused("table \"" + table + "\" is not declared in the registry");
        }
        String column = required(parameter, "column", "an INTEGER or DOUBLE column of " + table + " ("
                + String.join(", ", numeric(schema)) + ")");
        Column c = column(schema, "column", column);
        if (c.type() != ColumnType.INTEGER && c.type() != ColumnType.DOUBLE) {
            throw new Refused("column " + column + " of " + table + " is " + c.type() + "; a chart draws an INTEGER"
                    + " or DOUBLE column (" + String.join(", ", numeric(schema)) + ")");
        }
        List<String> by = by(schema, parameter.apply("by"), column);
        String where = parameter.apply("where");
        String literal = null;
        if (where != null) {
            literal = literal(schema, where, parameter.apply("equals"));
        } else if (parameter.apply("equals") != null) {
            throw new Refused("equals is given without where: name the column it is compared with");
        }
        String range = parameter.apply("range") == null ? "5m" : parameter.apply("range");
        Duration period;
        try {
            period = DashboardServlet.range(range);
        } catch (IllegalArgumentException e) {
            throw new Refused(e.getMessage());
        }
        int points = number(parameter, "points", DEFAULT_POINTS, MIN_POINTS, MAX_POINTS,
                "the points a series has in an answer");
        int top = number(parameter, "top", MAX_SERIES, 1, MAX_SERIES, "the series a chart draws");
        ChartRequest q = new ChartRequest(schema, column, by, where, literal, range, period, points, top);
        try {
            TableQuery.parseHistory(q.historySql(1)).bind(schema); // the guard, as every query of a table
        } catch (TableException e) {
            throw new Refused("the chart's query is refused: " + e.getMessage());
        }
        return q;
    }

    private static String required(Function<String, String> parameter, String name, String what) throws Refused {
        String v = parameter.apply(name);
        if (v == null || v.isEmpty()) {
            throw new Refused(name + " is required: " + what);
        }
        return v;
    }

    private static void name(String what, String value) throws Refused {
        if (!Declared.TABLE.matcher(value).matches()) {
            throw new Refused(what + " \"" + cut(value) + "\" is not a name of a table or column: " + NAME_RULE);
        }
    }

    private static Column column(TableSchema schema, String what, String value) throws Refused {
        name(what, value);
        int i = schema.indexOf(value);
        if (i < 0) {
            throw new Refused(what + " \"" + value + "\" is not a column of " + schema.name() + " ("
                    + String.join(", ", schema.columnNames()) + ")");
        }
        return schema.columns().get(i);
    }

    private static List<String> numeric(TableSchema schema) {
        return schema.columns().stream().filter(c -> c.type() == ColumnType.INTEGER || c.type() == ColumnType.DOUBLE)
                .map(Column::name).toList();
    }

    private static List<String> by(TableSchema schema, String value, String column) throws Refused {
        if (value == null || value.isEmpty()) {
            List<String> key = new ArrayList<>(schema.primaryKey());
            key.remove(column);
            return key.isEmpty() ? schema.primaryKey() : List.copyOf(key);
        }
        String[] names = value.split(",", -1);
        if (names.length > schema.primaryKey().size()) {
            throw new Refused("by names " + names.length + " columns; " + schema.name() + "'s key has "
                    + schema.primaryKey().size() + " (" + String.join(", ", schema.primaryKey()) + ")");
        }
        List<String> by = new ArrayList<>();
        for (String n : names) {
            column(schema, "by", n);
            if (!schema.primaryKey().contains(n)) {
                throw new Refused("by \"" + n + "\" is not a key column of " + schema.name() + " ("
                        + String.join(", ", schema.primaryKey()) + ")");
            }
            if (by.contains(n) || n.equals(column)) {
                throw new Refused("by names " + n + " twice, or as the column charted");
            }
            by.add(n);
        }
        return List.copyOf(by);
    }

    /** {@code equals} as an SQL literal of {@code where}'s type. */
    private static String literal(TableSchema schema, String where, String equals) throws Refused {
        Column c = column(schema, "where", where);
        if (equals == null) {
            throw new Refused("where " + where + " is given without equals: the value the rows must hold");
        }
        if (equals.length() > MAX_EQUALS_CHARS) {
            throw new Refused("equals is " + equals.length() + " characters, over the limit of " + MAX_EQUALS_CHARS);
        }
        if (c.type() == ColumnType.INTEGER) {
            try {
                return Long.toString(Long.parseLong(equals.trim()));
            } catch (NumberFormatException e) {
                throw new Refused("equals \"" + cut(equals) + "\" is not an integer, as " + where + " of "
                        + schema.name() + " is");
            }
        }
        if (c.type() != ColumnType.STRING) {
            throw new Refused("where " + where + " of " + schema.name() + " is " + c.type() + "; where takes a STRING"
                    + " or INTEGER column");
        }
        for (int i = 0; i < equals.length(); i++) {
            if (Character.isISOControl(equals.charAt(i))) {
                throw new Refused("equals has a control character at index " + i + "; it takes printable text");
            }
        }
        return "'" + equals.replace("'", "''") + "'";
    }

    private static int number(Function<String, String> parameter, String name, int otherwise, int min, int max,
            String what) throws Refused {
        String v = parameter.apply(name);
        if (v == null) {
            return otherwise;
        }
        long n;
        try {
            n = Long.parseLong(v.trim());
        } catch (NumberFormatException e) {
            throw new Refused(name + " \"" + cut(v) + "\" is not a number in " + min + ".." + max + ", " + what);
        }
        if (n < min || n > max) {
            throw new Refused(name + " " + n + " is outside " + min + ".." + max + ", " + what);
        }
        return (int) n;
    }

    /** A value as a sentence shows it: at most 64 characters. */
    private static String cut(String s) {
        return s.length() <= 64 ? s : s.substring(0, 64) + "...";
    }

    /** {@code SELECT by..., column FROM table [WHERE where = literal]}: the live rows' query. */
    String sql() {
        StringBuilder sql = new StringBuilder("SELECT ");
        for (String b : by) {
            sql.append(b).append(", ");
        }
        sql.append(column).append(" FROM ").append(schema.name());
        if (where != null) {
            sql.append(" WHERE ").append(where).append(" = ").append(literal);
        }
        return sql.toString();
    }

    /** The history query: the newest {@code limit} rows of {@link #sql()}, newest first. */
    String historySql(int limit) {
        return sql() + " ORDER BY insert_time DESC LIMIT " + limit;
    }

    /** How long a bucket of a series is: the period over the points, in whole milliseconds. */
    long bucketMillis() {
        return (period.toMillis() + points - 1) / points;
    }
}
