package io.gma.registry;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import com.fasterxml.jackson.databind.JsonNode;
import io.gma.registry.api.ColumnDeclaration;
import io.gma.registry.api.ColumnType;
import io.gma.registry.api.Kind;
import io.gma.registry.api.Lease;
import io.gma.registry.api.Publication;
import io.gma.registry.api.QueryResult;
import io.gma.registry.api.Registration;
import io.gma.registry.api.RegistryClient;
import io.gma.registry.api.TableDeclaration;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Statements an attacker would send. Each is refused, or bounded by the row cap or the statement timeout,
 * and afterwards every table, view, user, right and routine of the database is exactly as before, no file
 * was written, and the registry still serves.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class HostileSqlTest {
    private static final int ENDPOINTS = 300;
    private static final int MAX_ROWS = 100;
    private static final String DB = "jdbc:h2:mem:hostile-" + UUID.randomUUID();

    @TempDir
    static Path dir;

    private static Registry registry;
    private static String api;

    /** What may happen to a statement: refused with 4xx, or answered within the cap or cut by the timeout. */
    enum Outcome { REFUSED, BOUNDED }

    record Case(String sql, Outcome outcome) {
    }

    @BeforeAll
    static void start() throws Exception {
        registry = Registry.builder().port(0).jdbc(DB, "sa", "").maxRows(MAX_ROWS)
                .queryTimeout(Duration.ofSeconds(1)).build().start();
        api = registry.url() + Registry.API_PATH;
        RegistryClient client = RegistryClient.create(registry.url());
        client.declareTable(new TableDeclaration("host_cpu", List.of(new ColumnDeclaration("host", ColumnType.STRING),
                new ColumnDeclaration("load1", ColumnType.DOUBLE)), List.of("host")));
        for (int i = 0; i < ENDPOINTS; i++) {
            Lease lease = client.register(Registration.builder(i % 2 == 0 ? Kind.PRODUCER : Kind.CONSUMER, "e" + i,
                    "d" + (i % 5)).port(1000 + i).attribute("site", "s" + (i % 7)).attribute("secret", "owner-" + i)
                    .lease(Duration.ofHours(1)).build());
            if (i % 2 == 0) {
                client.publish(lease.name(), new Publication("host_cpu", "site = 's" + (i % 7) + "'",
                        Duration.ofMinutes(1), Duration.ZERO));
            }
        }
        client.registerDomain("d0", "http://127.0.0.1:1/", null, Duration.ofHours(1));
    }

    @AfterAll
    static void stop() throws Exception {
        registry.close();
    }

    static List<Case> corpus() {
        String f = dir.resolve("pwned").toString().replace("'", "''");
        List<Case> c = new ArrayList<>();
        Stream.of(
                // DDL
                "DROP TABLE gma_endpoints", "DROP VIEW endpoints", "DROP ALL OBJECTS", "CREATE TABLE x (a INT)",
                "ALTER TABLE gma_endpoints ADD COLUMN x INT", "TRUNCATE TABLE gma_endpoints",
                "CREATE USER evil PASSWORD 'x' ADMIN", "GRANT ALL ON gma_endpoints TO PUBLIC",
                "ALTER USER GMA_READER ADMIN TRUE", "CREATE INDEX i ON gma_endpoints (port)",
                "CREATE VIEW v AS SELECT * FROM gma_endpoints",
                // DML
                "DELETE FROM gma_endpoints", "DELETE FROM endpoints", "UPDATE gma_endpoints SET port = 1",
                "INSERT INTO gma_domains VALUES ('x', 'http://x/', NULL, 'me', 1, NOW(), NOW())",
                "MERGE INTO gma_domains KEY (domain) VALUES ('x', 'u', NULL, 'o', 1, NOW(), NOW())",
                "SELECT * INTO stolen FROM endpoints", "SELECT name FROM endpoints FOR UPDATE",
                // stacked statements
                "SELECT 1; DROP TABLE gma_endpoints", "SELECT name FROM endpoints; DELETE FROM gma_endpoints",
                "SELECT 1;\nSELECT 2", "SELECT name FROM endpoints;;DELETE FROM gma_attributes",
                // comment tricks
                "SELECT name FROM endpoints /* */; DELETE FROM gma_endpoints",
                "/*! DROP TABLE gma_endpoints */ SELECT * FROM gma_endpoints",
                "SELECT * FROM endpoints WHERE 1 = 1 --\n; DROP TABLE gma_endpoints",
                "SEL/**/ECT * FROM gma_endpoints", "SELECT owner FROM gma_endpoints/**/",
                "SELECT name FROM endpoints -- \n UNION SELECT owner FROM gma_endpoints",
                // other schemas and private tables
                "SELECT name FROM endpoints UNION SELECT TABLE_NAME FROM INFORMATION_SCHEMA.TABLES",
                "SELECT name FROM endpoints UNION SELECT USER_NAME FROM INFORMATION_SCHEMA.USERS",
                "SELECT * FROM INFORMATION_SCHEMA.SESSIONS",
                "SELECT name FROM endpoints WHERE name IN (SELECT COLUMN_NAME FROM INFORMATION_SCHEMA.COLUMNS)",
                "SELECT * FROM pg_catalog.pg_user", "SELECT * FROM pg_shadow", "SELECT * FROM \"GMA_ENDPOINTS\"",
                "SELECT name FROM PUBLIC.gma_endpoints", "SELECT (SELECT owner FROM gma_endpoints LIMIT 1)",
                "SELECT name FROM endpoints WHERE EXISTS (SELECT 1 FROM gma_domains)",
                "SELECT e.name FROM endpoints e JOIN gma_attributes a ON a.name = e.name",
                "SELECT PUBLIC.gma_endpoints.owner FROM endpoints",
                // files, network, system
                "SELECT FILE_READ('/etc/passwd')", "SELECT FILE_WRITE('x', '" + f + "')",
                "SELECT * FROM CSVREAD('/etc/passwd')", "CALL CSVWRITE('" + f + "', 'SELECT * FROM gma_endpoints')",
                "SELECT * FROM LINK_SCHEMA('x', '', 'jdbc:h2:mem:other', 'sa', '', 'PUBLIC')",
                "CREATE LINKED TABLE l ('', 'jdbc:h2:mem:other', 'sa', '', 'T')",
                "SELECT LOAD_FILE('/etc/passwd')", "SELECT pg_read_file('/etc/passwd')",
                "SELECT lo_import('/etc/passwd')", "SELECT DATABASE_PATH()", "SELECT MEMORY_USED()",
                "SELECT SLEEP(10)", "SELECT pg_sleep(10)", "SELECT * FROM SYSTEM_RANGE(1, 1000000000)",
                "SELECT REPEAT('x', 1000000000)", "SELECT SPACE(2000000000)",
                "SELECT name FROM endpoints ORDER BY (SELECT SLEEP(1))",
                "SELECT CAST(FILE_READ('/etc/passwd') AS VARCHAR)",
                "SELECT name FROM endpoints WHERE name LIKE '%' || FILE_READ('/etc/hostname')",
                // CALL, SCRIPT, RUNSCRIPT, CREATE ALIAS, settings
                "CALL 1", "CALL FILE_WRITE('x', '" + f + "')", "SCRIPT", "SCRIPT TO '" + f + "'",
                "RUNSCRIPT FROM '/etc/passwd'", "BACKUP TO '" + f + ".zip'",
                "CREATE ALIAS EXEC AS 'String exec(String c) throws Exception { return new String("
                        + "Runtime.getRuntime().exec(c).getInputStream().readAllBytes()); }'",
                "SELECT EXEC('id')", "SET MODE MySQL", "SET QUERY_TIMEOUT 0", "SHUTDOWN", "SHUTDOWN IMMEDIATELY",
                "CHECKPOINT", "COMMIT", "EXPLAIN SELECT * FROM gma_endpoints", "SHOW TABLES", "VALUES (1)",
                "TABLE gma_endpoints", "SELECT NEXT VALUE FOR s", "SET @x = 1", "SELECT @x := 1",
                "SELECT * FROM endpoints WHERE name = ?", "SELECT X'deadbeef'",
                "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT n FROM r",
                "SELECT name FROM endpoints WHERE host REGEXP '(a+)+$'", "SELECT ARRAY[1, 2]",
                "SELECT * FROM UNNEST(ARRAY[1, 2])", "SELECT TOP 1 name FROM endpoints",
                "SELECT name FROM endpoints LIMIT 1 OFFSET (SELECT COUNT(*) FROM gma_endpoints)",
                // sizes and nesting
                "SELECT '" + "x".repeat(1 << 20) + "' FROM endpoints",
                "SELECT name FROM endpoints WHERE name = '" + "y".repeat(20_000) + "'",
                "SELECT " + "(".repeat(5000) + "1" + ")".repeat(5000),
                "SELECT name FROM endpoints WHERE " + "NOT ".repeat(3000) + "1 = 1", "", "   ", "\u0000",
                "SELECT " + "1+".repeat(7000) + "1",
                // H2 matches LIKE by backtracking without checking the timeout
                "SELECT 1 FROM endpoints WHERE '" + "a".repeat(3000) + "' LIKE '%a%a%a%a%a%a%a%a%b'",
                "SELECT name FROM endpoints WHERE name LIKE CONCAT('%a%a%a', '%a%a%b')",
                // strings grown by || or CONCAT, which H2 matches with LIKE in quadratic time without checking the
                // timeout, or which run it out of memory (it then closes the database): neither is allowed
                "SELECT 1 AS one FROM (SELECT 1 AS one) t WHERE " + String.join(" || ",
                        java.util.Collections.nCopies(40, "CAST('a' AS CHAR(4096))")) + " LIKE '% %x'",
                "SELECT LENGTH(z) AS n FROM (SELECT " + String.join("||", java.util.Collections.nCopies(20, "y"))
                        + " AS z FROM (SELECT " + String.join("||", java.util.Collections.nCopies(100, "x"))
                        + " AS y FROM (SELECT " + String.join("||", java.util.Collections.nCopies(100,
                        "CAST('a' AS CHAR(4096))")) + " AS x) t) u) v",
                "SELECT MAX(CONCAT(a.name, b.name, c.name, d.name)) FROM endpoints a, endpoints b, endpoints c,"
                        + " endpoints d",
                "SELECT 1 FROM endpoints WHERE '" + "a".repeat(16_000) + "' LIKE '% %x'",
                "SELECT 1 FROM endpoints WHERE SUBSTRING(name, 1) LIKE '%x'",
                // wide answers and catalog tricks
                "SELECT CAST('a' AS CHAR(1000000)) FROM endpoints a, endpoints b",
                "SELECT 1e131000 FROM endpoints", "SELECT current_user", "SELECT ROWNUM FROM endpoints",
                "SELECT e.row_to_json FROM endpoints e", "SELECT CAST('gma_endpoints' AS regclass)",
                // the table views and their private tables
                "DELETE FROM publishers", "DELETE FROM gma_publishers", "DROP VIEW publishers", "DROP TABLE tables",
                "UPDATE gma_tables SET declared_by = 'evil'", "UPDATE table_columns SET type = 'STRING'",
                "INSERT INTO gma_table_columns VALUES ('host_cpu', 3, 'x', 'STRING', NULL)",
                "SELECT * FROM gma_tables", "SELECT * FROM gma_table_columns", "SELECT owner FROM gma_publishers",
                "SELECT p.name FROM publishers p JOIN gma_publishers g ON g.name = p.name",
                "SELECT name FROM tables UNION SELECT owner FROM gma_endpoints",
                "SELECT name FROM tables; DELETE FROM gma_tables", "SELECT p.expires_at FROM publishers p",
                "SELECT lease_seconds FROM publishers", "SELECT t.owner FROM tables t",
                "SELECT name FROM publishers WHERE predicate LIKE '%s%s%s%x'",
                "SELECT name FROM publishers WHERE predicate REGEXP '(a+)+$'",
                "SELECT name FROM table_columns WHERE name IN (SELECT COLUMN_NAME FROM INFORMATION_SCHEMA.COLUMNS)",
                "SELECT FILE_READ(predicate) FROM publishers", "SELECT * FROM PUBLIC.publishers",
                "SELECT name FROM publishers FOR UPDATE", "SELECT * INTO stolen FROM tables")
                .forEach(sql -> c.add(new Case(sql, Outcome.REFUSED)));
        // allowed statements whose cost an attacker controls: the cap and the timeout bound them
        Stream.of("SELECT a.name, b.name, c.name FROM endpoints a, endpoints b, endpoints c",
                "SELECT COUNT(*) FROM endpoints a, endpoints b, endpoints c, endpoints d, endpoints e",
                "SELECT a.name FROM endpoints a CROSS JOIN attributes b CROSS JOIN attributes c ORDER BY a.name",
                "SELECT name FROM endpoints WHERE name = 'a' OR '1' = '1'",
                "SELECT a.name, b.name, c.name FROM publishers a, table_columns b, publishers c",
                "SELECT p.name, p.predicate FROM publishers p JOIN endpoints e ON e.name = p.name"
                        + " WHERE p.table_name = 'host_cpu' OR '1' = '1'",
                // nested comments: JSqlParser ends a comment at the first */, the databases do not; the
                // database runs the statement as the guard parsed it, so the payload stays inside a string
                "SELECT name FROM endpoints /* /* */ WHERE name = ' */ ; DROP VIEW domains --'",
                "SELECT name FROM endpoints /* /* */ WHERE name = ' */ UNION SELECT owner FROM gma_endpoints --'",
                "SELECT name FROM endpoints /* /* */ WHERE name = ' */ ; DELETE FROM gma_attributes --'")
                .forEach(sql -> c.add(new Case(sql, Outcome.BOUNDED)));
        return c;
    }

    @Test
    void everyHostileStatementIsRefusedOrBoundedAndNothingChanges() throws Exception {
        List<Case> corpus = corpus();
        assertTrue(corpus.size() >= 50, corpus.size() + " statements");
        String before = checksum();
        List<String> failures = new ArrayList<>();
        for (Case c : corpus) {
            Http.Answer a = Http.send("POST", api + "/query", "text/plain", c.sql());
            String shown = c.sql().length() > 100 ? c.sql().substring(0, 100) + "..." : c.sql();
            if (a.body().length() > 64 * 1024 && a.status() != 200) {
                failures.add(shown + " -> an error body of " + a.body().length() + " bytes");
            }
            JsonNode body = Json.MAPPER.readTree(a.body());
            if (Boolean.getBoolean("gma.test.verbose")) {
                System.out.println(a.status() + " " + cut(a.body()) + "  <-  " + shown.replace("\n", " "));
            }
            if (c.outcome() == Outcome.REFUSED && (a.status() < 400 || a.status() >= 500)) {
                failures.add(shown + " -> " + a.status() + " " + cut(a.body()));
            }
            if (c.outcome() == Outcome.BOUNDED && !(a.status() == 200 && body.get("rows").size() <= MAX_ROWS
                    || a.status() == 400 && body.get("error").asText().equals("TIMEOUT"))) {
                failures.add(shown + " -> " + a.status() + " " + cut(a.body()));
            }
        }
        if (!failures.isEmpty()) {
            fail(failures.size() + " statements were not refused or bounded:\n" + String.join("\n", failures));
        }
        assertEquals(before, checksum(), "the database changed");
        try (Stream<Path> files = Files.list(dir)) {
            assertEquals(List.of(), files.toList(), "a statement wrote a file");
        }
        assertEquals(200, Http.send("GET", api + "/health", null, null).status());
        QueryResult still = RegistryClient.create(registry.url()).query("SELECT COUNT(*) FROM endpoints");
        assertEquals((long) ENDPOINTS, ((Number) still.rows().get(0).get(0)).longValue());
    }

    @Test
    void crossJoinIsCutByTheCapAndSaysSo() throws Exception {
        Http.Answer a = Http.send("POST", api + "/query", "text/plain",
                "SELECT a.name, b.name FROM endpoints a, endpoints b");
        JsonNode body = Json.MAPPER.readTree(a.body());
        assertEquals(200, a.status(), a.toString());
        assertEquals(MAX_ROWS, body.get("rows").size());
        assertTrue(body.get("truncated").asBoolean());
        assertEquals(MAX_ROWS, body.get("maxRows").asInt());
    }

    @Test
    void crossJoinIsCutByTheTimeout() throws Exception {
        long start = System.nanoTime();
        Http.Answer a = Http.send("POST", api + "/query", "text/plain",
                "SELECT COUNT(*) FROM endpoints a, endpoints b, endpoints c, endpoints d, endpoints e");
        long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        assertEquals(400, a.status(), a.toString());
        assertEquals("{\"error\":\"TIMEOUT\",\"message\":\"the query ran longer than the statement timeout of 1 s;"
                + " narrow it with WHERE or LIMIT\"}", a.body());
        assertTrue(millis < 10_000, "took " + millis + " ms to stop");
    }

    @Test
    void readerConnectionCannotSeePrivateTablesEvenPastTheGuard() throws Exception {
        // the guard is the first line; the database user of the read pool is the second
        RegistryCore core = new RegistryCore(new Settings("jdbc:h2:mem:second-line-" + UUID.randomUUID(), "sa", "",
                10, Duration.ofSeconds(1), Duration.ofSeconds(30), Duration.ofHours(1), Duration.ofSeconds(5), 16384,
                2, null, null), null, null);
        try {
            for (String sql : List.of("SELECT * FROM gma_endpoints", "SELECT FILE_READ('/etc/passwd')",
                    "DELETE FROM gma_endpoints", "CREATE TABLE x (a INT)", "SELECT * FROM gma_publishers",
                    "SELECT * FROM gma_tables", "DELETE FROM gma_table_columns", "DELETE FROM publishers")) {
                ApiException e = org.junit.jupiter.api.Assertions.assertThrows(ApiException.class,
                        () -> core.queries.run(sql), sql);
                assertEquals("QUERY_FAILED", e.code(), sql + ": " + e.getMessage());
            }
            assertEquals(List.of("name"), core.queries.run("SELECT name FROM endpoints").columns());
        } finally {
            core.close();
        }
    }

    private static String cut(String s) {
        return s.length() > 200 ? s.substring(0, 200) + "..." : s;
    }

    /** A digest of every schema object, user, right and routine, and every row of every base table. */
    private static String checksum() throws Exception {
        MessageDigest digest = MessageDigest.getInstance("SHA-256");
        try (Connection c = DriverManager.getConnection(DB + ";NON_KEYWORDS=KEY,VALUE", "sa", "");
                Statement s = c.createStatement()) {
            List<String> tables = new ArrayList<>();
            for (String meta : List.of(
                    "SELECT TABLE_SCHEMA, TABLE_NAME, TABLE_TYPE FROM INFORMATION_SCHEMA.TABLES ORDER BY 1, 2",
                    "SELECT USER_NAME, IS_ADMIN FROM INFORMATION_SCHEMA.USERS ORDER BY 1",
                    "SELECT * FROM INFORMATION_SCHEMA.RIGHTS ORDER BY 1, 2, 3, 4, 5",
                    "SELECT ROUTINE_SCHEMA, ROUTINE_NAME FROM INFORMATION_SCHEMA.ROUTINES ORDER BY 1, 2",
                    "SELECT VIEW_DEFINITION FROM INFORMATION_SCHEMA.VIEWS ORDER BY 1",
                    "SELECT TABLE_NAME FROM INFORMATION_SCHEMA.TABLES WHERE TABLE_SCHEMA = 'PUBLIC'"
                            + " AND TABLE_TYPE = 'BASE TABLE' ORDER BY 1")) {
                try (ResultSet rs = s.executeQuery(meta)) {
                    int n = rs.getMetaData().getColumnCount();
                    while (rs.next()) {
                        for (int i = 1; i <= n; i++) {
                            digest.update(String.valueOf(rs.getString(i)).getBytes(StandardCharsets.UTF_8));
                            digest.update((byte) 0);
                        }
                        if (meta.contains("BASE TABLE")) {
                            tables.add(rs.getString(1));
                        }
                    }
                }
            }
            assertFalse(tables.isEmpty());
            for (String table : tables) {
                try (ResultSet rs = s.executeQuery("SELECT * FROM PUBLIC." + table + " ORDER BY 1, 2")) {
                    int n = rs.getMetaData().getColumnCount();
                    while (rs.next()) {
                        for (int i = 1; i <= n; i++) {
                            digest.update(String.valueOf(rs.getString(i)).getBytes(StandardCharsets.UTF_8));
                            digest.update((byte) 0);
                        }
                    }
                }
            }
        }
        return HexFormat.of().formatHex(digest.digest());
    }
}
