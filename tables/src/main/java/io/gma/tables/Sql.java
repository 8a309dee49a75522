package io.gma.tables;

import java.util.ArrayList;
import java.util.List;
import net.sf.jsqlparser.expression.Expression;
import net.sf.jsqlparser.expression.operators.conditional.AndExpression;
import net.sf.jsqlparser.expression.operators.relational.IsNullExpression;
import net.sf.jsqlparser.parser.CCJSqlParser;
import net.sf.jsqlparser.parser.CCJSqlParserUtil;
import net.sf.jsqlparser.parser.ParseException;
import net.sf.jsqlparser.parser.Token;
import net.sf.jsqlparser.statement.Statement;
import net.sf.jsqlparser.statement.Statements;
import net.sf.jsqlparser.statement.select.PlainSelect;
import net.sf.jsqlparser.statement.select.SelectItem;

/**
 * Text-level checks and the parse: the length and nesting limits, comments, and JSqlParser itself. What the
 * parse gives is checked node by node by the {@link QueryGuard}.
 *
 * <p>JSqlParser runs on the caller's thread with its "complex parsing" off: with it on, the parser backtracks
 * and takes seconds for ten nested parentheses; off, a statement of {@link TableQuery#MAX_SQL_CHARS} parses in
 * milliseconds. The limits are checked on the text before the parser sees it.
 */
final class Sql {
    private Sql() {
    }

    /** Parses one statement, refusing what is too long, too deep, commented or more than one statement. */
    static Statement parseOne(String sql) {
        return parseOne(sql, "query", "SELECT");
    }

    /**
     * As {@link #parseOne(String)}, with sentences that call the text {@code noun} ("query", "insert") and ask for
     * one {@code kind} ("SELECT", "INSERT").
     */
    static Statement parseOne(String sql, String noun, String kind) {
        if (sql == null || sql.isBlank()) {
            throw new TableException("the " + noun + " is empty; send one " + kind);
        }
        if (sql.length() > TableQuery.MAX_SQL_CHARS) {
            throw new TableException("the " + noun + " is " + sql.length() + " characters, over the limit of "
                    + TableQuery.MAX_SQL_CHARS);
        }
        checkText(sql, noun);
        int depth = CCJSqlParserUtil.getNestingDepth(sql);
        if (depth > TableQuery.MAX_DEPTH) {
            throw new TableException("the " + noun + " nests parentheses " + depth + " deep, over the limit of "
                    + TableQuery.MAX_DEPTH);
        }
        Statements statements;
        try {
            CCJSqlParser parser = CCJSqlParserUtil.newParser(sql).withAllowComplexParsing(false);
            statements = parser.Statements();
        } catch (ParseException e) {
            throw syntaxError(e, noun);
        } catch (StackOverflowError e) {
            throw new TableException("the " + noun + " is nested too deeply to parse");
        } catch (RuntimeException e) {
            // the parser's own failures on odd input (TokenMgrException, and worse): refused, never passed
            throw new TableException("the " + noun + " could not be parsed (" + e.getClass().getSimpleName() + ")");
        }
        if (statements == null || statements.isEmpty()) {
            throw new TableException("the " + noun + " holds no statement; send one " + kind);
        }
        if (statements.size() != 1) {
            throw new TableException("the " + noun + " holds " + statements.size() + " statements; send one " + kind);
        }
        return statements.get(0);
    }

    /**
     * Comments are refused outright: a table query has no use for them, and they are where the tricks are
     * (a database and a parser that disagree on where one ends). Also anything outside printable text.
     */
    private static void checkText(String sql, String noun) {
        boolean inString = false;
        boolean inQuoted = false;
        for (int i = 0; i < sql.length(); i++) {
            char c = sql.charAt(i);
            if (c < 0x20 && c != '\t' && c != '\n' && c != '\r' || c == 0x7F) {
                throw new TableException(String.format("the %s holds control character U+%04X at index %d",
                        noun, (int) c, i));
            }
            if (inString) {
                inString = c != '\'';
            } else if (inQuoted) {
                inQuoted = c != '"';
            } else if (c == '\'') {
                inString = true;
            } else if (c == '"') {
                inQuoted = true;
            } else if (c == '-' && i + 1 < sql.length() && sql.charAt(i + 1) == '-'
                    || c == '/' && i + 1 < sql.length() && sql.charAt(i + 1) == '*' || c == '#') {
                String comment = c == '#' ? "#" : sql.substring(i, i + 2);
                throw new TableException("the " + noun + " holds a comment (" + comment + " at index " + i
                        + "); comments are not allowed in a table " + noun);
            }
        }
    }

