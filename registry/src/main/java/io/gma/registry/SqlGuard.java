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
import java.util.concurrent.TimeoutException;
import net.sf.jsqlparser.JSQLParserException;
import net.sf.jsqlparser.parser.CCJSqlParserUtil;
import net.sf.jsqlparser.parser.ParseException;
import net.sf.jsqlparser.parser.Token;
import net.sf.jsqlparser.schema.Column;
import net.sf.jsqlparser.schema.Table;
import net.sf.jsqlparser.expression.Function;
import net.sf.jsqlparser.expression.operators.relational.LikeExpression;
import net.sf.jsqlparser.statement.Statement;
import net.sf.jsqlparser.statement.Statements;
import net.sf.jsqlparser.statement.select.AllTableColumns;
import net.sf.jsqlparser.statement.select.Select;

/**
 * Lets through one SELECT over the registry's views and nothing else; nothing a caller sends reaches the
 * database unless it passed here.
 *
 * <p>JSqlParser parses the text (with a time limit, on the given executor); then the guard walks every
 * object of the syntax tree and refuses the statement unless each one is of an allowed class, each of its
 * flags (booleans, enums, keyword strings) is at its default unless allowed, each table is one of the five
 * views with no schema, and each function is on the allowlist. So a construct the guard does not know, such
 * as one a newer parser version adds, is refused rather than passed: deny by default.
 */
final class SqlGuard {
    static final Set<String> FUNCTIONS = Set.of("COUNT", "SUM", "MIN", "MAX", "AVG", "LOWER", "UPPER", "LENGTH",
            "CHAR_LENGTH", "CHARACTER_LENGTH", "SUBSTRING", "SUBSTR", "TRIM", "LTRIM", "RTRIM", "CONCAT", "COALESCE",
            "NULLIF", "ABS", "ROUND", "FLOOR", "CEIL", "CEILING", "MOD", "GREATEST", "LEAST");

    private static final String BINARY = "leftExpression rightExpression operator";

    /**
     * The syntax-tree classes a query may contain (by simple name; {@link #ALLOWED_PACKAGES} checks the rest),
     * each with the fields that may differ from their default. Every other field must be null, false, 0 or
     * empty: {@code SELECT ... INTO} is a Table in {@code PlainSelect.intoTables}, {@code FOR UPDATE} an enum in
     * {@code forMode}, and both are refused because those fields are not listed.
     */
    private static final Map<String, Set<String>> ALLOWED = Map.ofEntries(
            allow("PlainSelect", "distinct selectItems fromItem joins where groupBy having limit offset fetch"
                    + " orderByElements alias"),
            allow("SetOperationList", "selects operations orderByElements limit offset fetch alias"),
            allow("ParenthesedSelect", "select alias orderByElements limit offset fetch"),
            allow("ParenthesedFromItem", "fromItem joins alias"),
            allow("SelectItem", "expression alias"),
            allow("AllColumns", ""),
            allow("AllTableColumns", "table"),
            allow("Join", "onExpressions usingColumns outer right left natural full inner simple cross fromItem"),
            allow("OrderByElement", "expression asc ascDescPresent nullOrdering"),
            allow("GroupByElement", "groupByExpressions"),
            allow("Limit", "rowCount offset"),
            allow("Offset", "offsetExpression offsetParam"),
            allow("Fetch", "fetchParameters expression isFetchParamFirst"),
            allow("Distinct", ""),
            allow("UnionOp", "distinct all type"),
            allow("IntersectOp", "distinct all type"),
            allow("ExceptOp", "distinct all type"),
            allow("MinusOp", "distinct all type"),
            allow("Table", "partItems partDelimiters alias"),
            allow("Column", "table columnName tableDelimiter"),
            allow("Alias", "name useAs"),
            allow("LongValue", "stringValue"),
            allow("DoubleValue", "value stringValue"),
            allow("StringValue", "value"),
            allow("NullValue", ""),
            allow("TimeKeyExpression", "stringValue"),
            allow("SignedExpression", "sign expression"),
            allow("Function", "nameparts parameters allColumns distinct"),
            allow("CaseExpression", "switchExpression whenClauses elseExpression"),
            allow("WhenClause", "whenExpression thenExpression"),
            allow("CastExpression", "keyword leftExpression colDataType isImplicitCast"),
            allow("ColDataType", "dataType argumentsStringList"),
            allow("NotExpression", "expression exclamationMark"),
            allow("Addition", BINARY), allow("Subtraction", BINARY), allow("Multiplication", BINARY),
            allow("Division", BINARY), allow("Modulo", BINARY), allow("Concat", BINARY),
            allow("AndExpression", BINARY + " useOperator"), allow("OrExpression", BINARY),
            allow("EqualsTo", BINARY), allow("NotEqualsTo", BINARY), allow("GreaterThan", BINARY),
            allow("GreaterThanEquals", BINARY), allow("MinorThan", BINARY), allow("MinorThanEquals", BINARY),
            allow("InExpression", "leftExpression rightExpression not"),
            allow("IsNullExpression", "leftExpression not useIsNull useNotNull"),
            allow("LikeExpression", "leftExpression rightExpression not likeKeyWord escapeExpression"),
            allow("Between", "leftExpression not betweenExpressionStart betweenExpressionEnd"),
            allow("ExistsExpression", "rightExpression not"));

    private static final Set<String> ALLOWED_PACKAGES = Set.of("net.sf.jsqlparser.statement.select",
            "net.sf.jsqlparser.schema", "net.sf.jsqlparser.expression", "net.sf.jsqlparser.statement.create.table",
            "net.sf.jsqlparser.expression.operators.arithmetic", "net.sf.jsqlparser.expression.operators.conditional",
            "net.sf.jsqlparser.expression.operators.relational");

