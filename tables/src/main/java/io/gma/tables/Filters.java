package io.gma.tables;

import java.util.Arrays;
import java.util.Set;

/**
 * The compiled WHERE clause: a tree of nodes that each read the row's unboxed values by column index. Each node
 * answers with SQL's three-valued logic, {@link #FALSE}, {@link #TRUE} or {@link #UNKNOWN}; a comparison with
 * NULL is UNKNOWN, NOT UNKNOWN is UNKNOWN, and the filter keeps a row only when the whole is TRUE.
 *
 * <p>Numbers compare exactly, whatever their types: an INTEGER column against 4.5, or a DOUBLE column against
 * 9007199254740993, give the mathematically right answer, not that of a conversion. DOUBLE values order as
 * PostgreSQL orders them: -0.0 equals 0.0, NaN equals NaN and is greater than every other number. Strings order
 * by code point (the order of their UTF-8 bytes).
 */
final class Filters {
    static final int FALSE = 0;
    static final int TRUE = 1;
    static final int UNKNOWN = 2;

    private Filters() {
    }

    /** One node of the tree. */
    abstract static class Node {
        abstract int eval(Row row);
    }

    /** A node that tests one column: the leaves, which {@link Overlap} evaluates on single values. */
    abstract static class Leaf extends Node {
        final int column;

        Leaf(int column) {
            this.column = column;
        }
    }

    /** The filter as the public interface: TRUE keeps the row. */
    static final class Compiled implements RowFilter {
        final Node root;

        Compiled(Node root) {
            this.root = root;
        }

        @Override
        public boolean test(Row row) {
            return root == null || root.eval(row) == TRUE;
        }
    }

    static final class And extends Node {
        final Node[] parts;

        And(Node[] parts) {
            this.parts = parts;
        }

        @Override
        int eval(Row row) {
            int result = TRUE;
            for (Node part : parts) {
                int r = part.eval(row);
                if (r == FALSE) {
                    return FALSE;
                }
                if (r == UNKNOWN) {
                    result = UNKNOWN;
                }
            }
            return result;
        }
    }

    static final class Or extends Node {
        final Node[] parts;

        Or(Node[] parts) {
            this.parts = parts;
        }

        @Override
        int eval(Row row) {
            int result = FALSE;
            for (Node part : parts) {
                int r = part.eval(row);
                if (r == TRUE) {
                    return TRUE;
                }
                if (r == UNKNOWN) {
                    result = UNKNOWN;
                }
            }
            return result;
        }
    }

    static final class Not extends Node {
        final Node part;

        Not(Node part) {
            this.part = part;
        }

        @Override
        int eval(Row row) {
            int r = part.eval(row);
            return r == UNKNOWN ? UNKNOWN : r ^ 1;
        }
    }

    static int of(boolean b) {
        return b ? TRUE : FALSE;
    }

    /** INTEGER or TIMESTAMP column against an integer. */
    static final class LongCompare extends Leaf {
        final Expr.Op op;
        final long value;

        LongCompare(int column, Expr.Op op, long value) {
            super(column);
            this.op = op;
            this.value = value;
        }

        @Override
        int eval(Row row) {
            return row.kinds[column] == Row.NULL ? UNKNOWN : of(op.holds(Long.compare(row.words[column], value)));
        }
    }

    /** INTEGER column against a number with a fraction, or beyond 64 bits. */
    static final class LongDoubleCompare extends Leaf {
        final Expr.Op op;
        final double value;

        LongDoubleCompare(int column, Expr.Op op, double value) {
            super(column);
            this.op = op;
            this.value = value;
        }

        @Override
        int eval(Row row) {
            return row.kinds[column] == Row.NULL ? UNKNOWN
                    : of(op.holds(compareExactly(row.words[column], value)));
        }
    }

    /** DOUBLE column against a number. */
    static final class DoubleCompare extends Leaf {
        final Expr.Op op;
        final double value;
        /** The literal was an integer that no double equals exactly: compare against it with its long. */
        final boolean exactLong;
        final long longValue;

        DoubleCompare(int column, Expr.Op op, double value, boolean exactLong, long longValue) {
            super(column);
            this.op = op;
            this.value = value;
            this.exactLong = exactLong;
            this.longValue = longValue;
        }

        @Override
        int eval(Row row) {
            if (row.kinds[column] == Row.NULL) {
                return UNKNOWN;
            }
            double d = Double.longBitsToDouble(row.words[column]);
            int cmp = exactLong ? (Double.isNaN(d) ? 1 : -compareExactly(longValue, d)) : compareDoubles(d, value);
            return of(op.holds(cmp));
        }
    }

