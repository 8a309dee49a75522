package io.gma.registry;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(value = 30, unit = TimeUnit.SECONDS)
class SqlGuardTest {
    private final ExecutorService parser = Executors.newFixedThreadPool(2);
    private final SqlGuard guard = new SqlGuard(16384, 2000, parser);

    @AfterEach
    void stop() {
        parser.shutdownNow();
    }

    @Test
    void remembersApprovalsOnly() {
        String ok = "SELECT p.name FROM producers p JOIN attributes a ON a.name = p.name WHERE a.key = 'site'";
        SqlGuard.Approved first = guard.check(ok);
        assertEquals(Set.of("attributes", "producers"), first.tables());
        assertSame(first, guard.check(ok));
        for (int i = 0; i < 2; i++) {
            ApiException e = assertThrows(ApiException.class, () -> guard.check("SELECT * FROM gma_endpoints"));
            assertEquals(403, e.status());
        }
    }

    @Test
    void refusesByTextNotByCacheWhenTheTextDiffers() {
        guard.check("SELECT name FROM endpoints");
        assertEquals(400, assertThrows(ApiException.class,
                () -> guard.check("SELECT name FROM endpoints; DROP TABLE gma_endpoints")).status());
    }

    @Test
    void theDatabaseRunsTheCheckedStatementNotTheText() {
        // JSqlParser ends a comment at the first */, H2 and PostgreSQL nest them: the raw text would run as
        // SELECT ...; DROP VIEW domains. The approved text is the tree printed again, comments gone.
        String smuggled = "SELECT name FROM endpoints /* /* */ WHERE name = ' */ ; DROP VIEW domains --'";
        SqlGuard.Approved approved = guard.check(smuggled);
        assertEquals("SELECT name FROM endpoints WHERE name = ' */ ; DROP VIEW domains --'", approved.sql());
        assertEquals("SELECT name FROM endpoints WHERE port > 1",
                guard.check("SELECT name -- x\n FROM endpoints /* y */ WHERE port > 1").sql());
    }

    @Test
    void refusesNamesThatAreNotColumnsOfTheViews() {
        for (String sql : new String[] {"SELECT current_user", "SELECT ROWNUM FROM endpoints",
                "SELECT e.row_to_json FROM endpoints e", "SELECT name FROM endpoints WHERE secret = 1",
                "SELECT x.name FROM endpoints e"}) {
            assertEquals(400, assertThrows(ApiException.class, () -> guard.check(sql), sql).status(), sql);
        }
        guard.check("SELECT e.name AS n, COUNT(*) AS c FROM endpoints e GROUP BY e.name ORDER BY c DESC, n");
        guard.check("SELECT t.n FROM (SELECT name AS n FROM endpoints) t WHERE t.n LIKE 'a%'");
        guard.check("SELECT endpoints.name FROM endpoints WHERE \"port\" = 1");
    }

    @Test
    void readsTheTableViewsWithTheirColumnsAndNoPrivateTable() {
        SqlGuard.Approved a = guard.check("SELECT p.name, p.predicate, p.latest_retention_s, p.history_retention_s,"
                + " p.published_at, c.position, c.type, c.in_key, c.key_position, t.primary_key, t.declared_by,"
                + " t.declared_at FROM publishers p JOIN endpoints e ON e.name = p.name JOIN tables t"
                + " ON t.name = p.table_name JOIN table_columns c ON c.table_name = t.name WHERE p.table_name = 'x'");
        assertEquals(java.util.Set.of("publishers", "endpoints", "tables", "table_columns"), a.tables());
        for (String sql : new String[] {"SELECT * FROM gma_publishers", "SELECT * FROM gma_tables",
                "SELECT * FROM gma_table_columns"}) {
            assertEquals(403, assertThrows(ApiException.class, () -> guard.check(sql), sql).status(), sql);
        }
        assertEquals(400, assertThrows(ApiException.class,
                () -> guard.check("SELECT owner FROM publishers")).status());
    }

    @Test
    void boundsLikePatternsCastsAndNumbers() {
        assertEquals("LIKE pattern \"%a%a%b\" has 3 '%', over the limit of 2", assertThrows(ApiException.class,
                () -> guard.check("SELECT name FROM endpoints WHERE name LIKE '%a%a%b'")).getMessage());
        assertEquals(400, assertThrows(ApiException.class,
                () -> guard.check("SELECT name FROM endpoints WHERE name LIKE CONCAT('%', host)")).status());
        guard.check("SELECT name FROM endpoints WHERE name LIKE '%cpu%' AND host NOT ILIKE 'x_%'");
        guard.check("SELECT name FROM endpoints WHERE LOWER(name) LIKE 'cpu%' OR CAST(port AS VARCHAR(8))"
                + " LIKE '80%'");
        assertEquals("the left side of LIKE must be a column, or [LOWER, UPPER] or CAST of one:"
                + " \"'" + "a".repeat(40) + "' LIKE '% %x'\"", assertThrows(ApiException.class, () -> guard.check(
                "SELECT name FROM endpoints WHERE '" + "a".repeat(40) + "' LIKE '% %x'")).getMessage());
        assertEquals(400, assertThrows(ApiException.class,
                () -> guard.check("SELECT name || host AS n FROM endpoints")).status(), "||");
        assertEquals("CAST length \"1000000\" is not a whole number up to 4096", assertThrows(ApiException.class,
                () -> guard.check("SELECT CAST('a' AS CHAR(1000000)) FROM endpoints")).getMessage());
        assertEquals(400, assertThrows(ApiException.class,
                () -> guard.check("SELECT CAST(name AS regclass) FROM endpoints")).status());
        guard.check("SELECT CAST(port AS VARCHAR(10)), CAST(port AS DOUBLE PRECISION) FROM endpoints");
        assertEquals("number \"1e131000\" is out of range", assertThrows(ApiException.class,
                () -> guard.check("SELECT 1e131000 FROM endpoints")).getMessage());
    }

    @Test
    void refusesExpressionsTooDeepToWalk() {
        String deep = "SELECT " + "1+".repeat(7000) + "1";
        ApiException e = assertThrows(ApiException.class, () -> guard.check(deep));
        assertEquals(400, e.status(), e.getMessage());
    }

    @Test
    void cacheStaysBounded() {
        for (int i = 0; i < SqlGuard.APPROVED_CACHE_SIZE * 2; i++) {
            guard.check("SELECT name FROM endpoints WHERE port = " + i);
        }
        assertEquals(Set.of("endpoints"), guard.check("SELECT name FROM endpoints WHERE port = 0").tables());
        assertEquals(SqlGuard.APPROVED_CACHE_SIZE, guard.approvedCount());
    }
}
