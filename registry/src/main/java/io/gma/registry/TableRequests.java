package io.gma.registry;

import com.fasterxml.jackson.databind.JsonNode;
import io.gma.registry.api.ColumnDeclaration;
import io.gma.registry.api.ColumnType;
import io.gma.registry.api.TableDeclaration;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Pattern;

/**
 * Reads and checks the bodies of the table calls: a declaration ({@code POST /tables}) and a publication
 * ({@code PUT /endpoints/{name}/tables/{table}}). Every refusal is a 400 whose sentence names the value and the
 * limit, as {@link Requests} does.
 */
final class TableRequests {
    /** The most columns a table has. */
    static final int MAX_COLUMNS = 64;
    /** The longest predicate, in bytes of UTF-8. */
    static final int MAX_PREDICATE_BYTES = 1024;
    /** The longest latest retention: 7 days. */
    static final int MAX_LATEST_RETENTION_SECONDS = 7 * 24 * 3600;
    /** The longest history retention: 366 days, as the tables module's {@code TableSchema} allows. */
    static final int MAX_HISTORY_RETENTION_SECONDS = 366 * 24 * 3600;
    static final String IDENTIFIER_RULE = "an SQL identifier: 1..64 of a-z, 0-9 and _, starting with a letter";
    private static final Pattern IDENTIFIER = Pattern.compile("[a-z][a-z0-9_]{0,63}");
    /**
     * Words a table or column may not be named: the SQL keywords that would make a query over the table read
     * otherwise than meant. A fixed list, so that what is accepted does not change with a parser's version.
     */
    static final Set<String> KEYWORDS = Set.of("all", "and", "any", "as", "asc", "between", "both", "by", "case",
            "cast", "check", "constraint", "create", "cross", "current", "default", "delete", "desc", "distinct",
            "drop", "else", "end", "escape", "except", "exists", "false", "fetch", "for", "foreign", "from", "full",
            "group", "having", "ilike", "in", "inner", "insert", "intersect", "interval", "into", "is", "join",
            "lateral", "leading", "left", "like", "limit", "minus", "natural", "not", "null", "offset", "on", "only",
            "or", "order", "outer", "primary", "qualify", "right", "select", "set", "some", "table", "then", "top",
            "trailing", "true", "union", "unique", "unknown", "update", "using", "values", "when", "where", "window",
            "with");
    private static final Set<String> TABLE_FIELDS = Set.of("name", "columns", "primaryKey");
    private static final Set<String> COLUMN_FIELDS = Set.of("name", "type");
    private static final Set<String> PUBLICATION_FIELDS = Set.of("predicate", "latestRetentionSeconds",
            "historyRetentionSeconds", "archive");

    /** A checked publication; the producer and the table come from the path. */
    record NewPublication(String predicate, int latestRetentionSeconds, int historyRetentionSeconds,
            boolean archive) {
    }

    private TableRequests() {
    }

    static TableDeclaration declaration(byte[] body) {
        JsonNode json = Requests.object(body, TABLE_FIELDS);
        String name = identifier("name", Requests.text(json, "name"));
        JsonNode columnsNode = array(json, "columns");
        if (columnsNode.isEmpty() || columnsNode.size() > MAX_COLUMNS) {
            throw ApiException.badRequest("table " + name + " has " + columnsNode.size() + " columns; a table has 1.."
                    + MAX_COLUMNS);
        }
        List<ColumnDeclaration> columns = new ArrayList<>();
        Set<String> names = new HashSet<>();
        for (JsonNode c : columnsNode) {
            if (!c.isObject()) {
                throw ApiException.badRequest("column " + Json.quote(c.toString()) + " is not an object with name and"
                        + " type");
            }
            for (Iterator<String> it = c.fieldNames(); it.hasNext();) {
                String field = it.next();
                if (!COLUMN_FIELDS.contains(field)) {
                    throw ApiException.badRequest("unknown field " + Json.quote(field) + " in a column; its fields are "
                            + new TreeSet<>(COLUMN_FIELDS));
                }
            }
            String column = identifier("column name", Requests.text(c, "name"));
            if (!names.add(column)) {
                throw ApiException.badRequest("column " + column + " is given twice");
            }
            columns.add(new ColumnDeclaration(column, type(column, Requests.text(c, "type"))));
        }
        JsonNode keyNode = array(json, "primaryKey");
        if (keyNode.isEmpty()) {
            throw ApiException.badRequest("primaryKey is empty: name 1 or more of the columns of " + name);
        }
        List<String> key = new ArrayList<>();
        for (JsonNode k : keyNode) {
            if (!k.isTextual()) {
                throw ApiException.badRequest("primaryKey entry " + Json.quote(k.toString()) + " is not a string");
            }
            String column = k.textValue();
            if (!names.contains(column)) {
                throw ApiException.badRequest("primaryKey names " + Json.quote(column) + ", which is not a column of "
                        + name);
            }
            if (key.contains(column)) {
                throw ApiException.badRequest("primaryKey names " + column + " twice");
            }
            key.add(column);
        }
        return new TableDeclaration(name, columns, key);
    }

