package io.gma.registry;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.gma.registry.api.ColumnDeclaration;
import io.gma.registry.api.ColumnType;
import io.gma.registry.api.Kind;
import io.gma.registry.api.Lease;
import io.gma.registry.api.Publication;
import io.gma.registry.api.Registration;
import io.gma.registry.api.RegistryClient;
import io.gma.registry.api.RegistryException;
import io.gma.registry.api.TableDeclaration;
import io.gma.registry.api.TableInfo;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The table calls (docs/registry.md, "Tables") over a real Jetty on port 0, on H2: answers, refusals, sentences. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class TableApiTest {
    private static Registry registry;
    private static RegistryClient client;
    private static String api;

    @BeforeAll
    static void start() throws Exception {
        registry = Registry.builder().port(0).build().start();
        client = RegistryClient.create(registry.url());
        api = registry.url() + Registry.API_PATH;
    }

    @AfterAll
    static void stop() throws Exception {
        registry.close();
    }

    private static TableDeclaration hostCpu(String name) {
        return new TableDeclaration(name, List.of(new ColumnDeclaration("host", ColumnType.STRING),
                new ColumnDeclaration("cpu", ColumnType.INTEGER), new ColumnDeclaration("load1", ColumnType.DOUBLE),
                new ColumnDeclaration("site", ColumnType.STRING)), List.of("host", "cpu"));
    }

    private static Http.Answer post(String path, String json) throws IOException {
        return Http.send("POST", api + path, "application/json", json);
    }

    private static Http.Answer put(String path, String json) throws IOException {
        return Http.send("PUT", api + path, "application/json", json);
    }

    private static void assertError(Http.Answer a, int status, String code, String message) throws IOException {
        assertEquals(status, a.status(), a.toString());
        JsonNode body = Json.MAPPER.readTree(a.body());
        assertEquals(code, body.get("error").asText(), a.toString());
        assertEquals(message, body.get("message").asText());
    }

    private static Lease producer(String label) throws RegistryException {
        return client.register(Registration.builder(Kind.PRODUCER, label, "tables").port(7000).build());
    }

    @Test
    void declaresATableAndLooksItUp() throws Exception {
        Http.Answer a = post("/tables", "{\"name\":\"disk\",\"columns\":[{\"name\":\"host\",\"type\":\"STRING\"},"
                + "{\"name\":\"mount\",\"type\":\"STRING\"},{\"name\":\"free\",\"type\":\"INTEGER\"},"
                + "{\"name\":\"ok\",\"type\":\"BOOLEAN\"},{\"name\":\"at\",\"type\":\"TIMESTAMP\"},"
                + "{\"name\":\"ratio\",\"type\":\"DOUBLE\"}],\"primaryKey\":[\"mount\",\"host\"]}");
        assertEquals(201, a.status(), a.toString());
        assertEquals("/registry/v1/tables/disk", a.response().headers().firstValue("Location").orElse(""));
        JsonNode created = Json.MAPPER.readTree(a.body());
        assertEquals("disk", created.get("name").asText());
        assertTrue(created.get("created").asBoolean());

        Http.Answer got = Http.send("GET", api + "/tables/disk", null, null);
        assertEquals(200, got.status(), got.toString());
        assertEquals("{\"name\":\"disk\",\"columns\":[{\"name\":\"host\",\"type\":\"STRING\"},{\"name\":\"mount\","
                + "\"type\":\"STRING\"},{\"name\":\"free\",\"type\":\"INTEGER\"},"
                + "{\"name\":\"ok\",\"type\":\"BOOLEAN\"},"
                + "{\"name\":\"at\",\"type\":\"TIMESTAMP\"},{\"name\":\"ratio\",\"type\":\"DOUBLE\"}],"
                + "\"primaryKey\":[\"mount\",\"host\"],\"declaredBy\":\"anonymous\",\"declaredAt\":"
                + Json.MAPPER.writeValueAsString(created.get("declaredAt").asText()) + "}", got.body());

        TableInfo info = client.table("disk");
        assertEquals(List.of("mount", "host"), info.declaration().primaryKey());
        assertEquals(ColumnType.DOUBLE, info.declaration().columns().get(5).type());
        assertEquals("anonymous", info.declaredBy());
        assertError(Http.send("GET", api + "/tables/nosuch", null, null), 404, "NOT_FOUND",
                "no table is declared as \"nosuch\"");
        assertEquals(404, assertThrows(RegistryException.class, () -> client.table("nosuch")).status());
    }

    @Test
    void declaringTheSameTableAgainIsHarmless() throws Exception {
        assertTrue(client.declareTable(hostCpu("again")));
        TableInfo first = client.table("again");
        assertFalse(client.declareTable(hostCpu("again")));
        Http.Answer raw = post("/tables", "{\"name\":\"again\",\"columns\":[{\"name\":\"host\",\"type\":\"STRING\"},"
                + "{\"name\":\"cpu\",\"type\":\"INTEGER\"},{\"name\":\"load1\",\"type\":\"DOUBLE\"},"
                + "{\"name\":\"site\",\"type\":\"STRING\"}],\"primaryKey\":[\"host\",\"cpu\"]}");
        assertEquals(200, raw.status(), raw.toString());
        assertFalse(Json.MAPPER.readTree(raw.body()).get("created").asBoolean(), raw.body());
        assertEquals(first, client.table("again"));
    }

    @Test
    void aDifferentDeclarationIsRefusedWith409NamingTheDifference() throws Exception {
        client.declareTable(hostCpu("host_cpu"));
        TableDeclaration held = hostCpu("host_cpu");
        List<ColumnDeclaration> c = held.columns();
        ColumnDeclaration host = c.get(0);
        ColumnDeclaration cpu = c.get(1);
        ColumnDeclaration site = c.get(3);
        List<String> key = held.primaryKey();
        assertConflict("table host_cpu: column load1 is INTEGER here, DOUBLE in the registry",
                List.of(host, cpu, new ColumnDeclaration("load1", ColumnType.INTEGER), site), key);
        assertConflict("table host_cpu: column site is missing", List.of(host, cpu, c.get(2)), key);
        assertConflict("table host_cpu: column load5 is not in the registry",
                List.of(host, cpu, c.get(2), site, new ColumnDeclaration("load5", ColumnType.DOUBLE)), key);
        assertConflict("table host_cpu: column site is at position 3 here, 4 in the registry; column load1 is at"
                + " position 4 here, 3 in the registry", List.of(host, cpu, site, c.get(2)), key);
        assertConflict("table host_cpu: primary key (host) here, (host, cpu) in the registry", c, List.of("host"));
        assertConflict("table host_cpu: primary key (cpu, host) here, (host, cpu) in the registry", c,
                List.of("cpu", "host"));
        // every difference at once
        assertConflict("table host_cpu: column cpu is STRING here, INTEGER in the registry; column site is missing;"
                + " column region is not in the registry; primary key (host) here, (host, cpu) in the registry",
                List.of(host, new ColumnDeclaration("cpu", ColumnType.STRING), c.get(2),
                        new ColumnDeclaration("region", ColumnType.STRING)), List.of("host"));
        assertEquals(hostCpu("host_cpu"), client.table("host_cpu").declaration());
    }

    private static void assertConflict(String message, List<ColumnDeclaration> columns, List<String> key) {
        RegistryException e = assertThrows(RegistryException.class,
                () -> client.declareTable(new TableDeclaration("host_cpu", columns, key)));
        assertEquals(409, e.status(), e.getMessage());
        assertEquals("CONFLICT", e.code());
        assertEquals(message, e.getMessage());
    }

    @Test
    void refusesBadNamesAndLimitsWith400NamingTheValue() throws Exception {
        String ok = "[{\"name\":\"a\",\"type\":\"STRING\"}]";
        String rule = " is not an SQL identifier: 1..64 of a-z, 0-9 and _, starting with a letter";
        assertBadTable("{\"name\":\"Host_cpu\",\"columns\":" + ok + ",\"primaryKey\":[\"a\"]}",
                "name \"Host_cpu\"" + rule);
        assertBadTable("{\"name\":\"1cpu\",\"columns\":" + ok + ",\"primaryKey\":[\"a\"]}", "name \"1cpu\"" + rule);
        assertBadTable("{\"name\":\"host-cpu\",\"columns\":" + ok + ",\"primaryKey\":[\"a\"]}",
                "name \"host-cpu\"" + rule);
        assertBadTable("{\"name\":\"" + "t".repeat(65) + "\",\"columns\":" + ok + ",\"primaryKey\":[\"a\"]}",
                "name \"" + "t".repeat(65) + "\"" + rule);
        assertEquals(201, post("/tables", "{\"name\":\"" + "t".repeat(64) + "\",\"columns\":" + ok
                + ",\"primaryKey\":[\"a\"]}").status());
        assertBadTable("{\"name\":\"select\",\"columns\":" + ok + ",\"primaryKey\":[\"a\"]}",
                "name \"select\" is an SQL keyword; choose another");
        assertBadTable("{\"name\":\"t\",\"columns\":[{\"name\":\"from\",\"type\":\"STRING\"}],\"primaryKey\":"
                + "[\"from\"]}", "column name \"from\" is an SQL keyword; choose another");
        assertBadTable("{\"name\":\"t\",\"columns\":[{\"name\":\"Load\",\"type\":\"STRING\"}],\"primaryKey\":"
                + "[\"Load\"]}", "column name \"Load\"" + rule);
        assertBadTable("{\"name\":\"t\",\"columns\":[],\"primaryKey\":[\"a\"]}", "table t has 0 columns; a table has"
                + " 1..64");
        List<String> columns = new ArrayList<>();
        for (int i = 0; i < 65; i++) {
            columns.add("{\"name\":\"c" + i + "\",\"type\":\"INTEGER\"}");
        }
        assertBadTable("{\"name\":\"t\",\"columns\":[" + String.join(",", columns) + "],\"primaryKey\":[\"c0\"]}",
                "table t has 65 columns; a table has 1..64");
        assertEquals(201, post("/tables", "{\"name\":\"wide\",\"columns\":[" + String.join(",", columns.subList(0, 64))
                + "],\"primaryKey\":[\"c0\"]}").status());
        assertBadTable("{\"name\":\"t\",\"columns\":[{\"name\":\"a\",\"type\":\"STRING\"},{\"name\":\"a\",\"type\":"
                + "\"INTEGER\"}],\"primaryKey\":[\"a\"]}", "column a is given twice");
        assertBadTable("{\"name\":\"t\",\"columns\":[{\"name\":\"a\",\"type\":\"FLOAT\"}],\"primaryKey\":[\"a\"]}",
                "column a has type \"FLOAT\", which is not one of [INTEGER, DOUBLE, STRING, BOOLEAN, TIMESTAMP]");
        assertBadTable("{\"name\":\"t\",\"columns\":[{\"name\":\"a\",\"type\":\"integer\"}],\"primaryKey\":[\"a\"]}",
                "column a has type \"integer\", which is not one of [INTEGER, DOUBLE, STRING, BOOLEAN, TIMESTAMP]");
        assertBadTable("{\"name\":\"t\",\"columns\":" + ok + ",\"primaryKey\":[\"b\"]}",
                "primaryKey names \"b\", which is not a column of t");
        assertBadTable("{\"name\":\"t\",\"columns\":" + ok + ",\"primaryKey\":[]}",
                "primaryKey is empty: name 1 or more of the columns of t");
        assertBadTable("{\"name\":\"t\",\"columns\":" + ok + ",\"primaryKey\":[\"a\",\"a\"]}",
                "primaryKey names a twice");
        assertBadTable("{\"name\":\"t\",\"columns\":" + ok + "}", "primaryKey is missing");
        assertBadTable("{\"name\":\"t\",\"columns\":" + ok + ",\"primaryKey\":\"a\"}",
                "primaryKey \"a\" is not an array");
        assertBadTable("{\"name\":\"t\",\"columns\":[{\"name\":\"a\",\"type\":\"STRING\",\"size\":4}],"
                + "\"primaryKey\":[\"a\"]}", "unknown field \"size\" in a column; its fields are [name, type]");
        assertBadTable("{\"name\":\"t\",\"columns\":" + ok + ",\"primaryKey\":[\"a\"],\"owner\":\"x\"}",
                "unknown field \"owner\"; the fields are [columns, name, primaryKey]");
        assertError(Http.send("GET", api + "/tables/Bad", null, null), 400, "BAD_REQUEST", "table \"Bad\"" + rule);
        // nothing of a refused declaration was stored
        assertEquals(List.of(), client.query("SELECT name FROM tables WHERE name = 't'").rows());
    }

    private static void assertBadTable(String body, String message) throws IOException {
        assertError(post("/tables", body), 400, "BAD_REQUEST", message);
    }

    @Test
    void publishesAndReplacesAPublication() throws Exception {
        client.declareTable(hostCpu("published"));
        Lease p = producer("cpu");
        String path = "/endpoints/" + p.name() + "/tables/published";
        Http.Answer first = put(path, "{\"predicate\":\"site = 'cardiff'\",\"latestRetentionSeconds\":60,"
                + "\"historyRetentionSeconds\":0}");
        assertEquals(201, first.status(), first.toString());
        assertEquals("{\"name\":\"" + p.name() + "\",\"table\":\"published\",\"created\":true}", first.body());
        Http.Answer again = put(path, "{\"latestRetentionSeconds\":604800,\"historyRetentionSeconds\":2592000}");
        assertEquals(200, again.status(), again.toString());
        assertEquals("{\"name\":\"" + p.name() + "\",\"table\":\"published\",\"created\":false}", again.body());
        assertEquals(List.of(List.of(p.name(), "tables", "<all>", 604800L, 2592000L)), StoreContract.longs(
                client.query("SELECT name, domain, COALESCE(predicate, '<all>') AS predicate, latest_retention_s,"
                        + " history_retention_s FROM publishers WHERE table_name = 'published'").rows()));

        // a producer publishes several tables
        client.declareTable(hostCpu("published_too"));
        client.publish(p.name(), new Publication("published_too", "site = 'x'", Duration.ofSeconds(1),
                Duration.ofSeconds(2)));
        assertEquals(List.of(List.of("published"), List.of("published_too")), client.query("SELECT table_name FROM"
                + " publishers WHERE name = '" + p.name() + "' ORDER BY table_name").rows());
    }

    @Test
    void anArchiverPublishesWithTheArchiveFlag() throws Exception {
        client.declareTable(hostCpu("archived"));
        Lease primary = producer("cpu");
        Lease archiver = producer("archiver");
        client.publish(primary.name(), new Publication("archived", null, Duration.ofSeconds(60), Duration.ZERO));
        client.publish(archiver.name(), new Publication("archived", null, Duration.ofSeconds(60), Duration.ofDays(7),
                true));
        assertEquals(List.of(List.of(archiver.name(), true, 604800L), List.of(primary.name(), false, 0L)),
                StoreContract.longs(client.query("SELECT name, archive, history_retention_s FROM publishers WHERE"
                        + " table_name = 'archived' ORDER BY archive DESC").rows()));
        // published again without the flag: a primary again, as every field of a publication is replaced
        assertEquals(200, put("/endpoints/" + archiver.name() + "/tables/archived", "{\"latestRetentionSeconds\":60,"
                + "\"historyRetentionSeconds\":0}").status());
        assertEquals(List.of(List.of(false)), client.query("SELECT archive FROM publishers WHERE name = '"
                + archiver.name() + "'").rows());
        assertError(put("/endpoints/" + archiver.name() + "/tables/archived", "{\"latestRetentionSeconds\":60,"
                + "\"historyRetentionSeconds\":0,\"archive\":\"yes\"}"), 400, "BAD_REQUEST",
                "archive \"yes\" is not true or false");
    }

    @Test
    void refusesAPublicationItCannotKeepNamingWhy() throws Exception {
        client.declareTable(hostCpu("checked"));
        Lease p = producer("cpu");
        String path = "/endpoints/" + p.name() + "/tables/";
        String retention = "\"latestRetentionSeconds\":60,\"historyRetentionSeconds\":0";
        assertError(put(path + "undeclared", "{" + retention + "}"), 404, "NOT_FOUND",
                "no table is declared as \"undeclared\"; declare it first");
        RegistryException undeclared = assertThrows(RegistryException.class, () -> client.publish(p.name(),
                new Publication("undeclared", null, Duration.ofSeconds(1), Duration.ZERO)));
        assertEquals(404, undeclared.status());
        assertError(put("/endpoints/ghost-abcdef@tables/tables/checked", "{" + retention + "}"), 404, "NOT_FOUND",
                "no live endpoint is named \"ghost-abcdef@tables\"");
        Lease consumer = client.register(Registration.builder(Kind.CONSUMER, "reader", "tables").port(7001).build());
        assertError(put("/endpoints/" + consumer.name() + "/tables/checked", "{" + retention + "}"), 400,
                "BAD_REQUEST", "endpoint \"" + consumer.name() + "\" is a consumer; only a producer publishes tables");

        String within = "é".repeat(512); // 1,024 bytes of UTF-8
        assertEquals(201, put(path + "checked", "{\"predicate\":\"" + within + "\"," + retention + "}").status());
        assertError(put(path + "checked", "{\"predicate\":\"" + within + "a\"," + retention + "}"), 400,
                "BAD_REQUEST", "predicate is 1025 bytes of UTF-8, over the limit of 1024");
        assertError(put(path + "checked", "{\"predicate\":\"  \"," + retention + "}"), 400, "BAD_REQUEST",
                "predicate is blank; leave it out to publish every row");
        assertError(put(path + "checked", "{\"predicate\":\"a\\u0000\"," + retention + "}"), 400, "BAD_REQUEST",
                "predicate contains a NUL character");
        assertError(put(path + "checked", "{\"latestRetentionSeconds\":0,\"historyRetentionSeconds\":0}"), 400,
                "BAD_REQUEST", "latestRetentionSeconds 0 is outside 1..604800");
        assertError(put(path + "checked", "{\"latestRetentionSeconds\":604801,\"historyRetentionSeconds\":0}"), 400,
                "BAD_REQUEST", "latestRetentionSeconds 604801 is outside 1..604800");
        assertError(put(path + "checked", "{\"latestRetentionSeconds\":1,\"historyRetentionSeconds\":-1}"), 400,
                "BAD_REQUEST", "historyRetentionSeconds -1 is outside 0..31622400");
        assertError(put(path + "checked", "{\"latestRetentionSeconds\":1,\"historyRetentionSeconds\":31622401}"),
                400, "BAD_REQUEST", "historyRetentionSeconds 31622401 is outside 0..31622400");
        assertError(put(path + "checked", "{\"latestRetentionSeconds\":1}"), 400, "BAD_REQUEST",
                "historyRetentionSeconds is missing");
        assertError(put(path + "Checked", "{" + retention + "}"), 400, "BAD_REQUEST", "table \"Checked\" is not an"
                + " SQL identifier: 1..64 of a-z, 0-9 and _, starting with a letter");
        // the refusals left the first publication as it was
        assertEquals(List.of(List.of(within)), client.query("SELECT predicate FROM publishers WHERE table_name ="
                + " 'checked'").rows());
    }

    @Test
    void aPublicationGoesWithItsProducersRemoval() throws Exception {
        client.declareTable(hostCpu("removed"));
        Lease p = producer("gone");
        client.publish(p.name(), new Publication("removed", null, Duration.ofSeconds(60), Duration.ZERO));
        String sql = "SELECT name FROM publishers WHERE table_name = 'removed'";
        assertEquals(List.of(List.of(p.name())), client.query(sql).rows());
        client.unregister(p.name());
        assertEquals(List.of(), client.query(sql).rows());
        assertError(put("/endpoints/" + p.name() + "/tables/removed", "{\"latestRetentionSeconds\":1,"
                + "\"historyRetentionSeconds\":0}"), 404, "NOT_FOUND",
                "no live endpoint is named \"" + p.name() + "\"");
        // the table stays
        assertEquals(List.of(List.of("removed")), client.query("SELECT name FROM tables WHERE name = 'removed'")
                .rows());
    }

    @Test
    void tableCallsRefuseOtherMethodsAndMediaTypes() throws Exception {
        assertError(Http.send("DELETE", api + "/tables/x", null, null), 405, "METHOD_NOT_ALLOWED",
                "DELETE is not allowed here; use GET");
        assertError(Http.send("GET", api + "/tables", null, null), 405, "METHOD_NOT_ALLOWED",
                "GET is not allowed here; use POST");
        assertError(Http.send("GET", api + "/endpoints/a-abcdef@b/tables/x", null, null), 405,
                "METHOD_NOT_ALLOWED", "GET is not allowed here; use PUT");
        assertError(Http.send("GET", api + "/tables/x/columns", null, null), 404, "NOT_FOUND",
                "no such call: GET /registry/v1/tables/x/columns");
        assertError(Http.send("POST", api + "/tables", "text/plain", "{}"), 415, "UNSUPPORTED_MEDIA_TYPE",
                "content type \"text/plain\" is not application/json");
        assertError(Http.send("PUT", api + "/endpoints/a-abcdef@b/tables/x", null, "{}"), 415,
                "UNSUPPORTED_MEDIA_TYPE", "content type is missing; it must be application/json");
    }

    @Test
    void declaringTakesATableRuleAndPublishingTheProducersOwnerAndRegisterRule() throws Exception {
        Authenticator byHeader = request -> {
            String who = request.getHeader("X-Who");
            if (who == null) {
                throw new AccessDeniedException("no X-Who header");
            }
            return who;
        };
        Authorizer rules = (identity, action, target) -> {
            if (action == Authorizer.Action.DECLARE_TABLE && !target.startsWith(identity + "_")
                    && !identity.equals("dave")) {
                throw new AccessDeniedException(identity + " may not declare " + target);
            }
            if (action == Authorizer.Action.REGISTER && identity.equals("carol")) {
                throw new AccessDeniedException(identity + " may not register " + target);
            }
            if (action == Authorizer.Action.QUERY && target.equals("table_columns") && identity.equals("bob")) {
                throw new AccessDeniedException(identity + " may not query " + target);
            }
        };
        try (Registry secured = Registry.builder().port(0).authenticator(byHeader).authorizer(rules).build()
                .start()) {
            String url = secured.url() + Registry.API_PATH;
            String table = "{\"name\":\"%s\",\"columns\":[{\"name\":\"a\",\"type\":\"STRING\"}],"
                    + "\"primaryKey\":[\"a\"]}";
            assertEquals(201, as("alice", "POST", url + "/tables", String.format(table, "alice_t")).status());
            assertError(as("bob", "POST", url + "/tables", String.format(table, "alice_u")), 403, "FORBIDDEN",
                    "bob may not declare alice_u");
            // the same declaration by another identity is harmless, and the first declarer stays
            assertEquals(200, as("dave", "POST", url + "/tables", String.format(table, "alice_t")).status());
            Http.Answer looked = as("alice", "GET", url + "/tables/alice_t", null);
            assertEquals("alice", Json.MAPPER.readTree(looked.body()).get("declaredBy").asText(), looked.body());
            assertError(as("bob", "GET", url + "/tables/alice_t", null), 403, "FORBIDDEN",
                    "bob may not query table_columns");

            Http.Answer registered = as("alice", "POST", url + "/endpoints", "{\"label\":\"p\",\"kind\":\"producer\","
                    + "\"domain\":\"lan\",\"host\":\"127.0.0.1\",\"port\":7000}");
            String name = Json.MAPPER.readTree(registered.body()).get("name").asText();
            String publication = "{\"latestRetentionSeconds\":60,\"historyRetentionSeconds\":0}";
            String path = url + "/endpoints/" + name + "/tables/alice_t";
            assertError(as("bob", "PUT", path, publication), 403, "FORBIDDEN",
                    "endpoint \"" + name + "\" was registered by another identity than \"bob\"");
            assertError(as("carol", "PUT", path, publication), 403, "FORBIDDEN", "carol may not register p@lan");
            assertEquals(201, as("alice", "PUT", path, publication).status());
        }
    }

    private static Http.Answer as(String who, String method, String url, String json) throws Exception {
        java.net.http.HttpRequest.Builder b = java.net.http.HttpRequest.newBuilder(java.net.URI.create(url))
                .header("X-Who", who).method(method, json == null ? java.net.http.HttpRequest.BodyPublishers.noBody()
                        : java.net.http.HttpRequest.BodyPublishers.ofString(json));
        if (json != null) {
            b.header("Content-Type", "application/json");
        }
        java.net.http.HttpResponse<String> r = java.net.http.HttpClient.newHttpClient().send(b.build(),
                java.net.http.HttpResponse.BodyHandlers.ofString());
        return new Http.Answer(r.statusCode(), r.body(), r);
    }
}
