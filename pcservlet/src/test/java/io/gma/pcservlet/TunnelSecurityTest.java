package io.gma.pcservlet;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gma.registry.Registry;
import io.gma.security.HttpClients;
import io.gma.security.Keys;
import io.gma.security.Rules;
import io.gma.security.Security;
import io.gma.security.SignedTokens;
import io.gma.security.SigningKey;
import io.gma.security.Tls;
import io.gma.security.Trust;
import io.gma.wire.Command;
import io.gma.wire.Packed;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLException;
import javax.net.ssl.SSLSocket;
import okhttp3.MediaType;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The HTTP side of a PC servlet with security on: HTTPS only, a caller proves its identity with a token (or a
 * client certificate) before anything of its body is read, and may post only as the domains the rules give
 * it. Every refusal is followed by a good batch that is still taken.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class TunnelSecurityTest {
    private static final MediaType GMA = MediaType.get("application/x-gma");
    @TempDir
    static Path keys;
    @TempDir
    static Path foreign;
    private static Registry registry;
    private static PcServer swansea;
    private static Security cardiff;
    /** Shows cardiff's client certificate when asked (fromDirectory takes client-cardiff.p12). */
    private static OkHttpClient http;
    /** Trusts the CA and shows no certificate: a token is its only credential. */
    private static OkHttpClient anonymous;

    @BeforeAll
    static void start() throws Exception {
        Keys.make(keys, List.of("localhost", "127.0.0.1"), List.of("cardiff", "bangor"));
        Keys.addIdentities(keys, List.of("swansea"));
        Keys.make(foreign, List.of("localhost", "127.0.0.1"), List.of("cardiff"));
        Files.writeString(keys.resolve("rules"), """
                post    cardiff   cardiff
                domain  swansea   swansea
                send    swansea   *@swansea
                """);
        registry = Registry.builder().port(0).security(Security.fromDirectory(keys, "registry",
                Tls.ClientAuth.NONE).build()).build().start();
        swansea = PcServer.builder("swansea", registry.url()).registryGrace(Duration.ZERO)
                .security(Security.fromDirectory(keys, "swansea", Tls.ClientAuth.WANT).build()).start();
        cardiff = Security.fromDirectory(keys, "cardiff", Tls.ClientAuth.NONE).build();
        http = HttpClients.configure(new OkHttpClient.Builder(), cardiff).retryOnConnectionFailure(false).build();
        Tls trustOnly = Tls.builder().trustStore(keys.resolve("truststore.p12"), pass(keys)).build();
        anonymous = HttpClients.configure(new OkHttpClient.Builder(), Security.builder().tls(trustOnly)
                .trust(Trust.read(keys.resolve("trust"))).build())
                .retryOnConnectionFailure(false).build();
    }

    @AfterAll
    static void stop() throws Exception {
        swansea.stop();
        registry.close();
    }

    private static byte[] batch() {
        return Packed.make(1, Command.DATA, "src-aaaaaa@cardiff", "sink-aaaaaa@swansea", "x".getBytes(UTF_8));
    }

    private static Response post(OkHttpClient client, String authorization, String domain) throws IOException {
        Request.Builder b = new Request.Builder().url(swansea.url() + Tunnel.MESSAGES_PATH)
                .header(Tunnel.DOMAIN_HEADER, domain).post(RequestBody.create(batch(), GMA));
        if (authorization != null) {
            b.header("Authorization", authorization);
        }
        return client.newCall(b.build()).execute();
    }

    private static void assertAnswer(int status, String text, Response r) throws IOException {
        try (r) {
            String body = r.body().string();
            // what was sent and over which connection, should a refusal ever come back as something else
            assertEquals(status, r.code(), () -> body + "; sent " + r.request().headers() + "; answered "
                    + r.headers() + "; prior " + r.priorResponse() + "; TLS " + (r.handshake() == null ? null
                    : r.handshake().localPrincipal() + " " + r.handshake().tlsVersion()));
            assertTrue(body.contains(text), body);
        }
        // and the PC servlet still takes a good batch (no route here: answered with an ERROR in a 200)
        try (Response good = post(http, cardiff.bearer("swansea"), "cardiff")) {
            assertEquals(200, good.code());
            String body = good.body().string();
            assertTrue(body.contains("NO_ROUTE"), body);
        }
    }

    @Test
    void theUrlIsHttpsAndAnAllowedDomainsBatchIsTaken() throws IOException {
        assertTrue(swansea.url().startsWith("https://"), swansea.url());
        try (Response r = post(http, cardiff.bearer("swansea"), "cardiff")) {
            assertEquals(200, r.code());
        }
    }

    @Test
    void missingBadOrForeignTokensAre401AndNeverEchoed() throws IOException {
        String good = cardiff.bearer("swansea");
        String tampered = good.substring(0, good.length() - 3) + (good.endsWith("AAA") ? "BBB" : "AAA");
        Security other = Security.fromDirectory(foreign, "cardiff", Tls.ClientAuth.NONE).build();
        assertAnswer(401, "UNAUTHORIZED no credentials", post(anonymous, null, "cardiff"));
        assertAnswer(401, "UNAUTHORIZED token refused: it is not a valid token of a trusted issuer",
                post(anonymous, tampered, "cardiff"));
        assertAnswer(401, "UNAUTHORIZED token refused: it is not a valid token of a trusted issuer",
                post(http, tampered, "cardiff"));
        String unknownKey = SignedTokens.issue(SigningKey.generate("cardiff", "k9"), "cardiff", "swansea",
                java.time.Instant.now().plusSeconds(600));
        assertAnswer(401, "UNAUTHORIZED token refused (UNKNOWN_KEY)", post(anonymous, "Bearer " + unknownKey,
                "cardiff"));
        assertAnswer(401, "UNAUTHORIZED token refused (WRONG_AUDIENCE): the token is for \"bangor\", not for"
                + " \"swansea\"", post(anonymous, cardiff.bearer("bangor"), "cardiff"));
        try (Response foreignToken = post(anonymous, other.bearer("swansea"), "cardiff")) {
            String body = foreignToken.body().string();
            assertEquals(401, foreignToken.code());
            assertFalse(body.contains(other.bearer("swansea").substring(7)), body);
            assertFalse(body.contains(tampered.substring(7)), body);
        }
    }

    @Test
    void anIdentityMayPostOnlyAsTheDomainsTheRulesGiveIt() throws IOException {
        assertAnswer(403, "FORBIDDEN \"cardiff\" may not post as domain \"bangor\"", post(http,
                cardiff.bearer("swansea"), "bangor"));
        Security bangor = Security.fromDirectory(keys, "bangor", Tls.ClientAuth.NONE).build();
        assertAnswer(403, "FORBIDDEN \"bangor\" may not post as domain \"bangor\"", post(http, bangor.bearer("swansea"),
                "bangor"));
    }

    @Test
    void aClientCertificateIsAnIdentityToo() throws IOException {
        // client-cardiff.p12 is cardiff's certificate: it proves "cardiff" without a token
        try (Response r = post(anonymous, null, "cardiff")) {
            assertEquals(401, r.code(), "without a client certificate in the handshake, no identity");
        }
        try (Response r = post(http, null, "cardiff")) {
            assertEquals(200, r.code());
        }
        Tls bangorsCert = Tls.builder().keyStore(keys.resolve("client-bangor.p12"), pass(keys))
                .trustStore(keys.resolve("truststore.p12"), pass(keys)).build();
        Security bangor = Security.builder().tls(bangorsCert).trust(Trust.read(keys.resolve("trust")))
                .rules(Rules.denyAll()).build();
        assertAnswer(403, "FORBIDDEN \"bangor\" may not post as domain \"cardiff\"",
                post(HttpClients.configure(new OkHttpClient.Builder(), bangor).build(), null, "cardiff"));
    }

    private static char[] pass(Path dir) throws IOException {
        return Files.readString(dir.resolve("store.pass")).strip().toCharArray();
    }

    @Test
    void aCertificateFromAnotherCaOrPlaintextHttpGetsNoFurther() throws Exception {
        Security other = Security.fromDirectory(foreign, "cardiff", Tls.ClientAuth.NONE).build();
        assertThrows(SSLException.class, () -> post(HttpClients.configure(new OkHttpClient.Builder(), other).build(),
                other.bearer("swansea"), "cardiff").close());
        try (Socket s = new Socket(InetAddress.getLoopbackAddress(), swansea.httpPort())) {
            s.setSoTimeout(10_000);
            s.getOutputStream().write(("POST " + Tunnel.MESSAGES_PATH + " HTTP/1.1\r\nHost: x\r\nContent-Length: 1"
                    + "\r\n\r\nx").getBytes(UTF_8));
            byte[] answer = s.getInputStream().readNBytes(64);
            assertFalse(new String(answer, UTF_8).startsWith("HTTP/1.1 200"), new String(answer, UTF_8));
        } catch (IOException reset) {
            // refused by a reset: fine, nothing was taken
        }
        assertAnswer(200, "NO_ROUTE", post(http, cardiff.bearer("swansea"), "cardiff"));
    }

    @Test
    void anUnauthenticatedPostIsRefusedBeforeItsBodyIsRead() throws Exception {
        Tls trustOnly = Tls.builder().trustStore(keys.resolve("truststore.p12"), pass(keys)).build();
        try (SSLSocket s = (SSLSocket) trustOnly.socketFactory().createSocket("127.0.0.1", swansea.httpPort())) {
            s.setSoTimeout(10_000);
            OutputStream out = s.getOutputStream();
            // a 100 MB body is announced and never sent: the answer must come anyway
            out.write(("POST " + Tunnel.MESSAGES_PATH + " HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: "
                    + "application/x-gma\r\nX-Gma-Domain: cardiff\r\nContent-Length: 100000000\r\n\r\n")
                    .getBytes(UTF_8));
            out.flush();
            InputStream in = s.getInputStream();
            String head = new String(in.readNBytes(12), UTF_8);
            assertEquals("HTTP/1.1 401", head);
        }
    }

    @Test
    void theStatusIsReadableFromTheRegistrysDashboardAloneAmongOtherOrigins() throws IOException {
        String evil = "https://127.0.0.1:1";
        for (String origin : new String[] {registry.url(), evil}) {
            Request status = new Request.Builder().url(swansea.url() + "/gma/v1/status").header("Origin", origin)
                    .build();
            try (Response r = anonymous.newCall(status).execute()) {
                assertEquals(200, r.code(), origin);
                assertEquals(origin.equals(evil) ? null : registry.url(), r.header("Access-Control-Allow-Origin"),
                        "the registry's dashboard, signed in there, shows the status; a page of " + origin);
            }
        }
    }

    @Test
    void diagnosticsAnswerThisMachineWithoutCredentialsAndShowNoSecret() throws IOException {
        String secret = Files.readString(keys.resolve("swansea.key"));
        String b64 = secret.lines().filter(l -> l.startsWith("k1.private = ")).findFirst().orElseThrow()
                .substring("k1.private = ".length()).strip();
        List<String> hidden = List.of(b64, Base64.getUrlEncoder().withoutPadding().encodeToString(
                Base64.getDecoder().decode(b64)), "gma2.");
        for (String page : new String[] {"/gma/v1/status", "/metrics"}) {
            Request status = new Request.Builder().url(swansea.url() + page).build();
            try (Response r = anonymous.newCall(status).execute()) {
                assertEquals(200, r.code(), page);
                assertEquals(null, r.header("Access-Control-Allow-Origin"), "no page from elsewhere may read it");
                String body = r.body().string();
                assertTrue(body.contains("swansea") || page.equals("/metrics"), body);
                for (String h : hidden) {
                    assertFalse(body.contains(h), page + " shows " + h);
                }
            }
        }
    }
}
