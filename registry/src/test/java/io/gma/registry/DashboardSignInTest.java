package io.gma.registry;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.gma.security.Keys;
import io.gma.security.Rules;
import io.gma.security.Security;
import io.gma.security.Tls;
import io.gma.security.Trust;
import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.net.ssl.SSLSocket;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The dashboard's sign-in at {@code /registry/v1/session}, over HTTPS as a browser speaks it (no browser): a
 * wrong token is 401 with its sentence, the right one sets an HttpOnly, SameSite=Strict, Secure cookie that
 * authenticates the API's calls as the token would, signing out ends it, a session whose token the trust no
 * longer takes ends, a request with the cookie from another origin is refused, and a client certificate needs no
 * session.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class DashboardSignInTest {
    private static final Pattern SESSION = Pattern.compile("gma-session=([A-Za-z0-9_-]{43}); Path=/registry/v1;"
            + " HttpOnly; SameSite=Strict; Secure");
    private static final String ENDED = "this dashboard session has ended (signed out, or the registry restarted):"
            + " sign in again";

    @TempDir
    static Path keys;
    /** What the registry's verifier trusts: the test takes alice's key away to see her session end. */
    private static final AtomicReference<Trust> TRUST = new AtomicReference<>();
    private static Registry registry;
    private static Tls trustOnly;
    private static HttpClient https;
    private static String origin;
    private static String alice;

    @BeforeAll
    static void start() throws Exception {
        Keys.make(keys, List.of("localhost", "127.0.0.1"), List.of("alice"));
        TRUST.set(Trust.read(keys.resolve(Keys.TRUST)));
        char[] password = Files.readString(keys.resolve("store.pass")).strip().toCharArray();
        Tls tls = Tls.builder().keyStore(keys.resolve("server.p12"), password)
                .trustStore(keys.resolve("truststore.p12"), password).clientAuth(Tls.ClientAuth.WANT).build();
        registry = Registry.builder().port(0).security(Security.builder().tls(tls).trust(TRUST::get)
                .rules(Rules.parse("query alice endpoints\n", "rules")).build()).build().start();
        origin = registry.url();
        trustOnly = Tls.builder().trustStore(keys.resolve("truststore.p12"), password).build(); // no certificate
        https = HttpClient.newBuilder().sslContext(trustOnly.context()).connectTimeout(Duration.ofSeconds(5)).build();
        alice = Security.fromDirectory(keys, "alice", Tls.ClientAuth.NONE).build().bearer(Security.REGISTRY_AUDIENCE)
                .substring(Security.BEARER.length());
    }

    @AfterAll
    static void stop() throws Exception {
        registry.close();
    }

    /** A call as a browser makes it: {@code headers} are name, value pairs (Origin, Cookie, Authorization). */
    private static HttpResponse<String> send(String method, String path, String body, String... headers)
            throws IOException, InterruptedException {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(registry.url() + path))
                .timeout(Duration.ofSeconds(10)).method(method, body == null ? HttpRequest.BodyPublishers.noBody()
                        : HttpRequest.BodyPublishers.ofString(body));
        if (body != null) {
            b.header("Content-Type", "text/plain");
        }
        for (int i = 0; i < headers.length; i += 2) {
            b.header(headers[i], headers[i + 1]);
        }
        return https.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    private static HttpResponse<String> signIn(String token, String from) throws Exception {
        return send("POST", "/registry/v1/session", null, "Authorization", "Bearer " + token, "Origin", from);
    }

    /** The cookie a sign-in set, checked for its attributes; the token is not in it. */
    private static String cookie(HttpResponse<String> signedIn) {
        assertEquals(200, signedIn.statusCode(), signedIn.body());
        String set = signedIn.headers().firstValue("Set-Cookie").orElse("");
        Matcher m = SESSION.matcher(set);
        assertTrue(m.matches(), set);
        assertFalse(set.contains(alice) || signedIn.body().contains(alice), "the token goes back nowhere");
        return "gma-session=" + m.group(1);
    }

    private static void assertRefused(int status, String message, HttpResponse<String> r) throws IOException {
        assertEquals(status, r.statusCode(), r.body());
        JsonNode body = Json.MAPPER.readTree(r.body());
        assertEquals(status == 401 ? "UNAUTHORIZED" : "FORBIDDEN", body.get("error").asText(), r.body());
        assertEquals(message, body.get("message").asText(), r.body());
    }

    private static String query(String sql) {
        return "/registry/v1/query?sql=" + URLEncoder.encode(sql, StandardCharsets.UTF_8);
    }

    @Test
    void theDashboardOfASecuredRegistryOffersASignInAndAnOpenOneNone() throws Exception {
        HttpResponse<String> config = send("GET", "/dashboard/config.json", null);
        assertEquals("{\"query\":\"/registry/v1/query\",\"session\":\"/registry/v1/session\","
                + "\"pcs\":\"/registry/v1/pcs\"}", config.body());
        try (Registry open = Registry.builder().port(0).build().start()) {
            assertEquals("{\"query\":\"/registry/v1/query\",\"session\":null,\"pcs\":\"/registry/v1/pcs\"}",
                    Http.send("GET", open.url() + "/dashboard/config.json", null, null).body());
            Http.Answer none = Http.send("POST", open.url() + "/registry/v1/session", null, null);
            assertEquals(404, none.status(), none.toString());
            assertEquals("{\"error\":\"NOT_FOUND\",\"message\":\"this registry is open (no authentication is"
                    + " configured): there is nothing to sign in to\"}", none.body());
        }
    }

    @Test
    void aWrongOrMissingTokenIs401WithItsSentenceAndNoCookie() throws Exception {
        HttpResponse<String> wrong = signIn("gma2.not-a-token", origin);
        assertRefused(401, "token refused: it is not a valid token of a trusted issuer", wrong);
        assertEquals("Bearer", wrong.headers().firstValue("WWW-Authenticate").orElse(""));
        assertTrue(wrong.headers().firstValue("Set-Cookie").isEmpty(), wrong.headers().toString());
        assertRefused(401, "no credentials: send 'Bearer <token>' or a client certificate",
                send("POST", "/registry/v1/session", null, "Origin", origin));
    }

    @Test
    void theRightTokenSetsACookieThatAuthenticatesUntilSignOut() throws Exception {
        HttpResponse<String> in = signIn(alice, origin);
        assertEquals("{\"identity\":\"alice\",\"session\":true}", in.body());
        String cookie = cookie(in);

        assertEquals("{\"identity\":\"alice\",\"session\":true}",
                send("GET", "/registry/v1/session", null, "Cookie", cookie).body());
        HttpResponse<String> rows = send("POST", "/registry/v1/query", "SELECT COUNT(*) FROM endpoints", "Cookie",
                cookie, "Origin", origin);
        assertEquals(200, rows.statusCode(), rows.body());
        assertTrue(rows.body().startsWith("{\"columns\":["), rows.body());
        assertEquals(200, send("GET", query("SELECT name FROM endpoints"), null, "Cookie", cookie).statusCode());
        assertRefused(403, "\"alice\" may not query the table \"domains\": no query rule in rules allows it",
                send("POST", "/registry/v1/query", "SELECT domain FROM domains", "Cookie", cookie, "Origin", origin));

        HttpResponse<String> out = send("DELETE", "/registry/v1/session", null, "Cookie", cookie, "Origin", origin);
        assertEquals(200, out.statusCode(), out.body());
        assertEquals("{\"identity\":\"alice\",\"session\":false}", out.body());
        assertEquals("gma-session=; Path=/registry/v1; HttpOnly; SameSite=Strict; Secure; Max-Age=0",
                out.headers().firstValue("Set-Cookie").orElse(""));
        HttpResponse<String> after = send("POST", "/registry/v1/query", "SELECT 1 FROM endpoints", "Cookie", cookie,
                "Origin", origin);
        assertRefused(401, ENDED, after);
        assertTrue(after.headers().firstValue("Set-Cookie").orElse("").endsWith("Max-Age=0"), "the cookie goes");
    }

    @Test
    void aRequestWithTheCookieFromAnotherOriginIsRefused() throws Exception {
        String cookie = cookie(signIn(alice, origin));
        String evil = "https://127.0.0.1:1"; // the same site, another port: SameSite lets the cookie go there
        String foreign = "Origin \"" + evil + "\" is not this registry's (" + origin + "): a dashboard session"
                + " answers the registry's own dashboard only";
        assertRefused(403, foreign, send("POST", "/registry/v1/query", "SELECT 1 FROM endpoints", "Cookie", cookie,
                "Origin", evil));
        assertRefused(403, foreign, send("GET", query("SELECT 1 FROM endpoints"), null, "Cookie", cookie,
                "Origin", evil));
        assertRefused(403, foreign, send("DELETE", "/registry/v1/session", null, "Cookie", cookie, "Origin", evil));
        assertRefused(403, "a POST with a dashboard session names no Origin: a dashboard session answers the"
                + " registry's own dashboard only", send("POST", "/registry/v1/query", "SELECT 1 FROM endpoints",
                "Cookie", cookie));
        HttpResponse<String> elsewhere = signIn(alice, evil);
        assertRefused(403, foreign, elsewhere);
        assertTrue(elsewhere.headers().firstValue("Set-Cookie").isEmpty(), "no session for another origin");
        // the session goes on at home, and a GET from its own page (which names no origin) is taken
        assertEquals(200, send("GET", query("SELECT 1 FROM endpoints"), null, "Cookie", cookie).statusCode());
        assertEquals(200, send("POST", "/registry/v1/query", "SELECT 1 FROM endpoints", "Cookie", cookie, "Origin",
                origin).statusCode());
    }

    @Test
    void aRequestFromAnotherOriginIsRefusedBeforeItsBodyIsRead() throws Exception {
        String cookie = cookie(signIn(alice, origin));
        try (SSLSocket socket = (SSLSocket) trustOnly.socketFactory().createSocket("127.0.0.1",
                URI.create(origin).getPort())) {
            socket.setSoTimeout(5_000); // a server reading the megabyte it was promised would time this out
            socket.getOutputStream().write(("POST /registry/v1/query HTTP/1.1\r\nHost: 127.0.0.1\r\nOrigin:"
                    + " https://127.0.0.1:1\r\nCookie: " + cookie + "\r\nContent-Type: text/plain\r\n"
                    + "Content-Length: 1000000\r\n\r\nSELECT ").getBytes(StandardCharsets.US_ASCII));
            socket.getOutputStream().flush();
            String head = new String(socket.getInputStream().readNBytes(12), StandardCharsets.US_ASCII);
            assertEquals("HTTP/1.1 403", head);
        }
    }

    @Test
    void aClientCertificateNeedsNoSignIn() throws Exception {
        char[] password = Files.readString(keys.resolve("store.pass")).strip().toCharArray();
        Tls alicesCertificate = Tls.builder().keyStore(keys.resolve("client-alice.p12"), password)
                .trustStore(keys.resolve("truststore.p12"), password).build();
        HttpClient browser = HttpClient.newBuilder().sslContext(alicesCertificate.context()).build();
        HttpResponse<String> who = browser.send(HttpRequest.newBuilder(URI.create(registry.url()
                + "/registry/v1/session")).build(), HttpResponse.BodyHandlers.ofString());
        assertEquals(200, who.statusCode(), who.body());
        assertEquals("{\"identity\":\"alice\",\"session\":false}", who.body());
        assertTrue(who.headers().firstValue("Set-Cookie").isEmpty(), "no session: the certificate is enough");
    }

    @Test
    void aSessionEndsWhenItsTokenIsRefused() throws Exception {
        String cookie = cookie(signIn(alice, origin));
        Trust trusted = TRUST.get();
        TRUST.set(Trust.of(List.of())); // alice's key retired
        try {
            HttpResponse<String> refused = send("GET", "/registry/v1/session", null, "Cookie", cookie);
            assertEquals(401, refused.statusCode(), refused.body());
            assertTrue(Json.MAPPER.readTree(refused.body()).get("message").asText().startsWith(
                    "this dashboard session has ended: token refused"), refused.body());
            assertTrue(refused.headers().firstValue("Set-Cookie").orElse("").endsWith("Max-Age=0"), "cookie goes");
        } finally {
            TRUST.set(trusted);
        }
        assertRefused(401, ENDED, send("GET", "/registry/v1/session", null, "Cookie", cookie));
        assertEquals(200, signIn(alice, origin).statusCode(), "a new sign-in works again");
    }
}
