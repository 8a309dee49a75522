package io.gma.tables;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * A producer's predicate, checked and compiled: the columns it fixes and the values each may take. A predicate
 * is {@code column = literal} or {@code column IN (literals)}, or several joined by AND; its columns are those
 * whose value is the same in every row this producer inserts (its site, its host), of any type but DOUBLE.
 */
final class Predicate {
    /** Column index to the values it may take (Long, String or Boolean), in the order written. */
    final Map<Integer, List<Object>> fixed;
    /** The predicate as a filter, for {@link TableSchema#validate}. */
    final Filters.Node filter;

    private Predicate(Map<Integer, List<Object>> fixed, Filters.Node filter) {
        this.fixed = fixed;
        this.filter = filter;
    }

    static Predicate compile(TableSchema schema, String text) {
        Expr expr = QueryGuard.checkPredicate(schema.name(), text);
        List<Expr> atoms = new ArrayList<>();
        flatten(expr, atoms);
        Binder binder = new Binder(schema);
        Map<Integer, Set<Object>> values = new LinkedHashMap<>();
        for (Expr atom : atoms) {
            String column;
            List<Literal> literals;
            if (atom instanceof Expr.Compare && ((Expr.Compare) atom).op() == Expr.Op.EQ) {
                column = ((Expr.Compare) atom).column();
                literals = List.of(((Expr.Compare) atom).literal());
            } else if (atom instanceof Expr.In && !((Expr.In) atom).not()) {
                column = ((Expr.In) atom).column();
                literals = ((Expr.In) atom).literals();
            } else {
                throw new TableException("the predicate has " + form(atom) + "; a predicate may use only"
                        + " column = literal, column IN (literals) and AND");
            }
            int i = binder.index(column);
            ColumnType type = schema.columns().get(i).type();
            if (type == ColumnType.DOUBLE) {
                throw new TableException("the predicate names column " + column + ", which is DOUBLE; a predicate"
                        + " names columns whose value is fixed: INTEGER, STRING, BOOLEAN or TIMESTAMP");
            }
            Set<Object> these = new LinkedHashSet<>();
            for (Literal lit : literals) {
                Binder.check(column, type, lit, atom instanceof Expr.In ? "IN" : "=");
                Object v = normalized(lit);
                if (v != null) {
                    these.add(v);
                }
            }
            Set<Object> before = values.get(i);
            if (before != null) {
                before.retainAll(these);
            } else {
                values.put(i, these);
            }
            if (values.get(i).isEmpty()) {
                throw new TableException("the predicate can never hold: it leaves no value for column " + column);
            }
        }
        Map<Integer, List<Object>> fixed = new LinkedHashMap<>();
        values.forEach((i, v) -> fixed.put(i, List.copyOf(v)));
        return new Predicate(Map.copyOf(fixed), binder.bind(expr));
    }

    /** The value a row would hold; null for a number with a fraction, which no INTEGER equals. */
    private static Object normalized(Literal lit) {
        if (lit.kind() == ColumnType.DOUBLE) {
            double d = lit.doubleValue();
            return d == Math.rint(d) && d >= -0x1p63 && d < 0x1p63 ? (Object) (long) d : null;
        }
        return lit.value();
    }

    private static void flatten(Expr e, List<Expr> out) {
        if (e instanceof Expr.And) {
            for (Expr part : ((Expr.And) e).parts()) {
                flatten(part, out);
            }
        } else {
            out.add(e);
        }
    }

    private static String form(Expr e) {
        if (e instanceof Expr.Or) {
            return "OR";
        } else if (e instanceof Expr.Not) {
            return "NOT";
        } else if (e instanceof Expr.Like) {
            return "LIKE";
        } else if (e instanceof Expr.IsNull) {
            return "IS NULL";
        } else if (e instanceof Expr.In) {
            return "NOT IN";
        }
        return ((Expr.Compare) e).column() + " " + ((Expr.Compare) e).op().sql + " "
                + ((Expr.Compare) e).literal().text();
    }
}