    /** LIKE and ILIKE; not the regular-expression forms, whose cost a caller controls. */
    private static final Set<String> LIKE_KEYWORDS = Set.of("LIKE", "ILIKE");

    /** Plain words for the fields a caller is most likely to hit. */
    private static final Map<String, String> SQL_WORDS = Map.of("intoTables", "SELECT ... INTO", "withItemsList",
            "WITH", "forMode", "FOR UPDATE", "forUpdateTable", "FOR UPDATE OF", "top", "TOP", "first", "FIRST",
            "oracleHierarchical", "CONNECT BY", "pivot", "PIVOT");

    private static Map.Entry<String, Set<String>> allow(String type, String fields) {
        return Map.entry(type, fields.isEmpty() ? Set.of() : Set.of(fields.split(" ")));
    }

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
    /** Exact statement text to the views it reads. Approval depends on the text alone, so it never goes stale. */
    private final Map<String, Set<String>> approved = Collections.synchronizedMap(
            new LinkedHashMap<>(64, 0.75f, true) {
                private static final long serialVersionUID = 1L;

                @Override
                protected boolean removeEldestEntry(Map.Entry<String, Set<String>> eldest) {
                    return size() > APPROVED_CACHE_SIZE;
                }
            });

    SqlGuard(int maxSqlChars, long parseTimeoutMillis, ExecutorService parser) {
        this.maxSqlChars = maxSqlChars;
        this.parseTimeoutMillis = parseTimeoutMillis;
        this.parser = parser;
    }

    /**
     * Checks one statement.
     *
     * @return the views it reads, in lower case
     * @throws ApiException 400 (not one SELECT, a syntax error with its position, a construct or function not
     *     allowed), 403 (a table that is not one of the views), 413 (longer than maxSqlChars)
     */
    Set<String> check(String sql) {
        Set<String> known = sql == null ? null : approved.get(sql);
        if (known != null) {
            return known;
        }
        Set<String> tables = Collections.unmodifiableSet(parseAndWalk(sql));
        if (sql.length() <= APPROVED_CACHE_MAX_CHARS) {
            approved.put(sql, tables);
        }
        return tables;
    }

    int approvedCount() {
        return approved.size();
    }

    private Set<String> parseAndWalk(String sql) {
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
        Set<String> tables = new TreeSet<>();
        walk(statement, tables, new IdentityHashMap<>());
        return tables;
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
            }
            String reason = e.getMessage() == null ? "" : ": " + e.getMessage().lines().findFirst().orElse("");
            throw ApiException.badRequest("sql could not be parsed" + reason);
        } catch (StackOverflowError e) {
            throw ApiException.badRequest("sql is nested too deeply to parse");
        } catch (RuntimeException e) {
            // the parser's own failures on odd input: the statement is refused, never passed
            throw ApiException.badRequest("sql could not be parsed (" + e.getClass().getSimpleName() + ")");
        }
    }

    private static String kind(Statement statement) {
        return statement.getClass().getSimpleName().toUpperCase(Locale.ROOT);
    }

    private static void walk(Object node, Set<String> tables, Map<Object, Boolean> seen) {
        if (node == null || seen.put(node, Boolean.TRUE) != null) {
            return;
        }
        if (node instanceof Collection) {
            for (Object element : (Collection<?>) node) {
                if (!isLeaf(element)) {
                    walk(element, tables, seen);
                }
            }
            return;
        }
        Class<?> type = node.getClass();
        Set<String> fields = ALLOWED.get(type.getSimpleName());
        if (fields == null || !ALLOWED_PACKAGES.contains(type.getPackageName())) {
            throw ApiException.badRequest("the query uses " + describe(node) + ", which the registry does not allow");
        }
        if (node instanceof Table) {
            table((Table) node, tables);
        } else if (node instanceof Column || node instanceof AllTableColumns) {
            // a column's qualifier names a table or an alias in FROM; it may not reach into another schema
            Table qualifier = node instanceof Column ? ((Column) node).getTable() : ((AllTableColumns) node).getTable();
            if (qualifier != null && (qualifier.getSchemaName() != null || qualifier.getDatabaseName() != null)) {
                throw ApiException.forbidden("column " + Json.quote(node.toString())
                        + " names another schema; only the registry's views can be read");
            }
        } else if (node instanceof Function) {
            function((Function) node);
        } else if (node instanceof LikeExpression
                && !LIKE_KEYWORDS.contains(String.valueOf(((LikeExpression) node).getLikeKeyWord()))) {
            throw ApiException.badRequest("the query uses " + ((LikeExpression) node).getLikeKeyWord()
                    + ", which the registry does not allow; LIKE and ILIKE are allowed");
        }
        for (Field f : FIELDS.get(type)) {
            Object value = read(f, node);
            if (isDefault(value)) {
                continue;
            }
            if (!fields.contains(f.getName())) {
                String word = SQL_WORDS.get(f.getName());
                throw ApiException.badRequest("the query uses " + (word != null ? word + " (" : "")
                        + type.getSimpleName() + "." + f.getName() + (word != null ? ")" : "")
                        + ", which the registry does not allow");
            }
            boolean qualifier = f.getName().equals("table") && !(node instanceof Table);
            if (!qualifier && !isLeaf(value)) {
                walk(value, tables, seen);
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
        if (!FUNCTIONS.contains(name)) {
            throw ApiException.badRequest("function " + Json.quote(f.getName() == null ? "?" : f.getName())
                    + " is not allowed; the allowed functions are " + new TreeSet<>(FUNCTIONS));
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