    private static TableException syntaxError(ParseException e, String noun) {
        Token at = e.currentToken == null ? null : e.currentToken.next != null ? e.currentToken.next
                : e.currentToken;
        if (at == null) {
            String first = e.getMessage() == null ? "" : e.getMessage().lines().findFirst().orElse("");
            return new TableException("the " + noun + " has a syntax error: " + first);
        }
        return new TableException(String.format("the %s has a syntax error at line %d, column %d, near %s", noun,
                at.beginLine, at.beginColumn, at.image == null || at.image.isEmpty() ? "the end" : quote(at.image)));
    }

    /**
     * Whether a probe {@code SELECT a, b FROM t} parses with each name as a plain column of a plain table: a
     * name that SQL reserves fails to parse, or parses as something else ({@code null}, {@code current_date}).
     */
    static boolean namesAreColumns(String probe, String table, List<Column> columns) {
        Statements parsed;
        try {
            parsed = CCJSqlParserUtil.newParser(probe).withAllowComplexParsing(false).Statements();
        } catch (ParseException | RuntimeException | StackOverflowError e) {
            return false;
        }
        if (parsed == null || parsed.size() != 1 || !(parsed.get(0) instanceof PlainSelect)) {
            return false;
        }
        PlainSelect select = (PlainSelect) parsed.get(0);
        if (!(select.getFromItem() instanceof net.sf.jsqlparser.schema.Table)
                || !table.equals(((net.sf.jsqlparser.schema.Table) select.getFromItem()).getName())
                || select.getSelectItems().size() != columns.size()) {
            return false;
        }
        List<Expression> tests = new ArrayList<>();
        Expression where = select.getWhere();
        while (where instanceof AndExpression) {
            tests.add(0, ((AndExpression) where).getRightExpression());
            where = ((AndExpression) where).getLeftExpression();
        }
        tests.add(0, where);
        if (tests.size() != columns.size()) {
            return false;
        }
        for (int i = 0; i < columns.size(); i++) {
            if (!(tests.get(i) instanceof IsNullExpression)
                    || !isPlainColumn(((IsNullExpression) tests.get(i)).getLeftExpression(), columns.get(i))) {
                return false;
            }
            SelectItem<?> item = select.getSelectItems().get(i);
            if (!isPlainColumn(item.getExpression(), columns.get(i))) {
                return false;
            }
        }
        return true;
    }

    private static boolean isPlainColumn(Expression e, Column column) {
        return e instanceof net.sf.jsqlparser.schema.Column
                && column.name().equals(((net.sf.jsqlparser.schema.Column) e).getColumnName())
                && ((net.sf.jsqlparser.schema.Column) e).getTable() == null;
    }

    /** Parses a condition on its own, as a schema's predicate is given. */
    static Statement parsePredicate(String table, String predicate) {
        if (predicate.length() > TableQuery.MAX_SQL_CHARS / 2) {
            throw new TableException("the predicate is " + predicate.length() + " characters, over the limit of "
                    + TableQuery.MAX_SQL_CHARS / 2);
        }
        return parseOne("SELECT * FROM " + table + " WHERE " + predicate);
    }

    /** {@code 'it''s'}: a string as an SQL literal. */
    static String quote(String s) {
        return "'" + s.replace("'", "''") + "'";
    }

    /** A value for a sentence: strings quoted and cut to 80 characters. */
    static String shorten(Object value) {
        return value instanceof String ? quote(Names.cut((String) value)) : String.valueOf(value);
    }

    /** {@code 'A'} or {@code U+00E9}: the character at an index, for a sentence. */
    static String describeChar(String s, int i) {
        int cp = s.codePointAt(i);
        return cp > 0x20 && cp < 0x7F ? "'" + (char) cp + "'" : String.format("U+%04X", cp);
    }
}