    static NewPublication publication(byte[] body) {
        JsonNode json = Requests.object(body, PUBLICATION_FIELDS);
        String predicate = null;
        if (json.has("predicate") && !json.get("predicate").isNull()) {
            predicate = Requests.text(json, "predicate");
            int bytes = predicate.getBytes(StandardCharsets.UTF_8).length;
            if (bytes > MAX_PREDICATE_BYTES) {
                throw ApiException.badRequest("predicate is " + bytes + " bytes of UTF-8, over the limit of "
                        + MAX_PREDICATE_BYTES);
            }
            if (predicate.isBlank()) {
                throw ApiException.badRequest("predicate is blank; leave it out to publish every row");
            }
            if (predicate.indexOf('\u0000') >= 0) {
                throw ApiException.badRequest("predicate contains a NUL character");
            }
        }
        boolean archive = false;
        JsonNode flag = json.get("archive");
        if (flag != null && !flag.isNull()) {
            if (!flag.isBoolean()) {
                throw ApiException.badRequest("archive " + Json.quote(flag.isTextual() ? flag.textValue()
                        : flag.toString()) + " is not true or false");
            }
            archive = flag.booleanValue();
        }
        return new NewPublication(predicate,
                Requests.integer(json, "latestRetentionSeconds", 1, MAX_LATEST_RETENTION_SECONDS, null),
                Requests.integer(json, "historyRetentionSeconds", 0, MAX_HISTORY_RETENTION_SECONDS, null), archive);
    }

    /** Checks a table's or column's name: {@link #IDENTIFIER_RULE}, and not one of the {@link #KEYWORDS}. */
    static String identifier(String field, String value) {
        if (!IDENTIFIER.matcher(value).matches()) {
            throw ApiException.badRequest(field + " " + Json.quote(value) + " is not " + IDENTIFIER_RULE);
        }
        if (KEYWORDS.contains(value)) {
            throw ApiException.badRequest(field + " " + Json.quote(value) + " is an SQL keyword; choose another");
        }
        return value;
    }

    private static ColumnType type(String column, String type) {
        try {
            // the enum's names only, as written: "integer" is refused rather than read two ways
            if (type.equals(type.toUpperCase(Locale.ROOT))) {
                return ColumnType.valueOf(type);
            }
        } catch (IllegalArgumentException e) {
            // refused below
        }
        throw ApiException.badRequest("column " + column + " has type " + Json.quote(type) + ", which is not one of "
                + Arrays.toString(ColumnType.values()));
    }

    private static JsonNode array(JsonNode json, String field) {
        JsonNode value = json.get(field);
        if (value == null || value.isNull()) {
            throw ApiException.badRequest(field + " is missing");
        }
        if (!value.isArray()) {
            throw ApiException.badRequest(field + " " + Json.quote(value.isTextual() ? value.textValue()
                    : value.toString()) + " is not an array");
        }
        return value;
    }
}
