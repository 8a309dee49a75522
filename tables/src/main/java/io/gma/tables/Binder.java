package io.gma.tables;

import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * Binds an {@link Expr} to a schema: each column must exist, each literal must suit its column's type, and the
 * result is a {@link Filters} tree that reads the row by column index.
 *
 * <pre>
 * column type   literals it takes                       operators
 * INTEGER       integers, numbers with a fraction       all comparisons, IN
 * DOUBLE        integers, numbers with a fraction       all comparisons, IN
 * TIMESTAMP     TIMESTAMP '...', integers (micros)      all comparisons, IN
 * STRING        strings                                 all comparisons (by code point), IN, LIKE
 * BOOLEAN       TRUE, FALSE                             = and &lt;&gt;, IN
 * </pre>
 *
 * IS [NOT] NULL takes any column.
 */
final class Binder {
    private final TableSchema schema;

    Binder(TableSchema schema) {
        this.schema = schema;
    }

    Filters.Node bind(Expr e) {
        if (e instanceof Expr.And) {
            return new Filters.And(bindAll(((Expr.And) e).parts()));
        } else if (e instanceof Expr.Or) {
            return new Filters.Or(bindAll(((Expr.Or) e).parts()));
        } else if (e instanceof Expr.Not) {
            return new Filters.Not(bind(((Expr.Not) e).expr()));
        } else if (e instanceof Expr.Compare) {
            return compare((Expr.Compare) e);
        } else if (e instanceof Expr.In) {
            return in((Expr.In) e);
        } else if (e instanceof Expr.Like) {
            Expr.Like like = (Expr.Like) e;
            int i = index(like.column());
            if (type(i) != ColumnType.STRING) {
                throw new TableException("column " + like.column() + " is " + type(i) + "; LIKE needs a STRING"
                        + " column");
            }
            return new Filters.Like(i, LikePattern.compile(like.pattern(), like.escape()), like.not());
        }
        Expr.IsNull isNull = (Expr.IsNull) e;
        return new Filters.IsNull(index(isNull.column()), isNull.not());
    }

    private Filters.Node[] bindAll(List<Expr> parts) {
        Filters.Node[] nodes = new Filters.Node[parts.size()];
        for (int i = 0; i < nodes.length; i++) {
            nodes[i] = bind(parts.get(i));
        }
        return nodes;
    }

    int index(String column) {
        int i = schema.indexOf(column);
        if (i < 0) {
            throw new TableException("column " + column + " is not a column of table " + schema.name()
                    + "; its columns are " + schema.columnNames());
        }
        return i;
    }

    private ColumnType type(int i) {
        return schema.columns().get(i).type();
    }

    private Filters.Node compare(Expr.Compare c) {
        int i = index(c.column());
        ColumnType type = type(i);
        Literal lit = c.literal();
        check(c.column(), type, lit, c.op().sql);
        switch (type) {
            case BOOLEAN:
                if (c.op() != Expr.Op.EQ && c.op() != Expr.Op.NE) {
                    throw new TableException("column " + c.column() + " is BOOLEAN, which has no order; compare it"
                            + " with = or <>, not " + c.op().sql);
                }
                return new Filters.BooleanCompare(i, c.op() == Expr.Op.EQ, lit.longValue() != 0);
            case STRING:
                return new Filters.StringCompare(i, c.op(), lit.stringValue());
            case DOUBLE:
                if (lit.kind() == ColumnType.DOUBLE) {
                    return new Filters.DoubleCompare(i, c.op(), lit.doubleValue(), false, 0);
                }
                long l = lit.longValue();
                boolean exact = isExactDouble(l);
                return new Filters.DoubleCompare(i, c.op(), l, !exact, l);
            default:
                if (lit.kind() == ColumnType.DOUBLE) {
                    return new Filters.LongDoubleCompare(i, c.op(), lit.doubleValue());
                }
                return new Filters.LongCompare(i, c.op(), lit.longValue());
        }
    }

    private Filters.Node in(Expr.In in) {
        int i = index(in.column());
        ColumnType type = type(i);
        for (Literal lit : in.literals()) {
            check(in.column(), type, lit, "IN");
        }
        switch (type) {
            case STRING:
                Set<String> strings = new HashSet<>();
                for (Literal lit : in.literals()) {
                    strings.add(lit.stringValue());
                }
                return new Filters.StringIn(i, Set.copyOf(strings), in.not());
            case DOUBLE:
                long[] bits = new long[in.literals().size()];
                int n = 0;
                for (Literal lit : in.literals()) {
                    if (lit.kind() == ColumnType.DOUBLE) {
                        bits[n++] = Filters.DoubleIn.key(lit.doubleValue());
                    } else if (isExactDouble(lit.longValue())) {
                        bits[n++] = Filters.DoubleIn.key(lit.longValue());
                    } // else no double equals it
                }
                long[] sortedBits = Arrays.copyOf(bits, n);
                Arrays.sort(sortedBits);
                return new Filters.DoubleIn(i, sortedBits, in.not());
            default:
                long[] longs = new long[in.literals().size()];
                int m = 0;
                for (Literal lit : in.literals()) {
                    if (lit.kind() != ColumnType.DOUBLE) {
                        longs[m++] = lit.longValue();
                    } else if (lit.doubleValue() == Math.rint(lit.doubleValue()) && lit.doubleValue() >= -0x1p63
                            && lit.doubleValue() < 0x1p63) {
                        longs[m++] = (long) lit.doubleValue();
                    } // else no integer equals it
                }
                long[] sorted = Arrays.copyOf(longs, m);
                Arrays.sort(sorted);
                return new Filters.LongIn(i, sorted, in.not());
        }
    }

    private static boolean isExactDouble(long l) {
        double d = l;
        return d < 0x1p63 && (long) d == l;
    }

    /** Whether a literal suits a column's type; a sentence naming both when it does not. */
    static void check(String column, ColumnType type, Literal lit, String op) {
        boolean ok;
        switch (type) {
            case INTEGER:
            case DOUBLE:
                ok = lit.kind() == ColumnType.INTEGER || lit.kind() == ColumnType.DOUBLE;
                break;
            case TIMESTAMP:
                ok = lit.kind() == ColumnType.TIMESTAMP || lit.kind() == ColumnType.INTEGER;
                break;
            default:
                ok = lit.kind() == type;
                break;
        }
        if (!ok) {
            String hint = type == ColumnType.TIMESTAMP && lit.kind() == ColumnType.STRING
                    ? "; write TIMESTAMP " + lit.text() : "";
            throw new TableException("column " + column + " is " + type + " and cannot be compared with "
                    + lit.text() + " (" + describe(lit.kind()) + ") by " + op + hint);
        }
    }

    private static String describe(ColumnType kind) {
        switch (kind) {
            case INTEGER:
                return "an integer";
            case DOUBLE:
                return "a number";
            case STRING:
                return "a string";
            case BOOLEAN:
                return "a boolean";
            default:
                return "a timestamp";
        }
    }
}
