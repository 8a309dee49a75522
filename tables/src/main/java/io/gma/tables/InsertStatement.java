package io.gma.tables;

import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import net.sf.jsqlparser.expression.Expression;
import net.sf.jsqlparser.expression.JdbcParameter;
import net.sf.jsqlparser.expression.NullValue;
import net.sf.jsqlparser.expression.operators.relational.ExpressionList;
import net.sf.jsqlparser.expression.operators.relational.ParenthesedExpressionList;
import net.sf.jsqlparser.schema.Table;
import net.sf.jsqlparser.statement.Statement;
import net.sf.jsqlparser.statement.insert.Insert;
import net.sf.jsqlparser.statement.select.Values;

/**
 * One row's insert, as SQL: {@code INSERT INTO table [(columns)] VALUES (values)}, each value a literal (as a
 * query takes them, plus NULL) or a {@code ?} filled by {@link #bind}. Immutable and thread-safe: parse once,
 * bind many times.
 *
 * <pre>{@code
 * InsertStatement ins = InsertStatement.parse("INSERT INTO host_cpu (host, cpu, busy) VALUES (?, -1, ?)");
 * Row row = ins.bind(hostCpu, "cardiff-node1", 12.5);   // columns left out are NULL
 * }</pre>
 *
 * <p>Arguments are converted to the column's type as SQL would: integers (Long, Integer, Short, Byte) into
 * INTEGER, DOUBLE or TIMESTAMP (microseconds) columns; Double and Float into DOUBLE; an {@link Instant} into
 * TIMESTAMP, to the microsecond; String into STRING; Boolean into BOOLEAN; null into any column. Everything
 * else of INSERT (several rows, INSERT ... SELECT, ON CONFLICT, RETURNING, functions) is refused, deny by
 * default as {@link TableQuery} does.
 */
public final class InsertStatement {
    private final String sql;
    private final String table;
    /** The columns named, or null when the insert names none (then the values are every column's, in order). */
    private final List<String> columns;
    /** Per value: a literal's value (as a row holds it, TIMESTAMP as an {@link Instant}), or {@link #PARAMETER}. */
    private final List<Object> values;
    private final int parameters;

    /** Stands for a {@code ?} in {@link #values}. */
    private static final Object PARAMETER = new Object();

    private InsertStatement(String sql, String table, List<String> columns, List<Object> values) {
        this.sql = sql;
        this.table = table;
        this.columns = columns;
        this.values = values;
        this.parameters = (int) values.stream().filter(v -> v == PARAMETER).count();
    }

    /**
     * Parses and checks an insert.
     *
     * @throws TableException with a sentence naming what is not allowed, too long or malformed
     */
    public static InsertStatement parse(String sql) {
        Statement statement = Sql.parseOne(sql, "insert", "INSERT");
        if (statement.getClass() != Insert.class) {
            throw new TableException("only INSERT is allowed here, and this is "
                    + statement.getClass().getSimpleName().toUpperCase(java.util.Locale.ROOT));
        }
        Insert insert = (Insert) statement;
        QueryGuard.shape(insert, "table columns select", "insert");
        Table from = insert.getTable();
        QueryGuard.shape(from, "partItems partDelimiters", "insert");
        String table = QueryGuard.tableName(from);
        List<String> columns = null;
        if (insert.getColumns() != null) {
            columns = new ArrayList<>();
            Set<String> seen = new HashSet<>();
            for (Object c : insert.getColumns()) {
                String column = QueryGuard.columnName((Expression) c, table);
                if (!seen.add(column)) {
                    throw new TableException("the insert names column " + column + " twice");
                }
                columns.add(column);
            }
        }
        if (insert.getSelect() == null || insert.getSelect().getClass() != Values.class) {
            throw new TableException("the insert takes its row from a query; write INSERT INTO " + table
                    + " (columns) VALUES (values)");
        }
        Values v = (Values) insert.getSelect();
        QueryGuard.shape(v, "expressions", "insert");
        ExpressionList<?> row = v.getExpressions();
        if (row.getClass() != ParenthesedExpressionList.class) {
            throw new TableException("the insert has " + row.size() + " rows of VALUES; insert one row at a time");
        }
        QueryGuard.shape(row, "", "insert");
        if (columns != null && row.size() != columns.size()) {
            throw new TableException("the insert names " + columns.size() + " columns and gives " + row.size()
                    + " values");
        }
        List<Object> values = new ArrayList<>();
        for (Object item : row) {
            Expression e = (Expression) item;
            if (e.getClass() == JdbcParameter.class) {
                if (!"?".equals(((JdbcParameter) e).getParameterCharacter())) {
                    throw new TableException("the insert has parameter " + e + "; write ? for each");
                }
                QueryGuard.shape(e, "index parameterCharacter", "insert"); // the parser numbers each ?
                values.add(PARAMETER);
            } else if (e.getClass() == NullValue.class) {
                values.add(null);
            } else {
                Literal lit = QueryGuard.literal(e, row, "the insert");
                values.add(lit.kind() == ColumnType.TIMESTAMP ? Instant.EPOCH.plus(lit.longValue(), ChronoUnit.MICROS)
                        : lit.value());
            }
        }
        return new InsertStatement(sql, table, columns == null ? null : List.copyOf(columns),
                java.util.Collections.unmodifiableList(values));
    }

