package io.gma.tables;

import java.util.List;
import java.util.Map;

/**
 * Whether a query's WHERE can hold for some row of a producer whose predicate fixes some columns to a few
 * values. Each node gets the set of answers it can give, as bits: {@link #CAN_BE_TRUE}, {@link #CAN_BE_FALSE}.
 * A leaf over a fixed column is evaluated on each value the predicate allows; any other leaf can give either.
 * AND and OR combine the sets as if their parts were independent, which can only add answers, never drop one:
 * so "cannot be TRUE" is a proof, and anything else is "may overlap". (UNKNOWN is never kept by a WHERE, so it
 * counts as neither.)
 */
final class Overlap {
    static final int CAN_BE_TRUE = 1;
    static final int CAN_BE_FALSE = 2;

    private Overlap() {
    }

    static boolean mayOverlap(Filters.Node where, TableSchema producer) {
        Map<Integer, List<Object>> fixed = producer.predicateInfo() == null ? Map.of()
                : producer.predicateInfo().fixed;
        return where == null || (answers(where, fixed, producer.columns().size()) & CAN_BE_TRUE) != 0;
    }

    private static int answers(Filters.Node node, Map<Integer, List<Object>> fixed, int width) {
        if (node instanceof Filters.And) {
            int result = CAN_BE_TRUE;
            for (Filters.Node part : ((Filters.And) node).parts) {
                int a = answers(part, fixed, width);
                if ((a & CAN_BE_TRUE) == 0) {
                    result &= ~CAN_BE_TRUE;
                }
                result |= a & CAN_BE_FALSE;
            }
            return result;
        }
        if (node instanceof Filters.Or) {
            int result = CAN_BE_FALSE;
            for (Filters.Node part : ((Filters.Or) node).parts) {
                int a = answers(part, fixed, width);
                if ((a & CAN_BE_FALSE) == 0) {
                    result &= ~CAN_BE_FALSE;
                }
                result |= a & CAN_BE_TRUE;
            }
            return result;
        }
        if (node instanceof Filters.Not) {
            int a = answers(((Filters.Not) node).part, fixed, width);
            return ((a & CAN_BE_TRUE) != 0 ? CAN_BE_FALSE : 0) | ((a & CAN_BE_FALSE) != 0 ? CAN_BE_TRUE : 0);
        }
        Filters.Leaf leaf = (Filters.Leaf) node;
        List<Object> values = fixed.get(leaf.column);
        if (values == null) {
            return CAN_BE_TRUE | CAN_BE_FALSE;
        }
        int result = 0;
        Row.Builder row = new Row.Builder(width);
        for (Object v : values) {
            int r = leaf.eval(row.set(leaf.column, v).build());
            result |= r == Filters.TRUE ? CAN_BE_TRUE : r == Filters.FALSE ? CAN_BE_FALSE : 0;
        }
        return result;
    }
}
