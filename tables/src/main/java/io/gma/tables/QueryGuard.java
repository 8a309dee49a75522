package io.gma.tables;

import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.math.BigInteger;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Deque;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import net.sf.jsqlparser.expression.BinaryExpression;
import net.sf.jsqlparser.expression.BooleanValue;
import net.sf.jsqlparser.expression.CastExpression;
import net.sf.jsqlparser.expression.DoubleValue;
import net.sf.jsqlparser.expression.Expression;
import net.sf.jsqlparser.expression.Function;
import net.sf.jsqlparser.expression.LongValue;
import net.sf.jsqlparser.expression.NotExpression;
import net.sf.jsqlparser.expression.NullValue;
import net.sf.jsqlparser.expression.SignedExpression;
import net.sf.jsqlparser.expression.StringValue;
import net.sf.jsqlparser.expression.operators.conditional.AndExpression;
import net.sf.jsqlparser.expression.operators.conditional.OrExpression;
import net.sf.jsqlparser.expression.operators.relational.Between;
import net.sf.jsqlparser.expression.operators.relational.EqualsTo;
import net.sf.jsqlparser.expression.operators.relational.ExistsExpression;
import net.sf.jsqlparser.expression.operators.relational.ExpressionList;
import net.sf.jsqlparser.expression.operators.relational.GreaterThan;
import net.sf.jsqlparser.expression.operators.relational.GreaterThanEquals;
import net.sf.jsqlparser.expression.operators.relational.InExpression;
import net.sf.jsqlparser.expression.operators.relational.IsNullExpression;
import net.sf.jsqlparser.expression.operators.relational.LikeExpression;
import net.sf.jsqlparser.expression.operators.relational.MinorThan;
import net.sf.jsqlparser.expression.operators.relational.MinorThanEquals;
import net.sf.jsqlparser.expression.operators.relational.NotEqualsTo;
import net.sf.jsqlparser.expression.operators.relational.ParenthesedExpressionList;
import net.sf.jsqlparser.schema.Table;
import net.sf.jsqlparser.statement.Statement;
import net.sf.jsqlparser.statement.create.table.ColDataType;
import net.sf.jsqlparser.statement.select.AllColumns;
import net.sf.jsqlparser.statement.select.ParenthesedSelect;
import net.sf.jsqlparser.statement.select.PlainSelect;
import net.sf.jsqlparser.statement.select.Select;
import net.sf.jsqlparser.statement.select.SelectItem;
import net.sf.jsqlparser.statement.select.SetOperationList;
import net.sf.jsqlparser.statement.select.TableFunction;

/**
 * Lets through one SELECT of columns or {@code *} from one table, with an optional WHERE of comparisons, IN,
 * LIKE and IS NULL joined by AND, OR and NOT, and turns it into an {@link Expr}; refuses everything else with a
 * sentence that names what it found.
 *
 * <p>Deny by default, as the registry's {@code SqlGuard}: each node of JSqlParser's tree must be of one of the
 * classes handled below (compared exactly, so a subclass a newer parser adds is refused), and each of its
 * fields other than those the handler reads must be at its default (null, false, 0, empty). A flag the guard
 * does not know, such as {@code LIKE BINARY} or {@code SELECT ... INTO}, is thereby refused rather than ignored.
 */
final class QueryGuard {
    private static final ClassValue<List<Field>> FIELDS = new ClassValue<>() {
        @Override
        protected List<Field> computeValue(Class<?> type) {
            List<Field> fields = new ArrayList<>();
            for (Class<?> c = type; c != null && c != Object.class; c = c.getSuperclass()) {
                if (c.getName().startsWith("java.")) {
                    break; // ExpressionList's ArrayList: its elements are checked one by one
                }
                for (Field f : c.getDeclaredFields()) {
                    if (!Modifier.isStatic(f.getModifiers())
                            && !f.getType().getName().startsWith("net.sf.jsqlparser.parser.")) {
                        f.setAccessible(true);
                        fields.add(f);
                    }
                }
            }
            return List.copyOf(fields);
        }
    };

    private static final String BINARY = "leftExpression rightExpression operator";

