package io.gma.tables;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Queries an attacker, or a confused user, would send, after the registry's HostileSqlTest: each is refused by
 * {@link TableQuery#parse} with the sentence given, and none takes long. A table query never reaches a database,
 * so what matters is that nothing outside the allowed forms gets through to a producer's filter, and that
 * nothing costs a producer more than a bounded parse.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class HostileQueryTest {
    record Case(String sql, String sentence) {
    }

    private static Case c(String sql, String sentence) {
        return new Case(sql, sentence);
    }

    static List<Case> corpus() {
        return List.of(
                c("SELECT * FROM host_cpu a JOIN host_mem b ON a.host = b.host",
                        "the query uses JOIN, which a table query does not allow"),
                c("SELECT * FROM host_cpu, host_mem",
                        "the query uses JOIN, which a table query does not allow"),
                c("SELECT * FROM host_cpu WHERE host IN (SELECT host FROM host_mem)",
                        "the query has a subquery ((SELECT host FROM host_mem)); IN takes a list of literals"),
                c("SELECT * FROM (SELECT * FROM host_cpu) t",
                        "the query reads from a subquery; a table query reads one table"),
                c("SELECT * FROM host_cpu WHERE EXISTS (SELECT 1 FROM host_mem)",
                        "the query has a subquery (EXISTS (SELECT 1 FROM host_mem)); a table query reads one "
                        + "table"),
                c("SELECT * FROM host_cpu WHERE load1 > (SELECT MAX(load1) FROM host_cpu)",
                        "the query has a subquery ((SELECT MAX(load1) FROM host_cpu)); a table query reads one "
                        + "table"),
                c("SELECT * FROM host_cpu UNION SELECT * FROM host_mem",
                        "the query combines SELECTs with UNION, INTERSECT or EXCEPT; a table query is one SELECT"),
                c("SELECT host FROM host_cpu INTERSECT SELECT host FROM host_mem",
                        "the query combines SELECTs with UNION, INTERSECT or EXCEPT; a table query is one SELECT"),
                c("(SELECT * FROM host_cpu)",
                        "the query is a SELECT in parentheses; write it without them"),
                c("WITH x AS (SELECT * FROM host_cpu) SELECT * FROM x",
                        "the query uses WITH, which a table query does not allow"),
                c("SELECT COUNT(*) FROM host_cpu",
                        "the query selects Function (COUNT(*)); a table query selects columns or *"),
                c("SELECT MAX(load1) FROM host_cpu",
                        "the query selects Function (MAX(load1)); a table query selects columns or *"),
                c("SELECT host, AVG(load1) FROM host_cpu GROUP BY host",
                        "the query uses GROUP BY, which a table query does not allow"),
                c("SELECT * FROM host_cpu WHERE LOWER(host) = 'a'",
                        "function LOWER is not allowed; a table query has no functions"),
                c("SELECT * FROM host_cpu WHERE host = CONCAT('a', 'b')",
                        "function CONCAT is not allowed; a table query has no functions"),
                c("SELECT * FROM host_cpu WHERE load1 > 1 + 1",
                        "the WHERE clause has load1 > 1 + 1, where Addition (1 + 1) is not a literal; a table "
                        + "query compares a column with a number, a string, TRUE, FALSE or TIMESTAMP '...'"),
                c("SELECT load1 * 2 FROM host_cpu",
                        "the query selects Multiplication (load1 * 2); a table query selects columns or *"),
                c("SELECT * FROM host_cpu ORDER BY load1",
                        "the query uses ORDER BY, which a table query does not allow"),
                c("SELECT * FROM host_cpu LIMIT 10",
                        "the query uses LIMIT, which a table query does not allow"),
                c("SELECT * FROM host_cpu WHERE load1 > 1 OFFSET 5",
                        "the query uses OFFSET, which a table query does not allow"),
                c("SELECT DISTINCT host FROM host_cpu",
                        "the query uses DISTINCT, which a table query does not allow"),
                c("SELECT host AS h FROM host_cpu",
                        "the query uses an alias (AS), which a table query does not allow"),
                c("SELECT * FROM host_cpu h",
                        "the query uses an alias (AS), which a table query does not allow"),
                c("SELECT * FROM other.host_cpu",
                        "table other.host_cpu names a schema; write the table name alone"),
                c("SELECT * FROM host_cpu; DROP TABLE host_cpu",
                        "the query holds 2 statements; send one SELECT"),
                c("SELECT * FROM host_cpu; SELECT * FROM host_mem",
                        "the query holds 2 statements; send one SELECT"),
                c("DROP TABLE host_cpu",
                        "only SELECT is allowed, and this is DROP"),
                c("DELETE FROM host_cpu",
                        "only SELECT is allowed, and this is DELETE"),
                c("INSERT INTO host_cpu (host) VALUES ('a')",
                        "only SELECT is allowed, and this is INSERT"),
                c("UPDATE host_cpu SET load1 = 0",
                        "only SELECT is allowed, and this is UPDATE"),
                c("SELECT * FROM host_cpu /* x */ WHERE load1 > 1",
                        "the query holds a comment (/* at index 23); comments are not allowed in a table query"),
                c("SELECT * FROM host_cpu WHERE load1 > 1 -- and more",
                        "the query holds a comment (-- at index 39); comments are not allowed in a table query"),
                c("SELECT * FROM host_cpu WHERE host = 'a' # mysql",
                        "the query holds a comment (# at index 40); comments are not allowed in a table query"),
                c("SELECT * FROM host_cpu /* /* */ WHERE host = ' */ ; DROP TABLE x --'",
                        "the query holds a comment (/* at index 23); comments are not allowed in a table query"),
                c("SELECT * FROM host_cpu WHERE host = ?",
                        "the WHERE clause has host = ?, where JdbcParameter (?) is not a literal; a table query "
                        + "compares a column with a number, a string, TRUE, FALSE or TIMESTAMP '...'"),
                c("SELECT * FROM host_cpu WHERE host = :name",
                        "the WHERE clause has host = :name, where JdbcNamedParameter (:name) is not a literal; a "
                        + "table query compares a column with a number, a string, TRUE, FALSE or TIMESTAMP '...'"),
                c("SELECT * FROM host_cpu WHERE host = @x",
                        "the WHERE clause has host = @x, where UserVariable (@x) is not a literal; a table query "
                        + "compares a column with a number, a string, TRUE, FALSE or TIMESTAMP '...'"),
                c("SELECT * FROM host_cpu WHERE host REGEXP '(a+)+$'",
                        "the query uses REGEXP, which a table query does not allow; LIKE is allowed"),
                c("SELECT * FROM host_cpu WHERE host SIMILAR TO '(a+)+'",
                        "the query uses SIMILAR_TO, which a table query does not allow; LIKE is allowed"),
                c("SELECT * FROM host_cpu WHERE host ILIKE 'a%'",
                        "the query uses ILIKE, which a table query does not allow; LIKE is allowed"),
                c("SELECT * FROM host_cpu WHERE host LIKE host",
                        "a LIKE pattern must be a string literal: host LIKE host"),
                c("SELECT * FROM host_cpu WHERE host LIKE '%a%a%a%a%a%a%a%a%b'",
                        "the LIKE pattern of host has 9 wildcards (% and _), over the limit of 8"),
                c("SELECT * FROM host_cpu WHERE host LIKE '" + "x".repeat(300) + "'",
                        "the LIKE pattern of host is 300 characters, over the limit of 256"),
                c("SELECT * FROM host_cpu WHERE host LIKE 'a!b' ESCAPE '!'",
                        "the LIKE pattern of host escapes 'b' at index 2; the ESCAPE character may only precede "
                        + "%, _ or itself"),
                c("SELECT * FROM host_cpu WHERE host LIKE 'a' ESCAPE 'xy'",
                        "the ESCAPE of a LIKE must be one character in quotes: host LIKE 'a' ESCAPE 'xy'"),
                c("SELECT * FROM host_cpu WHERE load1 BETWEEN 1 AND 2",
                        "BETWEEN is not allowed; write x >= low AND x <= high"),
                c("SELECT * FROM host_cpu WHERE host = site",
                        "the WHERE clause compares two columns (host = site); a table query compares a column "
                        + "with a literal"),
                c("SELECT * FROM host_cpu WHERE 1 = 1",
                        "the WHERE clause has 1 = 1, which compares no column; a table query compares a column "
                        + "with a literal"),
                c("SELECT * FROM host_cpu WHERE host = NULL",
                        "the WHERE clause compares with NULL (host = NULL), which is never true; write IS NULL or "
                        + "IS NOT NULL"),
                c("SELECT * FROM host_cpu WHERE up",
                        "the WHERE clause has up alone where a condition belongs; compare it, as in up = TRUE"),
                c("SELECT * FROM host_cpu WHERE TRUE",
                        "the WHERE clause has TRUE alone where a condition belongs; leave out a WHERE that is "
                        + "always true"),
                c("SELECT * FROM host_cpu WHERE cpu IN (" + "1, ".repeat(1000) + "1)",
                        "the IN list of cpu has 1001 items, over the limit of 1000"),
                c("SELECT * FROM host_cpu WHERE cpu IN (1, NULL)",
                        "the WHERE clause has NULL in cpu IN (1, NULL), which is never true; write IS NULL or IS "
                        + "NOT NULL"),
                c("SELECT * FROM host_cpu WHERE " + "(".repeat(65) + "cpu = 1" + ")".repeat(65),
                        "the query nests parentheses 65 deep, over the limit of 64"),
                c("SELECT * FROM host_cpu WHERE " + "NOT (".repeat(40) + "cpu = 1" + ")".repeat(40),
                        "the WHERE clause nests at least 65 levels deep (parentheses, NOT, AND, OR), over the "
                        + "limit of 64"),
                c("SELECT * FROM host_cpu WHERE " + "cpu = 1 AND ".repeat(800) + "cpu = 1",
                        "the query is 9636 characters, over the limit of 8192"),
                c("SELECT * FROM host_cpu WHERE host = '" + "y".repeat(9000) + "'",
                        "the query is 9038 characters, over the limit of 8192"),
                c("",
                        "the query is empty; send one SELECT"),
                c("   ",
                        "the query is empty; send one SELECT"),
                c("SELECT * FROM host_cpu WHERE host = 'a\u0000'",
                        "the query holds control character U+0000 at index 38"),
                c("SELECT * FROM host_cpu WHERE cpu = 99999999999999999999",
                        "number 99999999999999999999 is out of the range of INTEGER (64 bits)"),
                c("SELECT * FROM host_cpu WHERE load1 = 1e400",
                        "number 1e400 is out of the range of DOUBLE"),
                c("SELECT * FROM host_cpu WHERE sampled > CURRENT_TIMESTAMP",
                        "the WHERE clause has sampled > CURRENT_TIMESTAMP, where TimeKeyExpression "
                        + "(CURRENT_TIMESTAMP) is not a literal; a table query compares a column with a number, a "
                        + "string, TRUE, FALSE or TIMESTAMP '...'"),
                c("SELECT * FROM host_cpu WHERE sampled > NOW()",
                        "function NOW is not allowed; a table query has no functions"),
                c("SELECT * FROM host_cpu WHERE host = X'41'",
                        "the WHERE clause has host = X'41', where HexValue (X'41') is not a literal; a table "
                        + "query compares a column with a number, a string, TRUE, FALSE or TIMESTAMP '...'"),
                c("SELECT * FROM host_cpu WHERE host = N'a'",
                        "the query uses a string prefix, which a table query does not allow"),
                c("SELECT * FROM host_cpu WHERE CAST(cpu AS VARCHAR) = '1'",
                        "CAST is not allowed (CAST(cpu AS VARCHAR)); a table query compares a column with a "
                        + "literal"),
                c("SELECT * FROM host_cpu WHERE cpu = CAST('1' AS INTEGER)",
                        "CAST is not allowed (CAST('1' AS INTEGER)); a table query compares a column with a "
                        + "literal"),
                c("SELECT * FROM host_cpu WHERE host = 'a' || 'b'",
                        "the WHERE clause has host = 'a' || 'b', where Concat ('a' || 'b') is not a literal; a "
                        + "table query compares a column with a number, a string, TRUE, FALSE or TIMESTAMP '...'"),
                c("SELECT * FROM host_cpu WHERE CASE WHEN cpu = 1 THEN TRUE ELSE FALSE END",
                        "the query uses CaseExpression (CASE WHEN cpu = 1 THEN true ELSE false END), which a "
                        + "table query does not allow"),
                c("SELECT * FROM host_cpu WHERE (host, site) IN (('a', 'b'))",
                        "the WHERE clause has (host, site) IN (('a', 'b')), which tests ParenthesedExpressionList "
                        + "((host, site)) rather than a column"),
                c("SELECT * FROM host_cpu WHERE ! (cpu = 1)",
                        "the query uses ! for NOT, which a table query does not allow"),
                c("SELECT * FROM host_cpu WHERE cpu = 1 && cpu = 2",
                        "the query uses && for AND, which a table query does not allow"),
                c("SELECT * FROM host_cpu WHERE cpu ISNULL",
                        "the query uses ISNULL, which a table query does not allow"),
                c("SELECT * FROM host_cpu FOR UPDATE",
                        "the query uses FOR UPDATE, which a table query does not allow"),
                c("SELECT * INTO stolen FROM host_cpu",
                        "the query uses SELECT ... INTO, which a table query does not allow"),
                c("SELECT TOP 1 * FROM host_cpu",
                        "the query uses TOP, which a table query does not allow"),
                c("SELECT * FROM host_cpu WHERE cpu = 1 XOR cpu = 2",
                        "the query uses XorExpression (cpu = 1 XOR cpu = 2), which a table query does not allow"),
                c("SELECT * FROM host_cpu WHERE host = {fn user()}",
                        "function user is not allowed; a table query has no functions"),
                c("SELECT * FROM host_cpu WHERE sampled = {ts '2024-05-01 00:00:00'}",
                        "the WHERE clause has sampled = {ts '2024-05-01 00:00:00.0'}, where TimestampValue ({ts "
                        + "'2024-05-01 00:00:00.0'}) is not a literal; a table query compares a column with a "
                        + "number, a string, TRUE, FALSE or TIMESTAMP '...'"),
                c("SELECT * FROM `host_cpu`",
                        "name `host_cpu` is quoted with `; quote names with \" or not at all"),
                c("SELECT * FROM host_cpu WHERE host = 'a' FOR XML PATH",
                        "the query uses PlainSelect.forClause, which a table query does not allow"),
                c("SELECT *, host FROM host_cpu",
                        "the query selects * beside other columns; select * alone, or columns"),
                c("SELECT host_cpu.* FROM host_cpu",
                        "the query selects AllTableColumns (host_cpu.*); a table query selects columns or *"),
                c("SELECT host_mem.host FROM host_cpu",
                        "column host_mem.host names host_mem, which is not the table the query reads (host_cpu)"),
                c("SELECT * FROM host_cpu, LATERAL (SELECT 1) x",
                        "the query uses JOIN, which a table query does not allow"),
                c("SELECT * FROM generate_series(1, 10)",
                        "the query reads from a function (generate_series(1, 10)); a table query reads one table"),
                c("VALUES (1)",
                        "only SELECT is allowed, and this is Values"),
                c("TABLE host_cpu",
                        "only SELECT is allowed, and this is TableStatement"),
                c("SELECT 1",
                        "the query reads no table; write SELECT ... FROM a table"),
                c("SELECT * FROM host_cpu WHERE host = 'a' HAVING 1 = 1",
                        "the query uses HAVING, which a table query does not allow"),
                c("SELECT * FROM host_cpu WHERE cpu IN (1) AND cpu IN (SELECT 1)",
                        "the query has a subquery ((SELECT 1)); IN takes a list of literals"),
                c("SELECT * FROM host_cpu WHERE host LIKE 'a%' ESCAPE '%'",
                        "the ESCAPE of the LIKE of host is %, which is a wildcard"),
                c("SELECT * FROM host_cpu WHERE host NOT REGEXP 'a'",
                        "the query uses REGEXP, which a table query does not allow; LIKE is allowed"),
                c("SELECT * FROM host_cpu WHERE host = 'a' COLLATE \"C\"",
                        "the query has a syntax error at line 1, column 41, near 'COLLATE'"),
                c("SELECT * FROM host_cpu WHERE cpu = - - 3",
                        "the query has a syntax error at line 1, column 34, near '='"),
                c("SELECT * FROM host_cpu WHERE cpu = ~3",
                        "the WHERE clause has cpu = ~3, where SignedExpression (~3) is not a literal; a table "
                        + "query compares a column with a number, a string, TRUE, FALSE or TIMESTAMP '...'"),
                c("SELECT * FROM host_cpu WHERE host LIKE BINARY 'a'",
                        "the query uses LIKE BINARY, which a table query does not allow"));
    }

    @Test
    void everyHostileQueryIsRefusedWithItsSentence() {
        List<Case> corpus = corpus();
        assertTrue(corpus.size() >= 90, corpus.size() + " queries");
        List<String> failures = new ArrayList<>();
        for (Case c : corpus) {
            String shown = c.sql().length() > 100 ? c.sql().substring(0, 100) + "..." : c.sql();
            long start = System.nanoTime();
            String got;
            try {
                TableQuery.parse(c.sql());
                got = "(accepted)";
            } catch (TableException e) {
                got = e.getMessage();
            } catch (RuntimeException | StackOverflowError e) {
                got = "(" + e + ")";
            }
            long millis = (System.nanoTime() - start) / 1_000_000;
            if (!got.equals(c.sentence())) {
                failures.add(shown + "\n    expected: " + c.sentence() + "\n    but was:  " + got);
            }
            if (millis > 5_000) {
                failures.add(shown + "\n    took " + millis + " ms");
            }
        }
        if (!failures.isEmpty()) {
            fail(failures.size() + " queries were not refused as expected:\n" + String.join("\n", failures));
        }
    }

    @Test
    void theLimitsThemselvesAreAllowed() {
        TableSchema t = TableQueryTest.CPU;
        StringBuilder in = new StringBuilder("SELECT * FROM host_cpu WHERE cpu IN (0");
        for (int i = 1; i < TableQuery.MAX_IN_ITEMS; i++) {
            in.append(", ").append(i);
        }
        assertTrue(TableQuery.parse(in.append(")").toString()).bind(t).filter().test(TableQueryTest.CARDIFF));
        String deep = "SELECT * FROM host_cpu WHERE " + "(".repeat(63) + "cpu = 3" + ")".repeat(63);
        assertTrue(TableQuery.parse(deep).bind(t).filter().test(TableQueryTest.CARDIFF));
        String like = "SELECT * FROM host_cpu WHERE host LIKE '%n%o%d%e%-%1%_" + "x".repeat(242) + "'";
        assertEquals(TableQuery.MAX_LIKE_CHARS, like.length() - like.indexOf('\'') - 2);
        TableQuery.parse(like).bind(t);
        String longest = "SELECT * FROM host_cpu WHERE host = '" + "y".repeat(TableQuery.MAX_SQL_CHARS - 38) + "'";
        assertEquals(TableQuery.MAX_SQL_CHARS, longest.length());
        TableQuery.parse(longest);
    }
}
