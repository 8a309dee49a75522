package io.gma.tables;

import java.util.List;
import net.sf.jsqlparser.expression.Expression;
import net.sf.jsqlparser.expression.LongValue;
import net.sf.jsqlparser.statement.select.Limit;
import net.sf.jsqlparser.statement.select.OrderByElement;
import net.sf.jsqlparser.statement.select.PlainSelect;

/**
 * The two clauses a history query may add to a table query (docs/tables.md, "History"): {@code ORDER BY
 * insert_time [ASC | DESC]} and {@code LIMIT n}. Deny by default, as the rest of the {@link QueryGuard}: each node
 * must be of the class handled here, with every other field at its default, so {@code NULLS FIRST}, {@code LIMIT
 * ALL}, {@code LIMIT 5, 10} or {@code ORDER BY host} are refused with a sentence naming them.
 */
final class HistoryClauses {
    /** The name of the insert time in a history query's ORDER BY: the time each row carries, not a column. */
    static final String TIME_COLUMN = "insert_time";

    private HistoryClauses() {
    }

    /**
     * Whether the rows go newest first: false without ORDER BY, or with {@code ORDER BY insert_time [ASC]}.
     *
     * @throws TableException naming what else was ordered by, or how
     */
    static boolean descending(PlainSelect select, String table) {
        List<OrderByElement> order = select.getOrderByElements();
        if (order == null || order.isEmpty()) {
            return false;
        }
        if (order.size() != 1) {
            throw new TableException("the query orders by " + order.size() + " things; a history query orders by "
                    + TIME_COLUMN + " alone");
        }
        OrderByElement by = order.get(0);
        if (by.getClass() != OrderByElement.class) {
            throw new TableException("the query uses " + by.getClass().getSimpleName() + ", which a history query"
                    + " does not allow");
        }
        if (by.getNullOrdering() != null) {
            throw new TableException("the query orders with NULLS FIRST or NULLS LAST; " + TIME_COLUMN
                    + " is never NULL, so leave it out");
        }
        QueryGuard.shape(by, "expression asc ascDescPresent");
        Expression e = by.getExpression();
        if (e == null || e.getClass() != net.sf.jsqlparser.schema.Column.class) {
            throw new TableException("the query orders by " + Names.cut(String.valueOf(e)) + "; a history query"
                    + " orders by " + TIME_COLUMN + " (the insert time), ASC or DESC");
        }
        String column = QueryGuard.column(e, table);
        if (!TIME_COLUMN.equals(column)) {
            throw new TableException("the query orders by " + column + "; a history query orders by " + TIME_COLUMN
                    + " (the insert time), ASC or DESC");
        }
        return !by.isAsc();
    }

    /**
     * The LIMIT's row count, or -1 when there is none.
     *
     * @throws TableException for anything but a whole number from 1 to {@link TableQuery#MAX_LIMIT}
     */
    static long limit(PlainSelect select) {
        Limit limit = select.getLimit();
        if (limit == null) {
            return -1;
        }
        if (limit.getClass() != Limit.class) {
            throw new TableException("the query uses " + limit.getClass().getSimpleName() + ", which a history query"
                    + " does not allow");
        }
        if (limit.getOffset() != null) {
            throw new TableException("the query uses OFFSET, which a history query does not allow; narrow the"
                    + " period or the WHERE instead");
        }
        QueryGuard.shape(limit, "rowCount");
        Expression count = limit.getRowCount();
        if (count == null || count.getClass() != LongValue.class) {
            throw new TableException("LIMIT " + Names.cut(String.valueOf(count)) + " is not a whole number; a"
                    + " history query's LIMIT is 1.." + TableQuery.MAX_LIMIT);
        }
        QueryGuard.shape(count, "stringValue");
        java.math.BigInteger n = ((LongValue) count).getBigIntegerValue();
        if (n.signum() <= 0 || n.compareTo(java.math.BigInteger.valueOf(TableQuery.MAX_LIMIT)) > 0) {
            throw new TableException("LIMIT " + n + " is outside 1.." + TableQuery.MAX_LIMIT);
        }
        return n.longValue();
    }
}