    /** Plain words for the fields a caller is most likely to hit. */
    private static final Map<String, String> SQL_WORDS = Map.ofEntries(Map.entry("joins", "JOIN"),
            Map.entry("groupBy", "GROUP BY"), Map.entry("orderByElements", "ORDER BY"), Map.entry("limit", "LIMIT"),
            Map.entry("offset", "OFFSET"), Map.entry("fetch", "FETCH"), Map.entry("distinct", "DISTINCT"),
            Map.entry("having", "HAVING"), Map.entry("withItemsList", "WITH"),
            Map.entry("intoTables", "SELECT ... INTO"), Map.entry("forMode", "FOR UPDATE"),
            Map.entry("top", "TOP"), Map.entry("first", "FIRST"), Map.entry("skip", "SKIP"),
            Map.entry("alias", "an alias (AS)"), Map.entry("oracleHierarchical", "CONNECT BY"),
            Map.entry("windowDefinitions", "WINDOW"), Map.entry("qualify", "QUALIFY"),
            Map.entry("exclamationMark", "! for NOT"), Map.entry("useOperator", "&& for AND"),
            Map.entry("useBinary", "LIKE BINARY"), Map.entry("caseInsensitive", "a case-insensitive LIKE"),
            Map.entry("useIsNull", "ISNULL"), Map.entry("useNotNull", "NOTNULL"),
            Map.entry("exceptColumns", "* EXCEPT"), Map.entry("replaceExpressions", "* REPLACE"),
            Map.entry("global", "GLOBAL IN"), Map.entry("prefix", "a string prefix"),
            Map.entry("oldOracleJoinSyntax", "(+)"), Map.entry("oraclePriorPosition", "PRIOR"));

    private QueryGuard() {
    }

    /**
     * A query that passed: its table, its columns (null for {@code *}), its WHERE (null when none), and for a
     * history query whether it orders newest first and its LIMIT (-1: none).
     */
    record Checked(String table, List<String> columns, Expr where, boolean descending, long limit) {
    }

    /** @param history whether ORDER BY insert_time and LIMIT are allowed ({@link HistoryClauses}) */
    static Checked check(String sql, boolean history) {
        Statement statement = Sql.parseOne(sql);
        if (statement instanceof SetOperationList) {
            throw new TableException("the query combines SELECTs with UNION, INTERSECT or EXCEPT; a table query is"
                    + " one SELECT");
        }
        if (statement instanceof ParenthesedSelect) {
            throw new TableException("the query is a SELECT in parentheses; write it without them");
        }
        if (statement.getClass() != PlainSelect.class) {
            String kind = statement instanceof Select ? statement.getClass().getSimpleName()
                    : statement.getClass().getSimpleName().toUpperCase(Locale.ROOT);
            throw new TableException("only SELECT is allowed, and this is " + kind);
        }
        PlainSelect select = (PlainSelect) statement;
        shape(select, history ? "selectItems fromItem where orderByElements limit" : "selectItems fromItem where");
        String table = table(select);
        List<String> columns = projection(select.getSelectItems(), table);
        Expr where = select.getWhere() == null ? null : new Walk(table).expr(select.getWhere(), 1);
        return history ? new Checked(table, columns, where, HistoryClauses.descending(select, table),
                HistoryClauses.limit(select)) : new Checked(table, columns, where, false, -1);
    }

    /** The WHERE of {@code SELECT * FROM table WHERE predicate}, which is how a schema's predicate is parsed. */
    static Expr checkPredicate(String table, String predicate) {
        Statement statement = Sql.parsePredicate(table, predicate);
        if (statement.getClass() != PlainSelect.class || ((PlainSelect) statement).getWhere() == null) {
            throw new TableException("the predicate " + Sql.quote(Names.cut(predicate)) + " is not one condition");
        }
        PlainSelect select = (PlainSelect) statement;
        shape(select, "selectItems fromItem where");
        if (!table.equals(table(select)) || projection(select.getSelectItems(), table) != null) {
            throw new TableException("the predicate " + Sql.quote(Names.cut(predicate)) + " is not one condition");
        }
        return new Walk(table).expr(select.getWhere(), 1);
    }

    private static String table(PlainSelect select) {
        Object from = select.getFromItem();
        if (from == null) {
            throw new TableException("the query reads no table; write SELECT ... FROM a table");
        }
        if (from instanceof ParenthesedSelect) {
            throw new TableException("the query reads from a subquery; a table query reads one table");
        }
        if (from instanceof TableFunction) {
            throw new TableException("the query reads from a function (" + Names.cut(from.toString())
                    + "); a table query reads one table");
        }
        if (from.getClass() != Table.class) {
            throw refused(from);
        }
        Table table = (Table) from;
        shape(table, "partItems partDelimiters");
        return tableName(table);
    }

