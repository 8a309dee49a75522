package io.gma.registry;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.gma.registry.api.ColumnDeclaration;
import io.gma.registry.api.ColumnType;
import io.gma.registry.api.EndpointInfo;
import io.gma.registry.api.Kind;
import io.gma.registry.api.Lease;
import io.gma.registry.api.Publication;
import io.gma.registry.api.Registration;
import io.gma.registry.api.RegistryClient;
import io.gma.registry.api.RegistryException;
import io.gma.registry.api.TableDeclaration;
import io.gma.security.KeyRing;
import io.gma.security.Keys;
import io.gma.security.Rules;
import io.gma.security.Security;
import io.gma.security.Tls;
import io.gma.security.Tokens;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLSocket;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** Who may call the registry and what each may do, with security on: 401 and 403, their sentences, no secret. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class RegistryAuthTest {
    private static final String RULES = String.join("\n",
            "register alice cpu-*@dsg",
            "domain   alice dsg",
            "query    alice endpoints",
            "query    bob   domains",
            "send     bob   *@dsg",
            "send     dave  *@dsg",
            "query    dave  attributes",
            "register bob     x-abc234@east",
            "register alice,bob sink@east",
            "register mallory x@east",
            "table    alice host_*",
            "query    alice tables,table_columns,publishers",
            "");

    @TempDir
    static Path keys;
    private static KeyRing ring;
    private static Tokens tokens;
    private static Tls trust;
    private static Registry registry;
    private static String api;

    @BeforeAll
    static void start() throws Exception {
        Keys.make(keys, List.of("localhost", "127.0.0.1"), List.of("alice", "bob"));
        Keys.writeDomainKeys(keys); // HMAC tokens: one secret mints them for any identity, as these tests need
        char[] password = Files.readString(keys.resolve("store.pass")).strip().toCharArray();
        ring = KeyRing.read(keys.resolve("domain.keys"));
        tokens = Tokens.with(ring).build();
        trust = Tls.builder().trustStore(keys.resolve("truststore.p12"), password).build();
        registry = serve(password);
        api = registry.url() + Registry.API_PATH;
    }

    private static Registry serve(char[] password) throws Exception {
        Tls tls = Tls.builder().keyStore(keys.resolve("server.p12"), password)
                .trustStore(keys.resolve("truststore.p12"), password).clientAuth(Tls.ClientAuth.WANT).build();
        return Registry.builder().port(0).security(Security.builder().tls(tls).keys(ring)
                .rules(Rules.parse(RULES, "rules")).build()).build().start();
    }

    @AfterAll
    static void stop() throws Exception {
        registry.close();
    }

    private static RegistryClient as(String identity) throws IOException {
        String token = tokens.issue(identity, Duration.ofMinutes(5));
        return RegistryClient.builder(registry.url())
                .security(Security.builder().tls(trust).token(() -> token).build()).build();
    }

    private static Registration producer(String label, String domain) {
        return Registration.builder(Kind.PRODUCER, label, domain).host("127.0.0.1").port(7000).build();
    }

    /** A request over HTTPS with this Authorization header (none when null), as a non-Java client sends it. */
    private static Http.Answer send(String authorization, String method, String path, String body)
            throws IOException, InterruptedException {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(api + path)).timeout(Duration.ofSeconds(10))
                .header("Content-Type", "application/json")
                .method(method, body == null ? HttpRequest.BodyPublishers.noBody()
                        : HttpRequest.BodyPublishers.ofString(body));
        if (authorization != null) {
            b.header("Authorization", authorization);
        }
        HttpClient client = HttpClient.newBuilder().sslContext(trust.context()).build();
        HttpResponse<String> r = client.send(b.build(), HttpResponse.BodyHandlers.ofString());
        return new Http.Answer(r.statusCode(), r.body(), r);
    }

    private static void assertRefused(Http.Answer a, int status, String code, String message) throws IOException {
        assertEquals(status, a.status(), a.toString());
        JsonNode body = Json.MAPPER.readTree(a.body());
        assertEquals(code, body.get("error").asText(), a.toString());
        assertEquals(message, body.get("message").asText(), a.toString());
        if (status == 401) {
            assertEquals("Bearer", a.response().headers().firstValue("WWW-Authenticate").orElse(""));
        }
    }

    private static String tampered(String token) {
        String[] part = token.split("\\.");
        part[2] = Base64.getUrlEncoder().withoutPadding().encodeToString("root".getBytes(StandardCharsets.UTF_8));
        return String.join(".", part);
    }

    @Test
    void requestsWithoutGoodCredentialsAre401NamingWhatWasWrong() throws Exception {
        String body = "{\"label\":\"cpu-load\",\"kind\":\"producer\",\"domain\":\"dsg\",\"host\":\"h\",\"port\":1}";
        String good = tokens.issue("alice", Duration.ofMinutes(5));
        String foreign = Tokens.with(KeyRing.generate("k1")).build().issue("alice", Duration.ofMinutes(5));
        String unknownKey = Tokens.with(KeyRing.generate("k9")).build().issue("alice", Duration.ofMinutes(5));
        Clock past = Clock.fixed(Instant.now().minus(Duration.ofHours(3)), ZoneOffset.UTC);
        String expired = Tokens.with(ring).clock(past).build().issue("alice", Duration.ofHours(1));

        assertRefused(send(null, "POST", "/endpoints", body), 401, "UNAUTHORIZED",
                "no credentials: send 'Bearer <token>' or a client certificate");
        assertRefused(send("Basic YWxpY2U6c2VjcmV0", "POST", "/endpoints", body), 401, "UNAUTHORIZED",
                "credentials must be 'Bearer <token>' (PROTOCOL.md section 5)");
        assertRefused(send("Bearer " + foreign, "POST", "/endpoints", body), 401, "UNAUTHORIZED",
                "token refused: it is not a valid token of a trusted issuer");
        assertRefused(send("Bearer " + tampered(good), "POST", "/endpoints", body), 401, "UNAUTHORIZED",
                "token refused: it is not a valid token of a trusted issuer");
        assertRefused(send("Bearer " + unknownKey, "POST", "/endpoints", body), 401, "UNAUTHORIZED",
                "token refused (UNKNOWN_KEY): key id k9 is not in this domain's key ring");
        Http.Answer late = send("Bearer " + expired, "POST", "/endpoints", body);
        assertEquals(401, late.status(), late.toString());
        assertTrue(Json.MAPPER.readTree(late.body()).get("message").asText()
                .startsWith("token refused (EXPIRED): the token expired at "), late.toString());
        assertRefused(send("Bearer not-a-token", "GET", "/health", null), 401, "UNAUTHORIZED",
                "token refused: it is not a valid token of a trusted issuer");

        assertEquals(201, send("Bearer " + good, "POST", "/endpoints", body).status(), "the registry goes on");
        assertEquals(1, as("alice").query("SELECT name FROM endpoints WHERE host = 'h'").rows().size(),
                "only the authenticated registration went in");
    }

    @Test
    void onlyTheIdentityThatRegisteredANameMayTakeItOver() throws Exception {
        RegistryClient alice = as("alice");
        RegistryClient bob = as("bob");
        Registration.Builder sink = Registration.builder(Kind.CONSUMER, "sink", "east").exact(true).host("127.0.0.1")
                .port(7000);
        alice.register(sink.build());
        // bob may register the label, but the live name is alice's: he may not take it over
        RegistryException refused = assertThrows(RegistryException.class,
                () -> bob.register(sink.port(7001).takeOver("127.0.0.1", 7000).build()));
        assertEquals(409, refused.status());
        assertEquals("CONFLICT", refused.code());
        assertEquals("name \"sink@east\" is held by a live endpoint of another identity than \"bob\": only the"
                + " identity that registered a name may take it over", refused.getMessage());
        assertEquals(7000, alice.lookup("sink@east").port());
        assertEquals("alice", alice.lookup("sink@east").owner());
        // alice may
        alice.register(sink.port(7002).takeOver("127.0.0.1", 7000).build());
        assertEquals(7002, alice.lookup("sink@east").port());
        alice.unregister("sink@east");
    }

    @Test
    void anUnauthenticatedPostIsRefusedBeforeItsBodyIsRead() throws Exception {
        int port = URI.create(registry.url()).getPort();
        try (SSLSocket socket = (SSLSocket) trust.socketFactory().createSocket("127.0.0.1", port)) {
            socket.setSoTimeout(5_000); // a server waiting for the 100 MB it was promised would time this out
            OutputStream out = socket.getOutputStream();
            out.write(("POST /registry/v1/endpoints HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json"
                    + "\r\nContent-Length: 100000000\r\n\r\n{\"label\":").getBytes(StandardCharsets.US_ASCII));
            out.flush();
            InputStream in = socket.getInputStream();
            ByteArrayOutputStream answer = new ByteArrayOutputStream();
            byte[] buffer = new byte[4096];
            for (int n; !answer.toString(StandardCharsets.UTF_8).contains("}") && (n = in.read(buffer)) > 0;) {
                answer.write(buffer, 0, n);
            }
            String text = answer.toString(StandardCharsets.UTF_8);
            assertTrue(text.startsWith("HTTP/1.1 401 "), text);
            assertTrue(text.contains("{\"error\":\"UNAUTHORIZED\",\"message\":\"no credentials"), text);
        }
    }

    @Test
    void rulesDecideWhoRegistersWhatInWhichDomain() throws Exception {
        RegistryClient alice = as("alice");
        RegistryClient bob = as("bob");
        Lease cpu = alice.register(producer("cpu-load", "dsg"));
        assertForbidden(() -> alice.register(producer("mem", "dsg")),
                "\"alice\" may not register the endpoint \"mem@dsg\": no register rule in rules allows it");
        assertForbidden(() -> alice.register(producer("cpu-load", "lab")),
                "\"alice\" may not register the endpoint \"cpu-load@lab\": no register rule in rules allows it");
        assertForbidden(() -> bob.register(producer("cpu-load", "dsg")),
                "\"bob\" may not register the endpoint \"cpu-load@dsg\": no register rule in rules allows it");
        assertForbidden(() -> bob.renew(cpu.name()),
                "\"bob\" may not register the endpoint \"cpu-load@dsg\": no register rule in rules allows it");
        assertForbidden(() -> bob.unregister(cpu.name()),
                "\"bob\" may not register the endpoint \"cpu-load@dsg\": no register rule in rules allows it");
        alice.renew(cpu.name());
        assertEquals(List.of(List.of(cpu.name())),
                alice.query("SELECT name FROM endpoints WHERE name = '" + cpu.name() + "'").rows());
        assertEquals(0, alice.query("SELECT name FROM endpoints WHERE label = 'mem' OR domain = 'lab'").rows()
                .size(), "nothing refused was registered");

        alice.registerDomain("dsg", "https://pc.dsg:8081", null, null);
        assertForbidden(() -> alice.registerDomain("lab", "https://pc.lab:8081", null, null),
                "\"alice\" may not register the domain \"lab\": no domain rule in rules allows it");
        assertForbidden(() -> bob.registerDomain("dsg", "https://evil:8081", null, null),
                "\"bob\" may not register the domain \"dsg\": no domain rule in rules allows it");
        assertEquals("https://pc.dsg:8081", alice.lookupDomain("dsg").url());
        alice.unregister(cpu.name());
    }

    @Test
    void rulesDecideWhoQueriesWhichTables() throws Exception {
        RegistryClient alice = as("alice");
        RegistryClient bob = as("bob");
        alice.query("SELECT name FROM endpoints");
        bob.query("SELECT domain FROM domains");
        assertForbidden(() -> alice.query("SELECT domain FROM domains"),
                "\"alice\" may not query the table \"domains\": no query rule in rules allows it");
        assertForbidden(() -> alice.query("SELECT e.name FROM endpoints e JOIN attributes a ON a.name = e.name"),
                "\"alice\" may not query the table \"attributes\": no query rule in rules allows it");
        assertForbidden(() -> bob.query("SELECT name FROM producers"),
                "\"bob\" may not query the table \"producers\": no query rule in rules allows it");
        assertForbidden(() -> as("carol").query("SELECT name FROM endpoints"),
                "\"carol\" may not query the table \"endpoints\": no query rule in rules allows it");
    }

    @Test
    void rulesDecideWhoDeclaresAndPublishesTables() throws Exception {
        RegistryClient alice = as("alice");
        RegistryClient bob = as("bob");
        TableDeclaration cpu = new TableDeclaration("host_cpu", List.of(new ColumnDeclaration("host",
                ColumnType.STRING), new ColumnDeclaration("load1", ColumnType.DOUBLE)), List.of("host"));
        alice.declareTable(cpu);
        assertForbidden(() -> bob.declareTable(new TableDeclaration("host_mem", cpu.columns(), cpu.primaryKey())),
                "\"bob\" may not declare the table \"host_mem\": no table rule in rules allows it");
        assertForbidden(() -> alice.declareTable(new TableDeclaration("jobs", cpu.columns(), cpu.primaryKey())),
                "\"alice\" may not declare the table \"jobs\": no table rule in rules allows it");
        assertEquals("alice", alice.table("host_cpu").declaredBy());
        assertForbidden(() -> bob.table("host_cpu"),
                "\"bob\" may not query the table \"tables\": no query rule in rules allows it");

        // publishing is the producer's registrant's, under its register rule, as a renewal is
        Publication all = new Publication("host_cpu", null, Duration.ofMinutes(1), Duration.ZERO);
        Lease load = alice.register(producer("cpu-load", "dsg"));
        assertForbidden(() -> bob.publish(load.name(), all),
                "\"bob\" may not register the endpoint \"cpu-load@dsg\": no register rule in rules allows it");
        Lease sink = alice.register(Registration.builder(Kind.PRODUCER, "sink", "east").exact(true)
                .host("127.0.0.1").port(7000).build());
        assertForbidden(() -> bob.publish(sink.name(), all),
                "endpoint \"sink@east\" was registered by another identity than \"bob\"");
        alice.publish(load.name(), all);
        alice.publish(sink.name(), all);
        assertEquals(List.of(List.of(load.name()), List.of(sink.name())), alice.query("SELECT p.name FROM publishers p"
                + " JOIN tables t ON t.name = p.table_name WHERE t.name = 'host_cpu' ORDER BY p.name").rows());
        assertForbidden(() -> bob.query("SELECT name FROM publishers"),
                "\"bob\" may not query the table \"publishers\": no query rule in rules allows it");
        alice.unregister(load.name());
        alice.unregister(sink.name());
    }

    @Test
    void lookingUpAnEndpointTakesSendToItOrQueryOfEndpoints() throws Exception {
        Lease cpu = as("alice").register(producer("cpu-load", "dsg"));
        try {
            assertEquals(cpu.name(), as("alice").lookup(cpu.name()).name(), "query endpoints");
            assertEquals(cpu.name(), as("bob").lookup(cpu.name()).name(), "send *@dsg");
            assertForbidden(() -> as("carol").lookup(cpu.name()), "\"carol\" may not send to \"" + cpu.name()
                    + "\": no send rule in rules allows it (looking up an endpoint takes a send rule for its name or"
                    + " a query rule for the table endpoints)");
        } finally {
            as("alice").unregister(cpu.name());
        }
    }

    @Test
    void aLookUpShowsAttributesOnlyToWhomTheQueryRulesShowThemAndNamesTheOwner() throws Exception {
        Lease cpu = as("alice").register(Registration.builder(Kind.PRODUCER, "cpu-attr", "dsg").host("127.0.0.1")
                .port(7000).attribute("site", "cardiff").build());
        try {
            // bob may send to it (so look it up), but a query of attributes would be refused him
            assertForbidden(() -> as("bob").query("SELECT value FROM attributes"),
                    "\"bob\" may not query the table \"attributes\": no query rule in rules allows it");
            Http.Answer raw = send("Bearer " + tokens.issue("bob", Duration.ofMinutes(1)), "GET",
                    "/endpoints/" + cpu.name(), null);
            assertEquals(200, raw.status(), raw.toString());
            JsonNode answer = Json.MAPPER.readTree(raw.body());
            assertFalse(answer.has("attributes"), raw.body());
            assertEquals("alice", answer.get("owner").asText(), raw.body());
            EndpointInfo byBob = as("bob").lookup(cpu.name());
            assertEquals(Map.of(), byBob.attributes());
            assertEquals("alice", byBob.owner());
            assertEquals(Map.of(), as("alice").lookup(cpu.name()).attributes(), "query endpoints is not attributes");

            EndpointInfo byDave = as("dave").lookup(cpu.name());
            assertEquals(Map.of("site", "cardiff"), byDave.attributes());
            assertEquals("alice", byDave.owner());
        } finally {
            as("alice").unregister(cpu.name());
        }
    }

    @Test
    void renewalAndRemovalAreCheckedAgainstTheStoredLabelNotTheShapeOfTheName() throws Exception {
        // x-abc234@east looks like label x with a nonce; bob registered label x-abc234 exactly
        Lease exact = as("bob").register(Registration.builder(Kind.PRODUCER, "x-abc234", "east").host("127.0.0.1")
                .port(7000).exact(true).build());
        assertEquals("x-abc234@east", exact.name());
        // the rules refuse mallory before the owner check would (which names no rule)
        String refused = "\"mallory\" may not register the endpoint \"x-abc234@east\": no register rule in"
                + " rules allows it";
        assertForbidden(() -> as("mallory").renew("x-abc234@east"), refused);
        assertForbidden(() -> as("mallory").unregister("x-abc234@east"), refused);
        as("bob").renew("x-abc234@east");
        assertEquals(List.of(List.of("x-abc234@east")),
                as("alice").query("SELECT name FROM endpoints WHERE domain = 'east'").rows(), "still there");
        as("bob").unregister("x-abc234@east");

        // the same name, now mallory's label x with the nonce abc234: her rule, and bob's refused for x@east
        Lease nonce = as("mallory").register(Registration.builder(Kind.PRODUCER, "x", "east").host("127.0.0.1")
                .port(7000).nonce("abc234").build());
        assertEquals("x-abc234@east", nonce.name());
        as("mallory").renew("x-abc234@east");
        assertForbidden(() -> as("bob").renew("x-abc234@east"),
                "\"bob\" may not register the endpoint \"x@east\": no register rule in rules allows it");
        assertForbidden(() -> as("bob").unregister("x-abc234@east"),
                "\"bob\" may not register the endpoint \"x@east\": no register rule in rules allows it");
        as("mallory").unregister("x-abc234@east");

        // a name no live endpoint has stays 404, whoever asks
        for (String who : List.of("mallory", "bob", "carol")) {
            RegistryException gone = assertThrows(RegistryException.class, () -> as(who).renew("x-abc234@east"));
            assertEquals(404, gone.status(), gone.toString());
            assertEquals("no live endpoint is named \"x-abc234@east\"", gone.getMessage());
            assertEquals(404, assertThrows(RegistryException.class, () -> as(who).unregister("x-abc234@east"))
                    .status());
        }
    }

    @Test
    void healthDetailsNeedCredentials() throws Exception {
        assertEquals(401, send(null, "GET", "/health", null).status());
        JsonNode health = Json.MAPPER.readTree(send("Bearer " + tokens.issue("carol", Duration.ofMinutes(1)), "GET",
                "/health", null).body());
        assertEquals("up", health.get("status").asText());
        assertTrue(health.has("database"), health.toString());
        assertTrue(RegistryServlet.loopback("127.0.0.1"));
        assertTrue(RegistryServlet.loopback("::1"));
        assertFalse(RegistryServlet.loopback("192.0.2.7"));
    }

    @Test
    void secretsAndTokensNeverReachTheLog() throws Exception {
        String secrets = Files.readString(keys.resolve("domain.keys"));
        String secret = secrets.lines().filter(l -> l.startsWith("k1")).findFirst().orElseThrow()
                .split("=", 2)[1].strip();
        byte[] raw = Base64.getDecoder().decode(secret);
        List<String> hidden = new ArrayList<>(List.of(secret, Base64.getUrlEncoder().encodeToString(raw),
                Base64.getUrlEncoder().withoutPadding().encodeToString(raw)));
        String good = tokens.issue("alice", Duration.ofMinutes(5));
        String foreign = Tokens.with(KeyRing.generate("k1")).build().issue("alice", Duration.ofMinutes(5));
        hidden.addAll(List.of(good, tampered(good), foreign, good.substring(good.lastIndexOf('.') + 1)));

        String log = captureStandardError(() -> {
            try (Registry second = serve(Files.readString(keys.resolve("store.pass")).strip().toCharArray())) {
                String url = second.url();
                RegistryClient alice = RegistryClient.builder(url).security(Security.builder().tls(trust)
                        .token(() -> good).build()).build();
                alice.query("SELECT name FROM endpoints");
                for (String bad : List.of(tampered(good), foreign)) {
                    RegistryClient refused = RegistryClient.builder(url).security(Security.builder().tls(trust)
                            .token(() -> bad).build()).build();
                    RegistryException e = assertThrows(RegistryException.class, () -> refused.lookup("cpu@dsg"));
                    for (String h : hidden) {
                        assertFalse(e.getMessage().contains(h), e.getMessage());
                    }
                }
                assertEquals(200, send("Bearer " + good, "GET", "/query?sql=SELECT%20name%20FROM%20endpoints", null)
                        .status());
            }
        });
        assertTrue(log.contains("registry at https://127.0.0.1:"), "the log was captured: " + log);
        for (String h : hidden) {
            assertFalse(log.contains(h), "the log shows a secret or a token: " + log);
        }
    }

    /** What slf4j-simple (which looks System.err up on each line) and anything else wrote there meanwhile. */
    private static String captureStandardError(Call scenario) throws Exception {
        PrintStream saved = System.err;
        ByteArrayOutputStream captured = new ByteArrayOutputStream();
        System.setErr(new PrintStream(captured, true, StandardCharsets.UTF_8));
        try {
            scenario.run();
        } finally {
            System.setErr(saved);
        }
        return captured.toString(StandardCharsets.UTF_8);
    }

    private interface Call {
        void run() throws Exception;
    }

    private static void assertForbidden(Call call, String message) {
        RegistryException e = assertThrows(RegistryException.class, call::run);
        assertEquals(403, e.status(), e.toString());
        assertEquals("FORBIDDEN", e.code());
        assertEquals(message, e.getMessage());
    }
}
