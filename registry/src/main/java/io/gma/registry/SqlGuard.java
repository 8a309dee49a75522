package io.gma.registry;

import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeoutException;
import net.sf.jsqlparser.JSQLParserException;
import net.sf.jsqlparser.parser.CCJSqlParserUtil;
import net.sf.jsqlparser.parser.ParseException;
import net.sf.jsqlparser.parser.Token;
import net.sf.jsqlparser.schema.Column;
import net.sf.jsqlparser.schema.Table;
import net.sf.jsqlparser.expression.Alias;
import net.sf.jsqlparser.expression.CastExpression;
import net.sf.jsqlparser.expression.DoubleValue;
import net.sf.jsqlparser.expression.Expression;
import net.sf.jsqlparser.expression.Function;
import net.sf.jsqlparser.expression.StringValue;
import net.sf.jsqlparser.expression.operators.relational.LikeExpression;
import net.sf.jsqlparser.statement.Statement;
import net.sf.jsqlparser.statement.Statements;
import net.sf.jsqlparser.statement.create.table.ColDataType;
import net.sf.jsqlparser.statement.select.AllTableColumns;
import net.sf.jsqlparser.statement.select.Select;

/**
 * Lets through one SELECT over the registry's views and nothing else; nothing a caller sends reaches the
 * database unless it passed here.
 *
 * <p>JSqlParser parses the text (with a time limit, on the given executor); then the guard walks every
 * object of the syntax tree and refuses the statement unless each one is of an allowed class, each of its
 * flags (booleans, enums, keyword strings) is at its default unless allowed, each table is one of the
 * views with no schema, and each function is on the allowlist. So a construct the guard does not know, such
 * as one a newer parser version adds, is refused rather than passed: deny by default.
 */
