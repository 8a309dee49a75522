package io.gma.registry;

import java.util.Map;
import java.util.Set;

/**
 * What a registry query may contain: the data the {@link SqlGuard} checks a syntax tree against. Everything
 * not named here is refused.
 */
final class SqlAllowlist {
    private SqlAllowlist() {
    }

    static final Set<String> FUNCTIONS = Set.of("COUNT", "SUM", "MIN", "MAX", "AVG", "LOWER", "UPPER", "LENGTH",
            "CHAR_LENGTH", "CHARACTER_LENGTH", "SUBSTRING", "SUBSTR", "TRIM", "LTRIM", "RTRIM", "COALESCE",
            "NULLIF", "ABS", "ROUND", "FLOOR", "CEIL", "CEILING", "MOD", "GREATEST", "LEAST");
    /**
     * The functions that may wrap a column on the left of LIKE: none makes a string longer. Neither {@code ||} nor
     * CONCAT is allowed anywhere: chained and nested, they build strings of any length from the views' short
     * ones, which H2's LIKE matches in time quadratic in their length without checking the statement timeout,
     * and which can run it out of memory (it then closes the database).
     */
    static final Set<String> LIKE_OPERAND_FUNCTIONS = Set.of("LOWER", "UPPER");

    static final String BINARY = "leftExpression rightExpression operator";

    /**
     * The syntax-tree classes a query may contain (by simple name; {@link #ALLOWED_PACKAGES} checks the rest),
     * each with the fields that may differ from their default. Every other field must be null, false, 0 or
     * empty: {@code SELECT ... INTO} is a Table in {@code PlainSelect.intoTables}, {@code FOR UPDATE} an enum in
     * {@code forMode}, and both are refused because those fields are not listed.
     */
    static final Map<String, Set<String>> ALLOWED = Map.ofEntries(
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
            allow("Division", BINARY), allow("Modulo", BINARY),
            allow("AndExpression", BINARY + " useOperator"), allow("OrExpression", BINARY),
            allow("EqualsTo", BINARY), allow("NotEqualsTo", BINARY), allow("GreaterThan", BINARY),
            allow("GreaterThanEquals", BINARY), allow("MinorThan", BINARY), allow("MinorThanEquals", BINARY),
            allow("InExpression", "leftExpression rightExpression not"),
            allow("IsNullExpression", "leftExpression not useIsNull useNotNull"),
            allow("LikeExpression", "leftExpression rightExpression not likeKeyWord escapeExpression"),
            allow("Between", "leftExpression not betweenExpressionStart betweenExpressionEnd"),
            allow("ExistsExpression", "rightExpression not"));

    static final Set<String> ALLOWED_PACKAGES = Set.of("net.sf.jsqlparser.statement.select",
            "net.sf.jsqlparser.schema", "net.sf.jsqlparser.expression", "net.sf.jsqlparser.statement.create.table",
            "net.sf.jsqlparser.expression.operators.arithmetic", "net.sf.jsqlparser.expression.operators.conditional",
            "net.sf.jsqlparser.expression.operators.relational");

    /** LIKE and ILIKE; not the regular-expression forms, whose cost a caller controls. */
    static final Set<String> LIKE_KEYWORDS = Set.of("LIKE", "ILIKE");
    static final int MAX_LIKE_WILDCARDS = 2;
    static final Set<String> CAST_TYPES = Set.of("VARCHAR", "CHAR", "CHARACTER", "TEXT", "INT", "INTEGER",
            "BIGINT", "SMALLINT", "DECIMAL", "NUMERIC", "REAL", "DOUBLE", "DOUBLE PRECISION", "FLOAT", "BOOLEAN",
            "DATE", "TIMESTAMP");
    static final int MAX_CAST_LENGTH = 4096;
    /** The columns of the views; with the aliases a statement defines, the only names a column may have. */
    static final Set<String> VIEW_COLUMNS = Set.of("name", "label", "kind", "domain", "host", "port",
            "registered_at", "expires_at", "key", "value", "url", "via", "true", "false",
            // tables, table_columns, publishers
            "primary_key", "declared_by", "declared_at", "table_name", "position", "type", "in_key", "key_position",
            "predicate", "latest_retention_s", "history_retention_s", "published_at", "archive");

    /** Plain words for the fields a caller is most likely to hit. */
    static final Map<String, String> SQL_WORDS = Map.of("intoTables", "SELECT ... INTO", "withItemsList",
            "WITH", "forMode", "FOR UPDATE", "forUpdateTable", "FOR UPDATE OF", "top", "TOP", "first", "FIRST",
            "oracleHierarchical", "CONNECT BY", "pivot", "PIVOT");

    private static Map.Entry<String, Set<String>> allow(String type, String fields) {
        return Map.entry(type, fields.isEmpty() ? Set.of() : Set.of(fields.split(" ")));
    }
}