    /** A table's name as the query writes it, refusing a schema or database before it. */
    static String tableName(Table table) {
        if (table.getSchemaName() != null || table.getDatabaseName() != null) {
            throw new TableException("table " + table.getFullyQualifiedName() + " names a schema; write the table"
                    + " name alone");
        }
        return identifier(table.getName());
    }

    /** The columns named, or null for {@code *}. */
    private static List<String> projection(List<SelectItem<?>> items, String table) {
        List<String> names = new ArrayList<>();
        for (SelectItem<?> item : items) {
            shape(item, "expression");
            Expression e = item.getExpression();
            if (e != null && e.getClass() == AllColumns.class) {
                shape(e, "");
                if (items.size() != 1) {
                    throw new TableException("the query selects * beside other columns; select * alone, or"
                            + " columns");
                }
                return null;
            }
            if (e == null || e.getClass() != net.sf.jsqlparser.schema.Column.class) {
                throw new TableException("the query selects " + describe(e) + "; a table query selects columns"
                        + " or *");
            }
            names.add(column(e, table));
        }
        return List.copyOf(names);
    }

    /** The name of a column of {@code table}, refusing anything that is not a column. */
    static String columnName(Expression e, String table) {
        if (e == null || e.getClass() != net.sf.jsqlparser.schema.Column.class) {
            throw new TableException("the statement has " + describe(e) + " where a column of " + table
                    + " belongs");
        }
        return column(e, table);
    }

    /** A column name: unquoted names are read in lower case, "quoted" ones as written. */
    static String column(Expression e, String table) {
        net.sf.jsqlparser.schema.Column c = (net.sf.jsqlparser.schema.Column) e;
        shape(c, "table columnName tableDelimiter");
        Table qualifier = c.getTable();
        if (qualifier != null && qualifier.getName() != null) {
            shape(qualifier, "partItems partDelimiters");
            if (qualifier.getSchemaName() != null || qualifier.getDatabaseName() != null
                    || !identifier(qualifier.getName()).equals(table)) {
                throw new TableException("column " + c + " names " + qualifier.getFullyQualifiedName()
                        + ", which is not the table the query reads (" + table + ")");
            }
        }
        return identifier(c.getColumnName());
    }

    private static String identifier(String written) {
        if (written.length() >= 2 && written.startsWith("\"") && written.endsWith("\"")) {
            return written.substring(1, written.length() - 1);
        }
        if (written.startsWith("`") || written.startsWith("[")) {
            throw new TableException("name " + written + " is quoted with " + written.charAt(0)
                    + "; quote names with \" or not at all");
        }
        return written.toLowerCase(Locale.ROOT);
    }

    /** One walk over a WHERE clause. */
    private static final class Walk {
        private final String table;

        Walk(String table) {
            this.table = table;
        }

        Expr expr(Expression e, int depth) {
            if (depth > TableQuery.MAX_DEPTH) {
                throw new TableException("the WHERE clause nests at least " + depth + " levels deep (parentheses,"
                        + " NOT, AND, OR), over the limit of " + TableQuery.MAX_DEPTH);
            }
            Class<?> type = e.getClass();
            if (type == ParenthesedExpressionList.class) {
                ParenthesedExpressionList<?> list = (ParenthesedExpressionList<?>) e;
                shape(list, "");
                if (list.size() != 1) {
                    throw new TableException("the WHERE clause has a list " + Names.cut(e.toString())
                            + " where a condition belongs");
                }
                return expr(list.get(0), depth + 1);
            }
            if (type == AndExpression.class || type == OrExpression.class) {
                List<Expr> parts = new ArrayList<>();
                for (Expression part : chain((BinaryExpression) e, type)) {
                    parts.add(expr(part, depth + 1));
                }
                return type == AndExpression.class ? new Expr.And(List.copyOf(parts))
                        : new Expr.Or(List.copyOf(parts));
            }
            if (type == NotExpression.class) {
                shape(e, "expression");
                return new Expr.Not(expr(((NotExpression) e).getExpression(), depth + 1));
            }
            Expr.Op op = operator(type);
            if (op != null) {
                shape(e, BINARY);
                return compare((BinaryExpression) e, op);
            }
            if (type == InExpression.class) {
                Expression repaired = repairIn((InExpression) e);
                return repaired == e ? in((InExpression) e) : expr(repaired, depth);
            }
            if (type == LikeExpression.class) {
                return like((LikeExpression) e);
            }
            if (type == IsNullExpression.class) {
                shape(e, "leftExpression not");
                IsNullExpression isNull = (IsNullExpression) e;
                return new Expr.IsNull(columnOf(isNull.getLeftExpression(), e), isNull.isNot());
            }
            if (type == net.sf.jsqlparser.schema.Column.class) {
                throw new TableException("the WHERE clause has " + Names.cut(e.toString()) + " alone where a"
                        + " condition belongs; compare it, as in " + Names.cut(e.toString()) + " = TRUE");
            }
            if (type == BooleanValue.class) {
                throw new TableException("the WHERE clause has " + e.toString().toUpperCase(Locale.ROOT) + " alone"
                        + " where a condition belongs; leave out a WHERE that is always true");
            }
            if (type == Between.class) {
                throw new TableException("BETWEEN is not allowed; write x >= low AND x <= high");
            }
            throw refused(e);
        }

