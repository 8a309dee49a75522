package io.gma.tables;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The values a WHERE requires of some columns ({@link BoundQuery#requiredValues()}): what a store may look up by
 * index before it applies the whole filter. Only what is certain is said: a conjunct at the WHERE's top that is
 * {@code column = literal} or {@code column IN (literal, ...)}, not negated, with literals of the column's own type,
 * over a column that is not DOUBLE. Anything else is left to the filter, so the answer is a superset of the rows
 * the filter keeps, never a subset.
 */
final class Narrowing {
    private Narrowing() {
    }

    /** Column name to the values it must have; a column ANDed twice gets the values both allow. */
    static Map<String, List<Object>> requiredValues(Expr where, TableSchema schema) {
        List<Expr> conjuncts = new ArrayList<>();
        conjuncts(where, conjuncts);
        Map<String, Set<Object>> found = new LinkedHashMap<>();
        for (Expr e : conjuncts) {
            String column;
            List<Literal> literals;
            if (e instanceof Expr.Compare && ((Expr.Compare) e).op() == Expr.Op.EQ) {
                column = ((Expr.Compare) e).column();
                literals = List.of(((Expr.Compare) e).literal());
            } else if (e instanceof Expr.In && !((Expr.In) e).not()) {
                column = ((Expr.In) e).column();
                literals = ((Expr.In) e).literals();
            } else {
                continue;
            }
            int i = schema.indexOf(column);
            if (i < 0) {
                continue; // the binder refused it already; nothing to say here
            }
            ColumnType type = schema.columns().get(i).type();
            Set<Object> values = new LinkedHashSet<>();
            boolean exact = type != ColumnType.DOUBLE;
            for (Literal l : literals) {
                if (l.kind() == type || type == ColumnType.TIMESTAMP && l.kind() == ColumnType.INTEGER) {
                    values.add(type == ColumnType.TIMESTAMP ? (Object) l.longValue() : l.value());
                } else {
                    exact = false;
                }
            }
            if (!exact) {
                continue;
            }
            Set<Object> before = found.get(column);
            if (before == null) {
                found.put(column, values);
            } else {
                before.retainAll(values);
            }
        }
        Map<String, List<Object>> out = new LinkedHashMap<>();
        found.forEach((c, v) -> out.put(c, Collections.unmodifiableList(new ArrayList<>(v))));
        return Collections.unmodifiableMap(out);
    }

    /** The parts of ANDs within ANDs (the guard's repair of an IN may nest them), iteratively. */
    private static void conjuncts(Expr where, List<Expr> out) {
        java.util.ArrayDeque<Expr> todo = new java.util.ArrayDeque<>();
        todo.push(where);
        while (!todo.isEmpty()) {
            Expr e = todo.pop();
            if (e instanceof Expr.And) {
                List<Expr> parts = ((Expr.And) e).parts();
                for (int i = parts.size() - 1; i >= 0; i--) {
                    todo.push(parts.get(i));
                }
            } else {
                out.add(e);
            }
        }
    }
}