final class SqlGuard {
    private static final ClassValue<List<Field>> FIELDS = new ClassValue<>() {
        @Override
        protected List<Field> computeValue(Class<?> type) {
            List<Field> fields = new ArrayList<>();
            for (Class<?> c = type; c != null && c != Object.class; c = c.getSuperclass()) {
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

    /** Parentheses deeper than this are refused before parsing: no registry query needs them. */
    static final int MAX_NESTING = 32;

    /** Approved statements remembered, so a query sent again costs no parse (JSqlParser takes ~0.5 ms). */
    static final int APPROVED_CACHE_SIZE = 1024;
    /** Only statements this short are remembered, bounding the cache to a few megabytes. */
    static final int APPROVED_CACHE_MAX_CHARS = 4096;

    private final int maxSqlChars;
    private final long parseTimeoutMillis;
    private final ExecutorService parser;
    /** Exact statement text to its approval. Approval depends on the text alone, so it never goes stale. */
    private final Map<String, Approved> approved = Collections.synchronizedMap(
            new LinkedHashMap<>(64, 0.75f, true) {
                private static final long serialVersionUID = 1L;

                @Override
                protected boolean removeEldestEntry(Map.Entry<String, Approved> eldest) {
                    return size() > APPROVED_CACHE_SIZE;
                }
            });

    /**
     * A statement the guard passed.
     *
     * @param sql the statement as the guard parsed and checked it, printed again from its syntax tree: this,
     *     never the caller's text, is what the database runs, so the database cannot read the text differently
     *     from the guard (nested comments, say, which JSqlParser ends at the first {@code *}{@code /})
     * @param tables the views it reads, in lower case
     */
    record Approved(String sql, Set<String> tables) {
    }

    SqlGuard(int maxSqlChars, long parseTimeoutMillis, ExecutorService parser) {
        this.maxSqlChars = maxSqlChars;
        this.parseTimeoutMillis = parseTimeoutMillis;
        this.parser = parser;
    }

    /**
     * Checks one statement.
     *
     * @return the statement to run and the views it reads
     * @throws ApiException 400 (not one SELECT, a syntax error with its position, a construct, column or
     *     function not allowed), 403 (a table that is not one of the views), 413 (longer than maxSqlChars),
     *     503 (the parser's queue is full)
     */
    Approved check(String sql) {
        Approved known = sql == null ? null : approved.get(sql);
        if (known != null) {
            return known;
        }
        Approved checked = parseAndWalk(sql);
        if (sql.length() <= APPROVED_CACHE_MAX_CHARS) {
            approved.put(sql, checked);
        }
        return checked;
    }

    int approvedCount() {
        return approved.size();
    }

    private Approved parseAndWalk(String sql) {
        if (sql == null || sql.isBlank()) {
            throw ApiException.badRequest("sql is empty");
        }
        if (sql.length() > maxSqlChars) {
            throw new ApiException(413, "TOO_LARGE",
                    "sql is " + sql.length() + " characters, over the limit of " + maxSqlChars);
        }
        int depth = CCJSqlParserUtil.getNestingDepth(sql);
        if (depth > MAX_NESTING) {
            throw ApiException.badRequest("sql nests parentheses " + depth + " deep, over the limit of " + MAX_NESTING);
        }
        Statements statements = parse(sql);
        if (statements == null || statements.isEmpty()) {
            throw ApiException.badRequest("sql holds no statement; send exactly one SELECT");
        }
        if (statements.size() != 1) {
            throw ApiException.badRequest("sql holds " + statements.size() + " statements; send exactly one SELECT");
        }
        Statement statement = statements.get(0);
        if (!(statement instanceof Select)) {
            throw ApiException.badRequest("only SELECT is allowed, and this is " + kind(statement));
        }
        if (((Select) statement).getWithItemsList() != null) {
            throw ApiException.badRequest("WITH is not allowed; use a subquery over the views");
        }
        Walk walk = new Walk();
        try {
            walk.node(statement);
        } catch (StackOverflowError e) {
            throw ApiException.badRequest("sql is nested too deeply to check");
        }
        walk.checkColumns();
        return new Approved(statement.toString(), Collections.unmodifiableSet(walk.tables));
    }

    private Statements parse(String sql) {
        try {
            return CCJSqlParserUtil.parseStatements(sql, parser, p -> p.withTimeOut(parseTimeoutMillis));
        } catch (JSQLParserException e) {
            for (Throwable cause = e; cause != null; cause = cause.getCause()) {
                if (cause instanceof ParseException && ((ParseException) cause).currentToken != null) {
                    Token at = ((ParseException) cause).currentToken.next != null
                            ? ((ParseException) cause).currentToken.next : ((ParseException) cause).currentToken;
                    throw ApiException.badRequest(String.format("syntax error at line %d, column %d, near %s",
                            at.beginLine, at.beginColumn, at.image == null || at.image.isEmpty() ? "the end"
                                    : Json.quote(at.image)));
                }
                if (cause instanceof TimeoutException) {
                    throw ApiException.badRequest("sql took longer than " + parseTimeoutMillis + " ms to parse");
                }
                if (cause instanceof RejectedExecutionException) {
                    throw busy();
                }
            }
            String reason = e.getMessage() == null ? "" : ": " + e.getMessage().lines().findFirst().orElse("");
            throw ApiException.badRequest("sql could not be parsed" + reason);
        } catch (StackOverflowError e) {
            throw ApiException.badRequest("sql is nested too deeply to parse");
        } catch (RejectedExecutionException e) {
            throw busy();
        } catch (RuntimeException e) {
            // the parser's own failures on odd input: the statement is refused, never passed
            throw ApiException.badRequest("sql could not be parsed (" + e.getClass().getSimpleName() + ")");
        }
    }

    private static ApiException busy() {
        return new ApiException(503, "UNAVAILABLE", "the registry is parsing too many statements; try again");
    }

    private static String kind(Statement statement) {
        return statement.getClass().getSimpleName().toUpperCase(Locale.ROOT);
    }

    /** One walk over a syntax tree: what it has seen, the views it reads, the names it defines and uses. */
    private static final class Walk {
        final Set<String> tables = new TreeSet<>();
        final Map<Object, Boolean> seen = new IdentityHashMap<>();
        /** Table aliases and select-item aliases: names a column or a qualifier may use besides the views'. */
        final Set<String> aliases = new java.util.HashSet<>();
        final List<Column> columns = new ArrayList<>();

        void node(Object node) {
            if (node == null || seen.put(node, Boolean.TRUE) != null) {
                return;
            }
            if (node instanceof Collection) {
                for (Object element : (Collection<?>) node) {
                    if (!isLeaf(element)) {
                        node(element);
                    }
                }
                return;
            }
            Class<?> type = node.getClass();
            Set<String> fields = SqlAllowlist.ALLOWED.get(type.getSimpleName());
            if (fields == null || !SqlAllowlist.ALLOWED_PACKAGES.contains(type.getPackageName())) {
                throw ApiException.badRequest("the query uses " + describe(node)
                        + ", which the registry does not allow");
            }
            special(node);
            for (Field f : FIELDS.get(type)) {
                Object value = read(f, node);
                if (isDefault(value)) {
                    continue;
                }
                if (!fields.contains(f.getName())) {
                    String word = SqlAllowlist.SQL_WORDS.get(f.getName());
                    throw ApiException.badRequest("the query uses " + (word != null ? word + " (" : "")
                            + type.getSimpleName() + "." + f.getName() + (word != null ? ")" : "")
                            + ", which the registry does not allow");
                }
                boolean qualifier = f.getName().equals("table") && !(node instanceof Table);
                if (!qualifier && !isLeaf(value)) {
                    node(value);
                }
            }
        }

        /** The checks that depend on a node's values, not only on its shape. */
        private void special(Object node) {
            if (node instanceof Table) {
                table((Table) node, tables);
            } else if (node instanceof Column) {
                Column column = (Column) node;
                Table qualifier = column.getTable();
                if (qualifier != null && (qualifier.getSchemaName() != null || qualifier.getDatabaseName() != null)) {
                    throw ApiException.forbidden("column " + Json.quote(node.toString())
                            + " names another schema; only the registry's views can be read");
                }
                columns.add(column);
            } else if (node instanceof AllTableColumns) {
                Table qualifier = ((AllTableColumns) node).getTable();
                if (qualifier.getSchemaName() != null || qualifier.getDatabaseName() != null) {
                    throw ApiException.forbidden("column " + Json.quote(node.toString())
                            + " names another schema; only the registry's views can be read");
                }
            } else if (node instanceof Alias) {
                aliases.add(unquote(((Alias) node).getName()));
            } else if (node instanceof Function) {
                function((Function) node);
            } else if (node instanceof LikeExpression) {
                like((LikeExpression) node);
            } else if (node instanceof ColDataType) {
                castType((ColDataType) node);
            } else if (node instanceof DoubleValue && !Double.isFinite(((DoubleValue) node).getValue())) {
                throw ApiException.badRequest("number " + Json.quote(node.toString()) + " is out of range");
            }
        }

        /**
         * Every column must be a column of the views, or an alias the statement defines; a qualifier must be a
         * view or an alias. So names a database would read as functions or variables ({@code current_user},
         * {@code ROWNUM}, PostgreSQL's {@code e.row_to_json}) are refused.
         */
        void checkColumns() {
            for (Column column : columns) {
                String name = unquote(column.getColumnName());
                if (!SqlAllowlist.VIEW_COLUMNS.contains(name) && !aliases.contains(name)) {
                    throw ApiException.badRequest("column " + Json.quote(column.getColumnName())
                            + " is not a column of the views: " + new TreeSet<>(SqlAllowlist.VIEW_COLUMNS));
                }
                Table qualifier = column.getTable();
                if (qualifier != null && qualifier.getName() != null) {
                    String q = unquote(qualifier.getName());
                    if (!Dialect.QUERYABLE.contains(q) && !aliases.contains(q)) {
                        throw ApiException.badRequest("column " + Json.quote(column.toString())
                                + " names " + Json.quote(qualifier.getName())
                                + ", which is neither a view nor an alias in the query");
                    }
                }
            }
        }
    }

    private static String unquote(String name) {
        String n = name.length() >= 2 && (name.startsWith("\"") && name.endsWith("\"")
                || name.startsWith("`") && name.endsWith("`")) ? name.substring(1, name.length() - 1) : name;
        return n.toLowerCase(Locale.ROOT);
    }

    /**
     * LIKE patterns must be literals with at most {@link SqlAllowlist#MAX_LIKE_WILDCARDS} '%': H2 matches them by
     * backtracking, without checking the statement timeout, so a pattern such as {@code %a%a%a%a%b} against a
     * long value could hold a connection and a core for minutes.
     */
    private static void like(LikeExpression like) {
        if (!SqlAllowlist.LIKE_KEYWORDS.contains(String.valueOf(like.getLikeKeyWord()))) {
            throw ApiException.badRequest("the query uses " + like.getLikeKeyWord()
                    + ", which the registry does not allow; LIKE and ILIKE are allowed");
        }
        if (!(like.getRightExpression() instanceof StringValue)
                || like.getEscape() != null && !(like.getEscape() instanceof StringValue)) {
            throw ApiException.badRequest("a LIKE pattern must be a string literal: " + Json.quote(like.toString()));
        }
        if (!likeOperand(like.getLeftExpression())) {
            throw ApiException.badRequest("the left side of LIKE must be a column, or " + new TreeSet<>(
                    SqlAllowlist.LIKE_OPERAND_FUNCTIONS) + " or CAST of one: " + Json.quote(like.toString()));
        }
        String pattern = ((StringValue) like.getRightExpression()).getValue();
        long wildcards = pattern.chars().filter(c -> c == '%').count();
        if (wildcards > SqlAllowlist.MAX_LIKE_WILDCARDS) {
            throw ApiException.badRequest("LIKE pattern " + Json.quote(pattern) + " has " + wildcards
                    + " '%', over the limit of " + SqlAllowlist.MAX_LIKE_WILDCARDS);
        }
    }

    /**
     * Whether {@code e} may stand on the left of LIKE: a column of the views, whose length their schema bounds,
     * or one under functions and CASTs that make it no longer than 4,096 characters: H2's matching time is
     * quadratic in that length.
     */
    private static boolean likeOperand(Expression e) {
        if (e instanceof Column) {
            return true;
        }
        if (e instanceof CastExpression) {
            return likeOperand(((CastExpression) e).getLeftExpression());
        }
        if (e instanceof Function f && f.getName() != null
                && SqlAllowlist.LIKE_OPERAND_FUNCTIONS.contains(f.getName().toUpperCase(Locale.ROOT))
                && f.getParameters() != null && f.getParameters().size() == 1) {
            return likeOperand(f.getParameters().get(0));
        }
        return false;
    }

    /** CAST only to plain types, of bounded length ({@code CHAR (1000000)} keeps its length in the type). */
    private static void castType(ColDataType type) {
        String written = type.getDataType().toUpperCase(Locale.ROOT).trim();
        int open = written.indexOf('(');
        String name = (open < 0 ? written : written.substring(0, open)).trim();
        if (!SqlAllowlist.CAST_TYPES.contains(name)) {
            throw ApiException.badRequest("CAST to " + Json.quote(type.getDataType()) + " is not allowed; the types"
                    + " are " + new TreeSet<>(SqlAllowlist.CAST_TYPES));
        }
        List<String> arguments = new ArrayList<>();
        if (open >= 0) {
            arguments.addAll(List.of(written.substring(open + 1, written.lastIndexOf(')') < open ? written.length()
                    : written.lastIndexOf(')')).split(",")));
        }
        if (type.getArgumentsStringList() != null) {
            arguments.addAll(type.getArgumentsStringList());
        }
        for (String argument : arguments) {
            String a = argument.trim();
            if (!a.matches("\\d{1,7}") || Integer.parseInt(a) > SqlAllowlist.MAX_CAST_LENGTH) {
                throw ApiException.badRequest("CAST length " + Json.quote(a) + " is not a whole number up to "
                        + SqlAllowlist.MAX_CAST_LENGTH);
            }
        }
    }

    private static boolean isLeaf(Object value) {
        return value == null || value instanceof String || value instanceof Number || value instanceof Boolean
                || value instanceof Character || value instanceof Enum;
    }

    private static boolean isDefault(Object value) {
        return value == null || Boolean.FALSE.equals(value)
                || value instanceof Number && ((Number) value).doubleValue() == 0
                || value instanceof String && ((String) value).isEmpty()
                || value instanceof Collection && ((Collection<?>) value).isEmpty();
    }

    private static void table(Table table, Set<String> tables) {
        if (table.getSchemaName() != null || table.getDatabaseName() != null) {
            throw ApiException.forbidden("table " + Json.quote(table.getFullyQualifiedName())
                    + " is in another schema; only the registry's views can be read: " + Dialect.QUERYABLE);
        }
        String name = table.getUnquotedName().toLowerCase(Locale.ROOT);
        if (!Dialect.QUERYABLE.contains(name)) {
            throw ApiException.forbidden("table " + Json.quote(table.getName()) + " is not allowed; the registry's"
                    + " views are " + String.join(", ", Dialect.QUERYABLE));
        }
        tables.add(name);
    }

    private static void function(Function f) {
        String name = f.getName() == null ? "" : f.getName().toUpperCase(Locale.ROOT);
        if (!SqlAllowlist.FUNCTIONS.contains(name)) {
            throw ApiException.badRequest("function " + Json.quote(f.getName() == null ? "?" : f.getName())
                    + " is not allowed; the allowed functions are " + new TreeSet<>(SqlAllowlist.FUNCTIONS));
        }
    }

    private static Object read(Field f, Object node) {
        try {
            return f.get(node);
        } catch (IllegalAccessException e) {
            throw new IllegalStateException("cannot read " + f, e);
        }
    }

    private static String describe(Object node) {
        String text = node.toString();
        String simple = node.getClass().getSimpleName();
        return simple + (text.length() <= 60 ? " (" + text + ")" : "");
    }
}
