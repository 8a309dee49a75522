package io.gma.tables;

import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The rules for table and column names: SQL identifiers that every query can name without quotes.
 *
 * <p>The syntax is checked here by hand; whether SQL reserves the word ({@code order}, {@code null},
 * {@code current_date}) is asked of the query parser itself, so that a name a schema accepts is always one a
 * {@link TableQuery} can use.
 */
final class Names {
    static final int MAX_NAME_CHARS = 64;

    /**
     * Names the parser already accepted, as "t:name" (a table) and "c:name" (a column); bounded, since any caller
     * can make names.
     */
    private static final Set<String> USABLE = ConcurrentHashMap.newKeySet();
    private static final int MAX_REMEMBERED = 4096;

    /**
     * Words of the clauses a table query has, or may have one day (ORDER BY, GROUP BY, LIMIT, JOIN), that a
     * name may not be even where today's parser would take it as a column: names outlive parser versions. The
     * registry's list (TableRequests.KEYWORDS), word for word, so that a schema this module takes is one the
     * registry takes (examples' TableKeywordsTest holds them together).
     */
    private static final Set<String> RESERVED = Set.of("all", "and", "any", "as", "asc", "between", "both", "by",
            "case", "cast", "check", "constraint", "create", "cross", "current", "default", "delete", "desc",
            "distinct", "drop", "else", "end", "escape", "except", "exists", "false", "fetch", "for", "foreign",
            "from", "full", "group", "having", "ilike", "in", "inner", "insert", "intersect", "interval", "into", "is",
            "join", "lateral", "leading", "left", "like", "limit", "minus", "natural", "not", "null", "offset", "on",
            "only", "or", "order", "outer", "primary", "qualify", "right", "select", "set", "some", "table", "then",
            "top", "trailing", "true", "union", "unique", "unknown", "update", "using", "values", "when", "where",
            "window", "with");

    private Names() {
    }

    /**
     * Checks the syntax: 1..64 characters of [a-z0-9_], the first a letter.
     *
     * @param what "column name", "table name", for the sentence
     */
    static void checkIdentifier(String what, String name) {
        if (name.isEmpty()) {
            throw new TableException(what + " is empty");
        }
        if (name.length() > MAX_NAME_CHARS) {
            throw new TableException(what + " " + Sql.quote(cut(name)) + " is " + name.length()
                    + " characters, over the limit of " + MAX_NAME_CHARS);
        }
        for (int i = 0; i < name.length(); i++) {
            char c = name.charAt(i);
            boolean letter = c >= 'a' && c <= 'z';
            if (i == 0 && !letter) {
                throw new TableException(what + " " + Sql.quote(name)
                        + " must start with a lower-case letter a-z");
            }
            if (!letter && !(c >= '0' && c <= '9') && c != '_') {
                throw new TableException(String.format("%s %s has %s at index %d; names are lower-case letters,"
                        + " digits and '_'", what, Sql.quote(name), Sql.describeChar(name, i), i));
            }
        }
    }

    /**
     * Checks that a query can name the table and every column without quotes: one parse for the whole schema,
     * and one per name only when that fails, to say which.
     */
    static void checkUsableInQueries(String table, List<Column> columns) {
        if (RESERVED.contains(table)) {
            throw new TableException("table name " + Sql.quote(table) + " is a word SQL reserves;"
                    + " a query could not name it");
        }
        for (Column c : columns) {
            if (RESERVED.contains(c.name())) {
                throw new TableException("column name " + Sql.quote(c.name()) + " is a word SQL reserves;"
                        + " a query could not name it");
            }
        }
        boolean allKnown = USABLE.contains("t:" + table);
        for (Column c : columns) {
            allKnown &= USABLE.contains("c:" + c.name());
        }
        if (allKnown) {
            return;
        }
        StringBuilder probe = new StringBuilder("SELECT ");
        for (int i = 0; i < columns.size(); i++) {
            probe.append(i == 0 ? "" : ", ").append(columns.get(i).name());
        }
        probe.append(" FROM ").append(table).append(" WHERE ");
        for (int i = 0; i < columns.size(); i++) {
            probe.append(i == 0 ? "" : " AND ").append(columns.get(i).name()).append(" IS NULL");
        }
        if (!Sql.namesAreColumns(probe.toString(), table, columns)) {
            if (!Sql.namesAreColumns("SELECT x FROM " + table + " WHERE x IS NULL", table,
                    List.of(new Column("x", ColumnType.INTEGER)))) {
                throw new TableException("table name " + Sql.quote(table) + " is a word SQL reserves;"
                        + " a query could not name it");
            }
            for (Column c : columns) {
                if (!Sql.namesAreColumns("SELECT " + c.name() + " FROM t WHERE " + c.name() + " IS NULL", "t",
                        List.of(c))) {
                    throw new TableException("column name " + Sql.quote(c.name()) + " is a word SQL reserves;"
                            + " a query could not name it");
                }
            }
            throw new TableException("the names of table " + table + " cannot all be used in one query");
        }
        if (USABLE.size() < MAX_REMEMBERED) {
            USABLE.add("t:" + table);
            for (Column c : columns) {
                USABLE.add("c:" + c.name());
            }
        }
    }

    static String cut(String s) {
        return s.length() <= 80 ? s : s.substring(0, 77) + "...";
    }
}
