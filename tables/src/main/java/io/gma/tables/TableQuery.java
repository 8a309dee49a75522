package io.gma.tables;

import java.util.List;
import java.util.Objects;

/**
 * A query over one table, as a consumer poses it: {@code SELECT columns | * FROM table [WHERE condition]}.
 * Immutable and thread-safe.
 *
 * <pre>{@code
 * TableQuery q = TableQuery.parse("SELECT host, load1 FROM host_cpu WHERE load1 > 4 AND site IN ('cardiff', 'lyon')");
 * BoundQuery bound = q.bind(hostCpu);            // checks columns and types
 * if (bound.filter().test(row)) { ... }           // no allocation
 * boolean ask = q.mayOverlap(producerSchema);     // false: the producer's predicate rules every row out
 * }</pre>
 *
 * <p>The condition is made of comparisons of a column with a literal ({@code = <> != < <= > >=}), {@code IN}
 * with a list of literals, {@code [NOT] LIKE} with a string pattern, {@code IS [NOT] NULL}, joined by AND, OR,
 * NOT and parentheses. Literals are numbers, strings, TRUE, FALSE and {@code TIMESTAMP '2024-05-01 12:00:00'}
 * (UTC unless an offset is given). Everything else, joins, subqueries, functions, aggregates, GROUP BY, ORDER BY,
 * LIMIT, several statements, comments, is refused: the parser's tree is checked against an allow list, deny by
 * default (docs/tables.md, "Queries").
 */
public final class TableQuery {
    /** The longest query, in characters. */
    public static final int MAX_SQL_CHARS = 8192;
    /** The deepest nesting of parentheses, NOT, AND and OR. */
    public static final int MAX_DEPTH = 64;
    /** The most literals in one IN list. */
    public static final int MAX_IN_ITEMS = 1000;
    /** The longest LIKE pattern, in characters. */
    public static final int MAX_LIKE_CHARS = 256;
    /** The most wildcards ({@code %} and {@code _}) in one LIKE pattern. */
    public static final int MAX_LIKE_WILDCARDS = 8;
    /** The largest LIMIT of a history query. */
    public static final long MAX_LIMIT = Integer.MAX_VALUE;
    /** The insert time's name in a history query's {@code ORDER BY}: each row's, not a column of the table. */
    public static final String TIME_COLUMN = HistoryClauses.TIME_COLUMN;

    private final String sql;
    private final String table;
    private final List<String> columns;
    private final Expr where;
    private final boolean history;
    private final boolean descending;
    private final long limit;

    private TableQuery(String sql, QueryGuard.Checked checked, boolean history) {
        this.sql = sql;
        this.table = checked.table();
        this.columns = checked.columns();
        this.where = checked.where();
        this.history = history;
        this.descending = checked.descending();
        this.limit = checked.limit();
    }

    /**
     * Parses and checks a query. It takes a few milliseconds (the parser's); parse once, bind per schema.
     *
     * @throws TableException with one sentence naming what is not allowed, or where the syntax breaks
     * @throws NullPointerException if sql is null
     */
    public static TableQuery parse(String sql) {
        Objects.requireNonNull(sql, "sql");
        return new TableQuery(sql, QueryGuard.check(sql, false), false);
    }

    /**
     * Parses and checks a history query: a table query that may also end in {@code ORDER BY insert_time [ASC |
     * DESC]} (the insert time, {@link #TIME_COLUMN}; without it, oldest first) and {@code LIMIT n} (1 to
     * {@link #MAX_LIMIT}; the first n rows in that order). Nothing else is added: no OFFSET, no ordering by a
     * column, no NULLS FIRST (docs/tables.md, "History").
     *
     * @throws TableException with one sentence naming what is not allowed, or where the syntax breaks
     * @throws NullPointerException if sql is null
     */
    public static TableQuery parseHistory(String sql) {
        Objects.requireNonNull(sql, "sql");
        return new TableQuery(sql, QueryGuard.check(sql, true), true);
    }

    /** The text as given. */
    public String sql() {
        return sql;
    }

    /** The table the query reads (unquoted names in lower case). */
    public String table() {
        return table;
    }

    /** Whether the query selects {@code *}. */
    public boolean selectsAll() {
        return columns == null;
    }

    /** The columns selected, in order; empty for {@code *}. */
    public List<String> columns() {
        return columns == null ? List.of() : columns;
    }

    /** Whether the query has a WHERE clause. */
    public boolean hasWhere() {
        return where != null;
    }

    /** Whether it was parsed as a history query ({@link #parseHistory}). */
    public boolean isHistory() {
        return history;
    }

    /** Whether a history query asks for the newest rows first ({@code ORDER BY insert_time DESC}). */
    public boolean descending() {
        return descending;
    }

    /** A history query's LIMIT, or -1 when it has none. */
    public long limit() {
        return limit;
    }

    /**
     * Binds the query to a table's schema: every column it names must exist, with a type its literals suit.
     *
     * @throws TableException naming the table, the column or the types that do not fit
     */
    public BoundQuery bind(TableSchema schema) {
        if (!schema.name().equals(table)) {
            throw new TableException("the query reads table " + table + ", but the schema is of table "
                    + schema.name());
        }
        Binder binder = new Binder(schema);
        int[] projection;
        if (columns == null) {
            projection = new int[schema.columns().size()];
            for (int i = 0; i < projection.length; i++) {
                projection[i] = i;
            }
        } else {
            projection = new int[columns.size()];
            for (int i = 0; i < projection.length; i++) {
                projection[i] = binder.index(columns.get(i));
            }
        }
        return new BoundQuery(this, schema, where == null ? null : binder.bind(where), projection,
                where == null ? java.util.Map.of() : Narrowing.requiredValues(where, schema));
    }

    /**
     * Whether a producer's rows may match this query, judged by its predicate alone: false only when the
     * predicate and the WHERE clause provably cannot both hold (producer {@code site = 'cardiff'}, query
     * {@code site = 'lyon'}), true otherwise, which includes every producer without a predicate.
     *
     * @throws TableException as {@link #bind}, when the query does not fit the producer's schema
     */
    public boolean mayOverlap(TableSchema producer) {
        return Overlap.mayOverlap(bind(producer).where(), producer);
    }

    @Override
    public String toString() {
        return sql;
    }
}