        /**
         * JSqlParser 5.3 parses {@code x IN (1, 2) AND y = 3} as {@code x IN ((1, 2) AND y = 3)} (its issues
         * 2244, 2282, 2356; fixed after 5.3): an IN whose right side is a bare AND or OR. SQL gives IN the higher
         * precedence, so the list is the leftmost operand of that AND/OR tree, and the IN belongs in its place:
         * {@code (x IN (1, 2)) AND y = 3}. A list written in parentheses by the caller is a
         * ParenthesedExpressionList, never a bare AND or OR, so nothing else takes this path.
         *
         * @return the repaired tree, or the IN itself when it was parsed right
         */
        private Expression repairIn(InExpression in) {
            Expression right = in.getRightExpression();
            if (right.getClass() != AndExpression.class && right.getClass() != OrExpression.class) {
                return in;
            }
            BinaryExpression parent = (BinaryExpression) right;
            while (parent.getLeftExpression().getClass() == AndExpression.class
                    || parent.getLeftExpression().getClass() == OrExpression.class) {
                parent = (BinaryExpression) parent.getLeftExpression();
            }
            in.setRightExpression(parent.getLeftExpression());
            parent.setLeftExpression(in);
            return right;
        }

        /** The operands of a chain of one operator (left-deep, as the parser builds it), without recursion. */
        private List<Expression> chain(BinaryExpression top, Class<?> type) {
            Deque<Expression> out = new ArrayDeque<>();
            Expression e = top;
            while (e.getClass() == type) {
                shape(e, "leftExpression rightExpression operator");
                BinaryExpression b = (BinaryExpression) e;
                out.addFirst(b.getRightExpression());
                e = b.getLeftExpression();
            }
            out.addFirst(e);
            return new ArrayList<>(out);
        }

        private Expr compare(BinaryExpression e, Expr.Op op) {
            Expression left = e.getLeftExpression();
            Expression right = e.getRightExpression();
            for (Expression side : new Expression[] {left, right}) {
                if (side instanceof Function || side instanceof ParenthesedSelect) {
                    throw refused(side);
                }
                if (side instanceof CastExpression && !((CastExpression) side).isImplicitCast()) {
                    throw new TableException("CAST is not allowed (" + Names.cut(side.toString())
                            + "); a table query compares a column with a literal");
                }
            }
            boolean leftColumn = left.getClass() == net.sf.jsqlparser.schema.Column.class;
            boolean rightColumn = right.getClass() == net.sf.jsqlparser.schema.Column.class;
            if (left instanceof NullValue || right instanceof NullValue) {
                throw new TableException("the WHERE clause compares with NULL (" + Names.cut(e.toString())
                        + "), which is never true; write IS NULL or IS NOT NULL");
            }
            if (leftColumn && rightColumn) {
                throw new TableException("the WHERE clause compares two columns (" + Names.cut(e.toString())
                        + "); a table query compares a column with a literal");
            }
            if (leftColumn) {
                return new Expr.Compare(column(left, table), op, literal(right, e));
            }
            if (rightColumn) {
                return new Expr.Compare(column(right, table), op.flipped(), literal(left, e));
            }
            throw new TableException("the WHERE clause has " + Names.cut(e.toString()) + ", which compares no"
                    + " column; a table query compares a column with a literal");
        }

