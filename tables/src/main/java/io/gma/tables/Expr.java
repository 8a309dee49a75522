package io.gma.tables;

import java.util.List;

/**
 * A WHERE clause as the {@link QueryGuard} let it through, before it is bound to a schema: the few forms a table
 * query may use, with column names and literals. The {@link Binder} turns it into a {@link Filters} tree.
 */
sealed interface Expr {
    /** All of the parts; flattened, so a chain of ANDs is one node. */
    record And(List<Expr> parts) implements Expr {
    }

    /** Any of the parts; flattened. */
    record Or(List<Expr> parts) implements Expr {
    }

    record Not(Expr expr) implements Expr {
    }

    /** {@code column op literal}; a literal on the left was moved to the right and the operator turned. */
    record Compare(String column, Op op, Literal literal) implements Expr {
    }

    record In(String column, List<Literal> literals, boolean not) implements Expr {
    }

    /** {@code column [NOT] LIKE pattern [ESCAPE 'c']}; escape is -1 when there is none. */
    record Like(String column, String pattern, int escape, boolean not) implements Expr {
    }

    record IsNull(String column, boolean not) implements Expr {
    }

    /** The comparison operators; {@code !=} is {@link #NE}. */
    enum Op {
        EQ("="), NE("<>"), LT("<"), LE("<="), GT(">"), GE(">=");

        final String sql;

        Op(String sql) {
            this.sql = sql;
        }

        /** The operator that holds for {@code b op' a} when this holds for {@code a op b}. */
        Op flipped() {
            switch (this) {
                case LT:
                    return GT;
                case LE:
                    return GE;
                case GT:
                    return LT;
                case GE:
                    return LE;
                default:
                    return this;
            }
        }

        /** Whether the operator holds for a comparison result (negative, zero, positive). */
        boolean holds(int cmp) {
            switch (this) {
                case EQ:
                    return cmp == 0;
                case NE:
                    return cmp != 0;
                case LT:
                    return cmp < 0;
                case LE:
                    return cmp <= 0;
                case GT:
                    return cmp > 0;
                default:
                    return cmp >= 0;
            }
        }
    }
}