    static final class BooleanCompare extends Leaf {
        final boolean equal;
        final long value;

        BooleanCompare(int column, boolean equal, boolean value) {
            super(column);
            this.equal = equal;
            this.value = value ? 1 : 0;
        }

        @Override
        int eval(Row row) {
            return row.kinds[column] == Row.NULL ? UNKNOWN : of(row.words[column] == value == equal);
        }
    }

    static final class StringCompare extends Leaf {
        final Expr.Op op;
        final String value;

        StringCompare(int column, Expr.Op op, String value) {
            super(column);
            this.op = op;
            this.value = value;
        }

        @Override
        int eval(Row row) {
            if (row.kinds[column] == Row.NULL) {
                return UNKNOWN;
            }
            String s = row.strings[column];
            if (op == Expr.Op.EQ || op == Expr.Op.NE) {
                return of(s.equals(value) == (op == Expr.Op.EQ));
            }
            return of(op.holds(compareCodePoints(s, value)));
        }
    }

    /** INTEGER, TIMESTAMP or BOOLEAN column IN a sorted list. */
    static final class LongIn extends Leaf {
        final long[] sorted;
        final boolean not;

        LongIn(int column, long[] sorted, boolean not) {
            super(column);
            this.sorted = sorted;
            this.not = not;
        }

        @Override
        int eval(Row row) {
            return row.kinds[column] == Row.NULL ? UNKNOWN
                    : of(Arrays.binarySearch(sorted, row.words[column]) >= 0 != not);
        }
    }

    /** DOUBLE column IN a list, held by the bits of each value (-0.0 as 0.0, every NaN as one). */
    static final class DoubleIn extends Leaf {
        final long[] sortedBits;
        final boolean not;

        DoubleIn(int column, long[] sortedBits, boolean not) {
            super(column);
            this.sortedBits = sortedBits;
            this.not = not;
        }

        static long key(double d) {
            return d == 0 ? 0 : Double.doubleToLongBits(d);
        }

        @Override
        int eval(Row row) {
            return row.kinds[column] == Row.NULL ? UNKNOWN : of(Arrays.binarySearch(sortedBits,
                    key(Double.longBitsToDouble(row.words[column]))) >= 0 != not);
        }
    }

    static final class StringIn extends Leaf {
        final Set<String> values;
        final boolean not;

        StringIn(int column, Set<String> values, boolean not) {
            super(column);
            this.values = values;
            this.not = not;
        }

        @Override
        int eval(Row row) {
            return row.kinds[column] == Row.NULL ? UNKNOWN : of(values.contains(row.strings[column]) != not);
        }
    }

    static final class Like extends Leaf {
        final LikePattern pattern;
        final boolean not;

        Like(int column, LikePattern pattern, boolean not) {
            super(column);
            this.pattern = pattern;
            this.not = not;
        }

        @Override
        int eval(Row row) {
            return row.kinds[column] == Row.NULL ? UNKNOWN : of(pattern.matches(row.strings[column]) != not);
        }
    }

    static final class IsNull extends Leaf {
        final boolean not;

        IsNull(int column, boolean not) {
            super(column);
            this.not = not;
        }

        @Override
        int eval(Row row) {
            return of(row.kinds[column] == Row.NULL != not);
        }
    }

    /** The sign of {@code l - d}, exactly; d is finite. */
    static int compareExactly(long l, double d) {
        if (d >= 0x1p63) {
            return -1;
        }
        if (d < -0x1p63) {
            return 1;
        }
        double floor = Math.floor(d);
        long f = (long) floor;
        if (l != f) {
            return l < f ? -1 : 1;
        }
        return d > floor ? -1 : 0;
    }

    /** PostgreSQL's order of doubles: -0.0 = 0.0, NaN = NaN, NaN above everything. */
    static int compareDoubles(double a, double b) {
        if (a < b) {
            return -1;
        }
        if (a > b) {
            return 1;
        }
        if (a == b) {
            return 0;
        }
        return Double.isNaN(a) ? (Double.isNaN(b) ? 0 : 1) : -1;
    }

    /** Strings by code point, which is the order of their UTF-8 bytes (String.compareTo is by UTF-16 unit). */
    static int compareCodePoints(String a, String b) {
        int n = Math.min(a.length(), b.length());
        for (int i = 0; i < n; i++) {
            char x = a.charAt(i);
            char y = b.charAt(i);
            if (x != y) {
                if (Character.isSurrogate(x) || Character.isSurrogate(y)) {
                    return Integer.compare(a.codePointAt(i), b.codePointAt(i));
                }
                return x < y ? -1 : 1;
            }
        }
        return Integer.compare(a.length(), b.length());
    }
}