        private Expr in(InExpression e) {
            shape(e, "leftExpression rightExpression not");
            String column = columnOf(e.getLeftExpression(), e);
            Expression right = e.getRightExpression();
            List<Literal> literals = new ArrayList<>();
            if (right instanceof ParenthesedSelect) {
                throw new TableException("the query has a subquery (" + Names.cut(right.toString())
                        + "); IN takes a list of literals");
            }
            if (right.getClass() == ParenthesedExpressionList.class || right.getClass() == ExpressionList.class) {
                shape(right, "");
                Collection<?> items = (Collection<?>) right;
                if (items.size() > TableQuery.MAX_IN_ITEMS) {
                    throw new TableException("the IN list of " + column + " has " + items.size()
                            + " items, over the limit of " + TableQuery.MAX_IN_ITEMS);
                }
                for (Object item : items) {
                    literals.add(literal((Expression) item, e));
                }
            } else {
                literals.add(literal(right, e));
            }
            return new Expr.In(column, List.copyOf(literals), e.isNot());
        }

        private Expr like(LikeExpression e) {
            shape(e, "leftExpression rightExpression not likeKeyWord escapeExpression");
            if (e.getLikeKeyWord() != LikeExpression.KeyWord.LIKE) {
                throw new TableException("the query uses " + e.getLikeKeyWord() + ", which a table query does not"
                        + " allow; LIKE is allowed");
            }
            String column = columnOf(e.getLeftExpression(), e);
            if (e.getRightExpression().getClass() != StringValue.class) {
                throw new TableException("a LIKE pattern must be a string literal: " + Names.cut(e.toString()));
            }
            String pattern = string((StringValue) e.getRightExpression());
            int escape = -1;
            if (e.getEscape() != null) {
                if (e.getEscape().getClass() != StringValue.class
                        || string((StringValue) e.getEscape()).codePointCount(0,
                                string((StringValue) e.getEscape()).length()) != 1) {
                    throw new TableException("the ESCAPE of a LIKE must be one character in quotes: "
                            + Names.cut(e.toString()));
                }
                escape = string((StringValue) e.getEscape()).codePointAt(0);
            }
            LikePattern.check(column, pattern, escape);
            return new Expr.Like(column, pattern, escape, e.isNot());
        }

        private String columnOf(Expression e, Expression whole) {
            if (e.getClass() != net.sf.jsqlparser.schema.Column.class) {
                throw new TableException("the WHERE clause has " + Names.cut(whole.toString()) + ", which tests "
                        + describe(e) + " rather than a column");
            }
            return column(e, table);
        }
    }

    private static Expr.Op operator(Class<?> type) {
        if (type == EqualsTo.class) {
            return Expr.Op.EQ;
        } else if (type == NotEqualsTo.class) {
            return Expr.Op.NE;
        } else if (type == MinorThan.class) {
            return Expr.Op.LT;
        } else if (type == MinorThanEquals.class) {
            return Expr.Op.LE;
        } else if (type == GreaterThan.class) {
            return Expr.Op.GT;
        } else if (type == GreaterThanEquals.class) {
            return Expr.Op.GE;
        }
        return null;
    }

    /** A literal of a WHERE clause: a number (signed or not), a string, TRUE or FALSE, or {@code TIMESTAMP '...'}. */
    static Literal literal(Expression e, Expression whole) {
        return literal(e, whole, "the WHERE clause");
    }