    /** The table it inserts into. */
    public String table() {
        return table;
    }

    /** How many {@code ?} it has. */
    public int parameters() {
        return parameters;
    }

    /**
     * The row this insert makes in {@code schema}'s table with {@code args} for its {@code ?}, in order. The row
     * is not validated here: {@link TableSchema#validate(Row)} checks the key and the predicate.
     *
     * @throws TableException naming the column, the argument and its class: another table, an unknown column,
     *     as many values as columns when none are named, an argument count other than {@link #parameters()}, a
     *     value that does not convert to its column's type
     */
    public Row bind(TableSchema schema, Object... args) {
        if (!schema.name().equals(table)) {
            throw new TableException("the insert is into " + table + ", not " + schema.name());
        }
        int given = args == null ? 0 : args.length;
        if (given != parameters) {
            throw new TableException("the insert has " + parameters + " parameters (?) and " + given
                    + (given == 1 ? " argument was" : " arguments were") + " given");
        }
        int width = schema.columns().size();
        if (columns == null && values.size() != width) {
            throw new TableException("the insert gives " + values.size() + " values and table " + table + " has "
                    + width + " columns " + schema.columnNames() + "; name the columns it gives");
        }
        Row.Builder b = Row.builder(width);
        for (int i = 0; i < width; i++) {
            b.setNull(i);
        }
        int arg = 0;
        for (int i = 0; i < values.size(); i++) {
            int index = columns == null ? i : schema.indexOf(columns.get(i));
            if (index < 0) {
                throw new TableException("column " + columns.get(i) + " is not a column of table " + table
                        + "; its columns are " + schema.columnNames());
            }
            Object value = values.get(i);
            String what;
            if (value == PARAMETER) {
                what = "argument " + (arg + 1);
                value = args[arg++];
            } else {
                what = "value " + (i + 1);
            }
            set(b, index, schema.columns().get(index), value, what);
        }
        return b.build();
    }

    private static void set(Row.Builder b, int index, Column column, Object value, String what) {
        if (value == null) {
            b.setNull(index);
            return;
        }
        boolean integer = value instanceof Long || value instanceof Integer || value instanceof Short
                || value instanceof Byte;
        switch (column.type()) {
            case INTEGER:
                if (integer) {
                    b.setLong(index, ((Number) value).longValue());
                    return;
                }
                break;
            case DOUBLE:
                if (integer || value instanceof Double || value instanceof Float) {
                    b.setDouble(index, ((Number) value).doubleValue());
                    return;
                }
                break;
            case TIMESTAMP:
                if (integer) {
                    b.setLong(index, ((Number) value).longValue());
                    return;
                }
                if (value instanceof Instant) {
                    b.setLong(index, micros((Instant) value, column, what));
                    return;
                }
                break;
            case STRING:
                if (value instanceof String) {
                    b.setString(index, (String) value);
                    return;
                }
                break;
            default:
                if (value instanceof Boolean) {
                    b.setBoolean(index, (Boolean) value);
                    return;
                }
                break;
        }
        throw new TableException("column " + column.name() + " is " + column.type() + " and " + what + " is "
                + Sql.shorten(value instanceof Instant ? value.toString() : value) + " (a "
                + value.getClass().getSimpleName() + ")");
    }

    private static long micros(Instant at, Column column, String what) {
        try {
            return ChronoUnit.MICROS.between(Instant.EPOCH, at);
        } catch (ArithmeticException e) {
            throw new TableException("column " + column.name() + " is TIMESTAMP and " + what + " (" + at
                    + ") is out of its range");
        }
    }

    @Override
    public String toString() {
        return sql;
    }
}
