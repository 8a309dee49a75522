package io.gma.registry;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.gma.registry.api.DomainInfo;
import io.gma.registry.api.EndpointInfo;
import io.gma.registry.api.Kind;
import io.gma.registry.api.Lease;
import io.gma.registry.api.QueryResult;
import io.gma.registry.api.Registration;
import io.gma.registry.api.RegistryClient;
import io.gma.registry.api.RegistryException;
import java.io.IOException;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Every call of protocol.md section 7 and every documented error status, over a real Jetty on port 0. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class RegistryApiTest {
    private static Registry registry;
    private static RegistryClient client;
    private static String api;

    @BeforeAll
    static void start() throws Exception {
        registry = Registry.builder().port(0).maxRows(5).build().start();
        client = RegistryClient.create(registry.url());
        api = registry.url() + Registry.API_PATH;
    }

    @AfterAll
    static void stop() throws Exception {
        registry.close();
    }

    private static Registration.Builder producer(String label, String domain) {
        return Registration.builder(Kind.PRODUCER, label, domain).host("127.0.0.1").port(7000);
    }

    private static JsonNode json(Http.Answer a) throws IOException {
        return Json.MAPPER.readTree(a.body());
    }

    private static void assertError(Http.Answer a, int status, String code, String message) throws IOException {
        assertEquals(status, a.status(), a.toString());
        assertEquals("application/json", a.response().headers().firstValue("Content-Type").orElse(""));
        assertEquals(code, json(a).get("error").asText(), a.toString());
        assertEquals(message, json(a).get("message").asText());
    }

    @Test
    void registersLooksUpRenewsAndRemoves() throws Exception {
        Lease lease = client.register(producer("cpu", "dsg").attribute("site", "cardiff").attribute("metric", "load")
                .lease(Duration.ofSeconds(20)).build());
        assertTrue(lease.name().matches("cpu-[a-z2-7]{6}@dsg"), lease.name());
        assertTrue(lease.expiresAt().isAfter(Instant.now().plusSeconds(15)), lease.toString());

        EndpointInfo e = client.lookup(lease.name());
        assertEquals(new EndpointInfo(lease.name(), "cpu", Kind.PRODUCER, "dsg", "127.0.0.1", 7000, e.registeredAt(),
                lease.expiresAt(), Map.of("site", "cardiff", "metric", "load"), "anonymous"), e);

        Thread.sleep(20); // a deliberate pause, not a wait: time passes, so that a renewal expires later
        Lease renewed = client.renew(lease.name());
        assertTrue(renewed.expiresAt().isAfter(lease.expiresAt()), renewed + " after " + lease);

        client.unregister(lease.name());
        RegistryException gone = assertThrows(RegistryException.class, () -> client.lookup(lease.name()));
        assertEquals(404, gone.status());
        assertEquals("NOT_FOUND", gone.code());
        assertEquals("no live endpoint is named \"" + lease.name() + "\"", gone.getMessage());
        assertEquals(404, assertThrows(RegistryException.class, () -> client.renew(lease.name())).status());
        assertEquals(404, assertThrows(RegistryException.class, () -> client.unregister(lease.name())).status());
    }

    @Test
    void theRootSendsABrowserToTheDashboardAndOtherPathsAreNotFound() throws IOException {
        Http.Answer root = Http.send("GET", registry.url() + "/", null, null);
        assertEquals(302, root.status(), root.toString());
        assertEquals(registry.url() + "/dashboard/", root.response().headers().firstValue("Location").get()
                .replaceFirst("^/", registry.url() + "/"));
        Http.Answer page = Http.send("GET", registry.url() + "/dashboard/", null, null);
        assertEquals(200, page.status());
        assertTrue(page.body().contains("<html"), page.body());
        assertEquals(404, Http.send("GET", registry.url() + "/elsewhere", null, null).status());
    }

    @Test
    void answersRegistrationWith201AndLocation() throws IOException {
        Http.Answer a = Http.send("POST", api + "/endpoints", "application/json",
                "{\"label\":\"mem\",\"kind\":\"consumer\",\"domain\":\"lan\",\"host\":\"::1\",\"port\":9}");
        assertEquals(201, a.status(), a.toString());
        String name = json(a).get("name").asText();
        assertEquals(Registry.API_PATH + "/endpoints/" + name, a.response().headers().firstValue("Location").get());
        assertEquals(200, Http.send("GET", api + "/endpoints/" + name, null, null).status());
        assertEquals(200, Http.send("PUT", api + "/endpoints/" + name + "/lease", null, null).status());
        assertEquals(204, Http.send("DELETE", api + "/endpoints/" + name, null, null).status());
    }

    @Test
    void exactNameIsRefusedWith409WhenTaken() throws Exception {
        Lease first = client.register(producer("pong", "lan").exact(true).build());
        assertEquals("pong@lan", first.name());
        RegistryException taken = assertThrows(RegistryException.class,
                () -> client.register(producer("pong", "lan").exact(true).build()));
        assertEquals(409, taken.status());
        assertEquals("CONFLICT", taken.code());
        assertEquals("name \"pong@lan\" is taken by a live endpoint", taken.getMessage());
        client.unregister("pong@lan");
        assertEquals("pong@lan", client.register(producer("pong", "lan").exact(true).build()).name());
        client.unregister("pong@lan");
    }

    @Test
    void aLostNameIsTakenBackByItsNonceOnce() throws Exception {
        Lease back = client.register(producer("cpu", "lan").nonce("abc234").build());
        assertEquals("cpu-abc234@lan", back.name());
        assertEquals("cpu", client.lookup("cpu-abc234@lan").label(), "the label stays the label");
        RegistryException taken = assertThrows(RegistryException.class,
                () -> client.register(producer("cpu", "lan").nonce("abc234").build()));
        assertEquals(409, taken.status());
        assertEquals("name \"cpu-abc234@lan\" is taken by a live endpoint", taken.getMessage());
        client.unregister("cpu-abc234@lan");
    }

    @Test
    void aTakeoverReplacesOnlyTheRegistrationAtTheHostAndPortItNames() throws Exception {
        Lease old = client.register(producer("sink", "lan").exact(true).attribute("run", "1").build());
        Instant before = client.lookup(old.name()).registeredAt();
        // the registration it names is no longer there: refused, naming where the name is held
        RegistryException moved = assertThrows(RegistryException.class, () -> client.register(producer("sink", "lan")
                .exact(true).port(7001).takeOver("127.0.0.1", 7999).build()));
        assertEquals(409, moved.status());
        assertEquals("name \"sink@lan\" is held by a live endpoint at 127.0.0.1:7000, not at the 127.0.0.1:7999"
                + " this takeover replaces: another instance has taken it over since", moved.getMessage());
        // the one it names: replaced at once, with its attributes, by the new host and port
        Lease taken = client.register(producer("sink", "lan").exact(true).port(7001).takeOver("127.0.0.1", 7000)
                .build());
        assertEquals("sink@lan", taken.name());
        EndpointInfo now = client.lookup("sink@lan");
        assertEquals(7001, now.port());
        assertEquals(Map.of(), now.attributes());
        assertTrue(!now.registeredAt().isBefore(before), now.toString());
        // the same takeover again finds the name at 7001 now: a second restarted instance does not displace it
        assertEquals(409, assertThrows(RegistryException.class, () -> client.register(producer("sink", "lan")
                .exact(true).port(7002).takeOver("127.0.0.1", 7000).build())).status());
        assertEquals(7001, client.lookup("sink@lan").port());
        client.unregister("sink@lan");
        // a name nobody holds is simply registered
        assertEquals("sink@lan", client.register(producer("sink", "lan").exact(true).takeOver("127.0.0.1", 7000)
                .build()).name());
        client.unregister("sink@lan");
    }

    @Test
    void aTakeoverNeedsANameGivenInFullAndAHostAndPort() throws IOException {
        String ok = "\"label\":\"a\",\"kind\":\"producer\",\"domain\":\"d\",\"host\":\"h\",\"port\":1";
        assertError(post("{" + ok + ",\"takeover\":{\"host\":\"h\",\"port\":2}}"), 400, "BAD_REQUEST",
                "takeover needs exact (label@domain) or nonce (label-nonce@domain): a name the registry chooses is"
                        + " new, and there is nothing to take over");
        assertError(post("{" + ok + ",\"exact\":true,\"takeover\":true}"), 400, "BAD_REQUEST",
                "takeover \"true\" is not an object with host and port");
        assertError(post("{" + ok + ",\"exact\":true,\"takeover\":{\"host\":\"h\"}}"), 400, "BAD_REQUEST",
                "port is missing");
        assertError(post("{" + ok + ",\"exact\":true,\"takeover\":{\"host\":\"h\",\"port\":0}}"), 400,
                "BAD_REQUEST", "port 0 is outside 1..65535");
        assertError(post("{" + ok + ",\"exact\":true,\"takeover\":{\"host\":\"h\",\"port\":2,\"pid\":9}}"), 400,
                "BAD_REQUEST", "unknown field \"pid\" in takeover; its fields are [host, port]");
    }

    @Test
    void refusesEachBadFieldWith400NamingIt() throws IOException {
        String ok = "\"label\":\"a\",\"kind\":\"producer\",\"domain\":\"d\",\"host\":\"h\"";
        assertError(post("{" + ok + ",\"port\":70000}"), 400, "BAD_REQUEST", "port 70000 is outside 1..65535");
        assertError(post("{" + ok + "}"), 400, "BAD_REQUEST", "port is missing");
        assertError(post("{" + ok + ",\"port\":\"80\"}"), 400, "BAD_REQUEST", "port \"\"80\"\" is not a whole number");
        assertError(post("{\"label\":\"a b\",\"kind\":\"producer\",\"domain\":\"d\",\"host\":\"h\",\"port\":1}"), 400,
                "BAD_REQUEST", "label \"a b\" is not 1..64 of [A-Za-z0-9._-]");
        assertError(post("{\"label\":\"a\",\"kind\":\"broker\",\"domain\":\"d\",\"host\":\"h\",\"port\":1}"), 400,
                "BAD_REQUEST", "kind \"broker\" is not \"producer\" or \"consumer\"");
        assertError(post("{\"label\":\"a\",\"kind\":\"producer\",\"domain\":\"d@x\",\"host\":\"h\",\"port\":1}"), 400,
                "BAD_REQUEST", "domain \"d@x\" is not 1..64 of [A-Za-z0-9.-]");
        assertError(post("{" + ok + ",\"port\":1,\"leaseSeconds\":0}"), 400, "BAD_REQUEST",
                "leaseSeconds 0 is outside 1..3600");
        assertError(post("{" + ok + ",\"port\":1,\"lable\":\"x\"}"), 400, "BAD_REQUEST",
                "unknown field \"lable\"; the fields are [attributes, domain, exact, host, kind, label, leaseSeconds,"
                        + " nonce, port, takeover]");
        assertError(post("{" + ok + ",\"port\":1,\"nonce\":\"ABCDEF\"}"), 400, "BAD_REQUEST",
                "nonce \"ABCDEF\" is not 6 of [a-z2-7]");
        assertError(post("{" + ok + ",\"port\":1,\"nonce\":\"abcdef\",\"exact\":true}"), 400, "BAD_REQUEST",
                "give at most one of exact (label@domain) and nonce (label-nonce@domain)");
        assertError(post("{" + ok + ",\"port\":1,\"attributes\":{\"k\":1}}"), 400, "BAD_REQUEST",
                "attribute k is not a string");
        assertError(post("{" + ok + ",\"port\":1,\"attributes\":{\"k\":\"" + "v".repeat(1025) + "\"}}"), 400,
                "BAD_REQUEST", "attribute k is 1025 characters, over the limit of 1024");
        assertError(post("[1]"), 400, "BAD_REQUEST", "body is not a JSON object");
        assertError(post("{" + ok + ",\"port\":1,\"attributes\":{\"k\":\"a\\u0000b\"}}"), 400, "BAD_REQUEST",
                "attribute k contains a NUL character");
        assertEquals(400, post("{\"label\":").status());
        assertError(Http.send("GET", api + "/endpoints/no%20such", null, null), 400, "BAD_REQUEST",
                "name \"no such\" is not <label>[-<nonce>]@<domain>");
    }

    private static Http.Answer post(String body) throws IOException {
        return Http.send("POST", api + "/endpoints", "application/json", body);
    }

    /** JSON is UTF-8 whatever a charset parameter says, even one the JVM does not know (not a 500). */
    @Test
    void aCharsetParameterDoesNotMatterEvenAnUnknownOne() throws Exception {
        String body = "{\"label\":\"charset\",\"kind\":\"producer\",\"domain\":\"charsets\",\"host\":\"h\",\"port\":1}";
        assertEquals(201, Http.send("POST", api + "/endpoints", "application/json; charset=binary", body).status());
        assertEquals(201, Http.send("POST", api + "/endpoints", "Application/JSON; charset=UTF-8", body).status());
    }

    @Test
    void refusesARegistrationThatIsNotApplicationJsonWith415BeforeReadingIt() throws Exception {
        String body = "{\"label\":\"plain\",\"kind\":\"producer\",\"domain\":\"typed\",\"host\":\"h\",\"port\":1}";
        String url = api + "/endpoints";
        assertError(Http.send("POST", url, "text/plain", body), 415, "UNSUPPORTED_MEDIA_TYPE",
                "content type \"text/plain\" is not application/json");
        assertError(Http.send("POST", url, "text/plain; charset=utf-8", body), 415, "UNSUPPORTED_MEDIA_TYPE",
                "content type \"text/plain\" is not application/json");
        assertError(Http.send("POST", url, null, body), 415, "UNSUPPORTED_MEDIA_TYPE",
                "content type is missing; it must be application/json");
        assertError(Http.send("POST", url, "application/x-www-form-urlencoded", body), 415,
                "UNSUPPORTED_MEDIA_TYPE", "content type \"application/x-www-form-urlencoded\" is not application/json");
        assertError(Http.send("POST", url, "multipart/form-data; boundary=x", body), 415, "UNSUPPORTED_MEDIA_TYPE",
                "content type \"multipart/form-data\" is not application/json");
        assertError(Http.send("POST", url, "application/jsonp", body), 415, "UNSUPPORTED_MEDIA_TYPE",
                "content type \"application/jsonp\" is not application/json");
        // the type is checked before the body is parsed, or its size read
        assertError(Http.send("POST", url, "text/plain", "{\"label\":"), 415, "UNSUPPORTED_MEDIA_TYPE",
                "content type \"text/plain\" is not application/json");
        assertError(Http.send("POST", url, "text/plain", "x".repeat(Settings.MAX_JSON_BYTES + 1)), 415,
                "UNSUPPORTED_MEDIA_TYPE", "content type \"text/plain\" is not application/json");
        assertEquals(List.of(), client.query("SELECT name FROM endpoints WHERE domain = 'typed'").rows(),
                "nothing was registered");

        Http.Answer charset = Http.send("POST", url, "application/json; charset=utf-8", body);
        assertEquals(201, charset.status(), charset.toString());
        Http.Answer upper = Http.send("POST", url, "Application/JSON;charset=UTF-8", body);
        assertEquals(201, upper.status(), upper.toString());
        assertEquals(2, client.query("SELECT name FROM endpoints WHERE domain = 'typed'").rows().size());
        client.unregister(json(charset).get("name").asText());
        client.unregister(json(upper).get("name").asText());
    }

    @Test
    void refusesADomainThatIsNotApplicationJsonWith415() throws Exception {
        String body = "{\"domain\":\"typed\",\"url\":\"http://127.0.0.1:8181/gma\"}";
        String url = api + "/domains";
        assertError(Http.send("POST", url, "text/plain", body), 415, "UNSUPPORTED_MEDIA_TYPE",
                "content type \"text/plain\" is not application/json");
        assertError(Http.send("POST", url, null, body), 415, "UNSUPPORTED_MEDIA_TYPE",
                "content type is missing; it must be application/json");
        assertError(Http.send("POST", url, "application/x-www-form-urlencoded", body), 415,
                "UNSUPPORTED_MEDIA_TYPE", "content type \"application/x-www-form-urlencoded\" is not application/json");
        assertEquals(404, assertThrows(RegistryException.class, () -> client.lookupDomain("typed")).status(),
                "nothing was registered");
        Http.Answer charset = Http.send("POST", url, "application/json; charset=utf-8", body);
        assertEquals(201, charset.status(), charset.toString());
        assertEquals("http://127.0.0.1:8181/gma", client.lookupDomain("typed").url());
        client.unregisterDomain("typed");
    }

    @Test
    void refusesADuplicateKeyWith400NamingIt() throws Exception {
        String ok = "\"kind\":\"producer\",\"domain\":\"twice\",\"host\":\"h\",\"port\":1";
        assertError(post("{\"label\":\"a\"," + ok + ",\"label\":\"b\"}"), 400, "BAD_REQUEST",
                "duplicate field \"label\" in the body");
        assertError(post("{\"label\":\"a\"," + ok + ",\"port\":2}"), 400, "BAD_REQUEST",
                "duplicate field \"port\" in the body");
        assertError(post("{\"label\":\"a\"," + ok + ",\"attributes\":{\"site\":\"x\",\"site\":\"y\"}}"), 400,
                "BAD_REQUEST", "duplicate field \"site\" in the body");
        assertEquals(List.of(), client.query("SELECT name FROM endpoints WHERE domain = 'twice'").rows(),
                "nothing was registered");
        assertError(Http.send("POST", api + "/domains", "application/json",
                "{\"domain\":\"twice\",\"url\":\"http://a/\",\"url\":\"http://b/\"}"), 400, "BAD_REQUEST",
                "duplicate field \"url\" in the body");
        assertEquals(404, assertThrows(RegistryException.class, () -> client.lookupDomain("twice")).status());
        // the same key in two objects is no duplicate
        Http.Answer a = post("{\"label\":\"a\"," + ok + ",\"attributes\":{\"label\":\"x\"}}");
        assertEquals(201, a.status(), a.toString());
        client.unregister(json(a).get("name").asText());
    }

    @Test
    void theRegistrysAudienceIsNoDomain() throws IOException {
        // a PC servlet's audience is its domain: tokens minted for a domain "registry" would be the registry's own
        String reserved = "domain \"registry\" is reserved: it is the registry's audience for tokens, and no domain"
                + " may take it";
        assertError(post("{\"label\":\"a\",\"kind\":\"producer\",\"domain\":\"registry\",\"host\":\"h\","
                + "\"port\":1}"), 400, "BAD_REQUEST", reserved);
        assertError(Http.send("POST", api + "/domains", "application/json",
                "{\"domain\":\"Registry\",\"url\":\"http://a/\"}"), 400, "BAD_REQUEST",
                reserved.replace("\"registry\" is", "\"Registry\" is"));
    }

    @Test
    void refusesBodyOverTheLimitWith413() throws IOException {
        assertError(post("{\"label\":\"" + "x".repeat(Settings.MAX_JSON_BYTES) + "\"}"), 413, "TOO_LARGE",
                "body is " + (Settings.MAX_JSON_BYTES + 12) + " bytes, over the limit of " + Settings.MAX_JSON_BYTES);
    }

    @Test
    void answersUnknownCallsWith404And405() throws IOException {
        assertError(Http.send("GET", api + "/nothing", null, null), 404, "NOT_FOUND",
                "no such call: GET /registry/v1/nothing");
        assertError(Http.send("PATCH", api + "/endpoints", "application/json", "{}"), 405, "METHOD_NOT_ALLOWED",
                "PATCH is not allowed here; use POST");
        assertError(Http.send("DELETE", api + "/query", null, null), 405, "METHOD_NOT_ALLOWED",
                "DELETE is not allowed here; use GET or POST");
    }

    @Test
    void refusedRequestsLeaveTheConnectionUsable() throws IOException {
        // a refused body that is not read makes the server close the connection, under a client that may
        // already be sending its next request there: a DELETE is not retried, so it would fail
        for (int i = 0; i < 300; i++) {
            assertEquals(405, Http.send("PATCH", api + "/endpoints", "application/json", "{\"n\":" + i + "}")
                    .status());
            assertEquals(405, Http.send("DELETE", api + "/query", null, null).status());
            assertEquals(415, Http.send("POST", api + "/endpoints", "text/plain", "{\"n\":" + i + "}").status());
        }
    }

    @Test
    void registersRenewsAndRefusesDomains() throws Exception {
        Lease d = client.registerDomain("cardiff", "http://127.0.0.1:8181/gma", null, Duration.ofSeconds(30));
        assertEquals("cardiff", d.name());
        DomainInfo info = client.lookupDomain("cardiff");
        assertEquals("http://127.0.0.1:8181/gma", info.url());
        assertEquals(null, info.via());
        client.registerDomain("hidden", null, "cardiff", null);
        assertEquals("cardiff", client.lookupDomain("hidden").via());

        Http.Answer renew = Http.send("POST", api + "/domains", "application/json",
                "{\"domain\":\"cardiff\",\"url\":\"https://gw.example/gma\"}");
        assertEquals(201, renew.status(), renew.toString());
        assertEquals(false, json(renew).get("created").asBoolean());
        assertEquals("https://gw.example/gma", client.lookupDomain("cardiff").url());

        assertError(Http.send("POST", api + "/domains", "application/json", "{\"domain\":\"x\"}"), 400, "BAD_REQUEST",
                "give exactly one of url (a PC servlet others can reach) and via (the domain an outbound-only PC"
                        + " servlet relays through)");
        assertError(Http.send("POST", api + "/domains", "application/json",
                "{\"domain\":\"x\",\"url\":\"ftp://h/\"}"), 400, "BAD_REQUEST",
                "url \"ftp://h/\" is not an absolute http or https URL without query or fragment");
        assertError(Http.send("POST", api + "/domains", "application/json",
                "{\"domain\":\"x\",\"url\":\"http://h:99999/gma\"}"), 400, "BAD_REQUEST",
                "url \"http://h:99999/gma\" has port 99999, outside 1..65535");
        assertError(Http.send("POST", api + "/domains", "application/json", "{\"domain\":\"x\",\"via\":\"x\"}"), 400,
                "BAD_REQUEST", "via \"x\" is the domain itself");

        List<List<Object>> rows = client.query("SELECT domain, via FROM domains ORDER BY domain").rows();
        assertTrue(rows.contains(java.util.Arrays.asList("hidden", "cardiff")), rows.toString());
        client.unregisterDomain("hidden");
        assertEquals(404, assertThrows(RegistryException.class, () -> client.lookupDomain("hidden")).status());
    }

    @Test
    void domainHeldByAnotherIdentityIs409() throws Exception {
        Authenticator byHeader = request -> {
            String who = request.getHeader("X-Who");
            if (who == null) {
                throw new AccessDeniedException("no X-Who header");
            }
            return who;
        };
        try (Registry secured = Registry.builder().port(0).authenticator(byHeader).build().start()) {
            String url = secured.url() + Registry.API_PATH;
            java.net.http.HttpClient http = java.net.http.HttpClient.newHttpClient();
            java.util.function.BiFunction<String, String, Integer> register = (who, domain) -> {
                try {
                    return http.send(java.net.http.HttpRequest.newBuilder(java.net.URI.create(url + "/domains"))
                            .header("X-Who", who).header("Content-Type", "application/json")
                            .POST(java.net.http.HttpRequest.BodyPublishers.ofString(
                                    "{\"domain\":\"" + domain + "\",\"url\":\"http://h/\"}")).build(),
                            java.net.http.HttpResponse.BodyHandlers.discarding()).statusCode();
                } catch (IOException | InterruptedException e) {
                    throw new AssertionError(e);
                }
            };
            assertEquals(201, register.apply("alice", "shared"));
            assertEquals(201, register.apply("alice", "shared"));
            assertEquals(409, register.apply("bob", "shared"));
            Http.Answer anonymous = Http.send("GET", url + "/health", null, null);
            assertError(anonymous, 401, "UNAUTHORIZED", "no X-Who header");
            assertEquals("Bearer", anonymous.response().headers().firstValue("WWW-Authenticate").orElse(""));
        }
    }

    @Test
    void authorizerRefusalsAre403() throws Exception {
        Authorizer noAttributes = (identity, action, target) -> {
            if (action == Authorizer.Action.QUERY && target.equals("attributes")) {
                throw new AccessDeniedException(identity + " may not query attributes");
            }
            if (action == Authorizer.Action.REGISTER && target.startsWith("root@")) {
                throw new AccessDeniedException(identity + " may not register " + target);
            }
        };
        try (Registry secured = Registry.builder().port(0).authorizer(noAttributes).build().start()) {
            RegistryClient c = RegistryClient.create(secured.url());
            RegistryException q = assertThrows(RegistryException.class,
                    () -> c.query("SELECT e.name FROM endpoints e JOIN attributes a ON a.name = e.name"));
            assertEquals(403, q.status());
            assertEquals("anonymous may not query attributes", q.getMessage());
            assertEquals(0, c.query("SELECT name FROM endpoints").rows().size());
            RegistryException r = assertThrows(RegistryException.class,
                    () -> c.register(producer("root", "lan").build()));
            assertEquals(403, r.status());
            assertEquals("FORBIDDEN", r.code());

            // a look-up shows attributes only to whom a query of them would show them
            Lease cpu = c.register(producer("cpu", "lan").attribute("site", "cardiff").build());
            Http.Answer raw = Http.send("GET", secured.url() + Registry.API_PATH + "/endpoints/" + cpu.name(), null,
                    null);
            assertEquals(200, raw.status(), raw.toString());
            assertFalse(json(raw).has("attributes"), raw.body());
            assertEquals("anonymous", json(raw).get("owner").asText(), raw.body());
            EndpointInfo e = c.lookup(cpu.name());
            assertEquals(Map.of(), e.attributes());
            assertEquals("anonymous", e.owner());
            assertEquals("cpu", e.label());
        }
    }

    @Test
    void lookUpAnswersOwnerAndAttributesOnAnOpenRegistry() throws Exception {
        Lease cpu = client.register(producer("owned", "lan").attribute("site", "cardiff").build());
        Http.Answer raw = Http.send("GET", api + "/endpoints/" + cpu.name(), null, null);
        assertEquals(200, raw.status(), raw.toString());
        assertEquals("anonymous", json(raw).get("owner").asText(), raw.body());
        assertEquals("{\"site\":\"cardiff\"}", json(raw).get("attributes").toString(), raw.body());
        client.unregister(cpu.name());
    }

    @Test
    void lookUpToleratesAnAnswerWithoutOwnerOrAttributes() throws Exception {
        // a registry older than this client, or one that shows this caller no attributes
        com.sun.net.httpserver.HttpServer old = com.sun.net.httpserver.HttpServer.create(
                new java.net.InetSocketAddress(java.net.InetAddress.getLoopbackAddress(), 0), 0);
        byte[] answer = ("{\"name\":\"cpu-abcdef@lan\",\"label\":\"cpu\",\"kind\":\"producer\",\"domain\":\"lan\","
                + "\"host\":\"127.0.0.1\",\"port\":7000,\"registeredAt\":\"2025-01-01T10:00:00Z\","
                + "\"expiresAt\":\"2025-01-01T10:00:30Z\"}").getBytes(StandardCharsets.UTF_8);
        old.createContext("/", exchange -> {
            exchange.getResponseHeaders().set("Content-Type", "application/json");
            exchange.sendResponseHeaders(200, answer.length);
            exchange.getResponseBody().write(answer);
            exchange.close();
        });
        old.start();
        try {
            EndpointInfo e = RegistryClient.create("http://127.0.0.1:" + old.getAddress().getPort())
                    .lookup("cpu-abcdef@lan");
            assertEquals(new EndpointInfo("cpu-abcdef@lan", "cpu", Kind.PRODUCER, "lan", "127.0.0.1", 7000,
                    Instant.parse("2025-01-01T10:00:00Z"), Instant.parse("2025-01-01T10:00:30Z"), Map.of(), null), e);
        } finally {
            old.stop(0);
        }
    }

    @Test
    void queriesByPostAndGetWithCapAndColumns() throws Exception {
        for (int i = 0; i < 7; i++) {
            client.register(producer("cap", "capdomain").attribute("i", "" + i).build());
        }
        QueryResult r = client.query("SELECT name, port, registered_at FROM producers WHERE domain = 'capdomain'");
        assertEquals(List.of("name", "port", "registered_at"), r.columns());
        assertEquals(5, r.rows().size());
        assertTrue(r.truncated());
        assertEquals(7000L, ((Number) r.rows().get(0).get(1)).longValue());
        Instant.parse((String) r.rows().get(0).get(2));

        Http.Answer get = Http.send("GET", api + "/query?sql=" + URLEncoder.encode(
                "SELECT COUNT(*) AS n FROM producers WHERE domain = 'capdomain'", StandardCharsets.UTF_8), null, null);
        assertEquals(200, get.status(), get.toString());
        assertEquals("{\"columns\":[\"n\"],\"rows\":[[7]],\"truncated\":false}", get.body());
        Http.Answer sql = Http.send("POST", api + "/query", "application/sql",
                "SELECT a.value FROM attributes a JOIN producers p ON p.name = a.name WHERE p.domain = 'capdomain'"
                        + " AND a.key = 'i' ORDER BY a.value DESC LIMIT 1");
        assertEquals("{\"columns\":[\"value\"],\"rows\":[[\"6\"]],\"truncated\":false}", sql.body());
    }

    @Test
    void queryErrorsNameTheProblem() throws IOException {
        assertError(Http.send("POST", api + "/query", "text/plain", "SELECT name FORM endpoints"), 400, "BAD_REQUEST",
                "syntax error at line 1, column 18, near \"endpoints\"");
        assertError(Http.send("POST", api + "/query", "text/plain", "SELECT * FROM gma_endpoints"), 403, "FORBIDDEN",
                "table \"gma_endpoints\" is not allowed; the registry's views are endpoints, producers, consumers,"
                        + " attributes, domains, tables, table_columns, publishers");
        assertError(Http.send("POST", api + "/query", "text/plain", "DELETE FROM endpoints"), 400, "BAD_REQUEST",
                "only SELECT is allowed, and this is DELETE");
        int chars = Settings.DEFAULT_MAX_SQL_CHARS;
        assertError(Http.send("POST", api + "/query", "text/plain", "SELECT '" + "x".repeat(4 * chars) + "'"), 413,
                "TOO_LARGE", "the statement is over the limit of " + chars + " characters (maxSqlChars): its body is "
                + (4 * chars + 9) + " bytes, over the limit of " + 4 * chars + " (4 bytes a character at most)");
        assertError(Http.send("POST", api + "/query", "application/json", "{}"), 415, "UNSUPPORTED_MEDIA_TYPE",
                "content type \"application/json\" is not text/plain or application/sql");
        assertError(Http.send("GET", api + "/query", null, null), 400, "BAD_REQUEST",
                "the sql parameter is missing: GET /query?sql=SELECT...");
        assertError(Http.send("POST", api + "/query", "text/plain", "SELECT nosuch FROM endpoints"), 400,
                "BAD_REQUEST", "column \"nosuch\" is not a column of the views: [archive, declared_at, declared_by,"
                        + " domain, expires_at, false, history_retention_s, host, in_key, key, key_position, kind,"
                        + " label, latest_retention_s, name, port, position, predicate, primary_key, published_at,"
                        + " registered_at, table_name, true, type, url, value, via]");
        Http.Answer ambiguous = Http.send("POST", api + "/query", "text/plain",
                "SELECT name FROM endpoints e, attributes a");
        assertEquals(400, ambiguous.status());
        assertEquals("QUERY_FAILED", json(ambiguous).get("error").asText());
        assertTrue(json(ambiguous).get("message").asText().startsWith("the database refused the query: "),
                ambiguous.body());
    }

    @Test
    void healthSaysUp() throws IOException {
        Http.Answer a = Http.send("GET", api + "/health", null, null);
        assertEquals(200, a.status());
        assertEquals("up", json(a).get("status").asText());
        assertEquals("H2", json(a).get("database").asText());
        assertFalse(json(a).get("endpoints").isMissingNode());
    }

    @Test
    void anAnswerThatIsNotJsonIsMalformedNotUnreachable() throws Exception {
        try (FakeRegistry html = FakeRegistry.answeringText(200, "<html>a web server</html>")) {
            RegistryException e = assertThrows(RegistryException.class,
                    () -> RegistryClient.create(html.url()).lookup("a@b"));
            assertEquals(200, e.status(), e.getMessage());
            assertEquals("MALFORMED_ANSWER", e.code());
            assertTrue(e.getMessage().startsWith("GET /registry/v1/endpoints/a@b answered 200 with something that"
                    + " is not JSON (Unexpected character ('<'"), e.getMessage());
            assertTrue(e.getMessage().endsWith("): is this URL a GMA registry's?"), e.getMessage());
        }
    }

    @Test
    void clientReportsAnUnreachableRegistry() throws Exception {
        int port;
        try (java.net.ServerSocket s = new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            port = s.getLocalPort();
        }
        RegistryClient dead = RegistryClient.builder("http://127.0.0.1:" + port).timeout(Duration.ofSeconds(2)).build();
        RegistryException e = assertThrows(RegistryException.class, () -> dead.lookup("a@b"));
        assertEquals(0, e.status());
        assertEquals("UNREACHABLE", e.code());
        assertTrue(e.getMessage().startsWith("registry at http://127.0.0.1:" + port + "/registry/v1 did not answer"
                + " GET /registry/v1/endpoints/a@b: nothing listens at 127.0.0.1:" + port + " ("), e.getMessage());
        assertTrue(e.getMessage().endsWith("): is the registry running (gma registry), and is this its --port?"),
                e.getMessage());
    }
}