    /** As {@link #literal(Expression, Expression)}, in sentences that start with {@code clause}. */
    static Literal literal(Expression e, Expression whole, String clause) {
        Class<?> type = e.getClass();
        if (e instanceof Function || e instanceof ParenthesedSelect) {
            throw refused(e);
        }
        if (type == LongValue.class || type == DoubleValue.class) {
            return number(e, false);
        }
        if (type == SignedExpression.class) {
            shape(e, "sign expression");
            SignedExpression signed = (SignedExpression) e;
            Class<?> inner = signed.getExpression().getClass();
            if ((signed.getSign() == '-' || signed.getSign() == '+')
                    && (inner == LongValue.class || inner == DoubleValue.class)) {
                return number(signed.getExpression(), signed.getSign() == '-');
            }
        }
        if (type == StringValue.class) {
            shape(e, "value");
            return Literal.ofString(string((StringValue) e));
        }
        if (type == BooleanValue.class) {
            shape(e, "value");
            return Literal.ofBoolean(((BooleanValue) e).getValue());
        }
        if (type == CastExpression.class) {
            CastExpression cast = (CastExpression) e;
            shape(cast, "leftExpression colDataType isImplicitCast");
            if (cast.isImplicitCast() && cast.getLeftExpression().getClass() == StringValue.class
                    && cast.getColDataType().getClass() == ColDataType.class) {
                shape(cast.getLeftExpression(), "value");
                shape(cast.getColDataType(), "dataType");
                if (cast.getColDataType().getDataType().equalsIgnoreCase("TIMESTAMP")) {
                    return Literal.ofTimestamp(string((StringValue) cast.getLeftExpression()));
                }
            }
        }
        if (e instanceof NullValue) {
            throw new TableException(clause + " has NULL in " + Names.cut(whole.toString())
                    + ", which is never true; write IS NULL or IS NOT NULL");
        }
        throw new TableException(clause + " has " + Names.cut(whole.toString()) + ", where " + describe(e)
                + " is not a literal; " + (clause.equals("the WHERE clause") ? "a table query compares a column with"
                : "give each column") + " a number, a string, TRUE, FALSE or TIMESTAMP '...'");
    }

    private static Literal number(Expression e, boolean negative) {
        String text = (negative ? "-" : "") + e;
        if (e.getClass() == LongValue.class) {
            shape(e, "stringValue");
            BigInteger v = ((LongValue) e).getBigIntegerValue();
            v = negative ? v.negate() : v;
            if (v.bitLength() > 63) {
                throw new TableException("number " + text + " is out of the range of INTEGER (64 bits)");
            }
            return Literal.ofLong(v.longValue(), text);
        }
        shape(e, "value stringValue");
        double v = ((DoubleValue) e).getValue();
        if (!Double.isFinite(v)) {
            throw new TableException("number " + text + " is out of the range of DOUBLE");
        }
        return Literal.ofDouble(negative ? -v : v, text);
    }

    /** A string literal's value: JSqlParser keeps the quotes' doubling, SQL reads {@code ''} as one quote. */
    private static String string(StringValue s) {
        return s.getValue().replace("''", "'");
    }

    /**
     * Checks that every field of a node other than the named ones is at its default.
     *
     * @param allowed the names of the fields its handler reads, space-separated
     */
    static void shape(Object node, String allowed) {
        shape(node, allowed, "query");
    }

    /** As {@link #shape(Object, String)}, in a sentence that calls the statement a {@code noun} ("insert"). */
    static void shape(Object node, String allowed, String noun) {
        Set<String> fields = allowed.isEmpty() ? Set.of() : Set.of(allowed.split(" "));
        for (Field f : FIELDS.get(node.getClass())) {
            if (fields.contains(f.getName())) {
                continue;
            }
            Object value;
            try {
                value = f.get(node);
            } catch (IllegalAccessException e) {
                throw new IllegalStateException("cannot read " + f, e);
            }
            if (!isDefault(value)) {
                String word = SQL_WORDS.get(f.getName());
                throw new TableException("the " + noun + " uses " + (word != null ? word
                        : node.getClass().getSimpleName() + "." + f.getName()) + ", which a table " + noun
                        + " does not allow");
            }
        }
    }

    private static boolean isDefault(Object value) {
        return value == null || Boolean.FALSE.equals(value)
                || value instanceof Number && ((Number) value).doubleValue() == 0
                || value instanceof Character && (Character) value == 0
                || value instanceof String && ((String) value).isEmpty()
                || value instanceof Collection && ((Collection<?>) value).isEmpty()
                || value instanceof Map && ((Map<?, ?>) value).isEmpty();
    }

    private static TableException refused(Object node) {
        if (node instanceof Function) {
            return new TableException("function " + ((Function) node).getName() + " is not allowed; a table query"
                    + " has no functions");
        }
        if (node instanceof ParenthesedSelect || node instanceof ExistsExpression) {
            return new TableException("the query has a subquery (" + Names.cut(node.toString())
                    + "); a table query reads one table");
        }
        return new TableException("the query uses " + describe(node) + ", which a table query does not allow");
    }

    private static String describe(Object node) {
        if (node == null) {
            return "nothing";
        }
        String text = node.toString();
        return node.getClass().getSimpleName() + (text.length() <= 60 ? " (" + text + ")" : "");
    }
}
