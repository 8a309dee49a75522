package io.gma.registry;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gma.registry.api.Kind;
import io.gma.registry.api.Lease;
import io.gma.registry.api.Registration;
import io.gma.registry.api.RegistryClient;
import io.gma.registry.api.RegistryException;
import io.gma.security.AlteredTokens;
import io.gma.security.Keys;
import io.gma.security.Rules;
import io.gma.security.Security;
import io.gma.security.SignedTokens;
import io.gma.security.SigningKey;
import io.gma.security.Tls;
import io.gma.security.Trust;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.FileTime;
import java.security.GeneralSecurityException;
import java.security.Key;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.time.Duration;
import java.time.Instant;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The registry over HTTPS: tokens, altered ones among them, client certificates, what TLS refuses, and stores
 * and the trust file reloaded while it runs.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class RegistryTlsTest {
    private static final String RULES = "register alice *\ndomain alice *\nquery alice *\n";

    @TempDir
    static Path temp;
    /** A CA with a server certificate for localhost and 127.0.0.1, and clients alice and bob. */
    private static Path keys;
    /** Another CA, whose server certificate names localhost only. */
    private static Path other;
    private static char[] password;
    private static char[] otherPassword;

    @BeforeAll
    static void makeKeys() throws IOException {
        keys = temp.resolve("keys");
        other = temp.resolve("other");
        Keys.make(keys, List.of("localhost", "127.0.0.1"), List.of("alice", "bob"));
        Keys.make(other, List.of("localhost"), List.of("alice"));
        password = Files.readString(keys.resolve("store.pass")).strip().toCharArray();
        otherPassword = Files.readString(other.resolve("store.pass")).strip().toCharArray();
    }

    private static Registry serve(Path serverStore, Tls.ClientAuth clientAuth, Duration reloadCheck)
            throws Exception {
        Tls tls = Tls.builder().keyStore(serverStore, password).trustStore(keys.resolve("truststore.p12"), password)
                .clientAuth(clientAuth).reloadCheck(reloadCheck).build();
        Security security = Security.builder().tls(tls).trust(Trust.read(keys.resolve("trust")))
                .rules(Rules.parse(RULES, "test rules")).build();
        return Registry.builder().port(0).security(security).build().start();
    }

    private static Registry serve(Tls.ClientAuth clientAuth) throws Exception {
        return serve(keys.resolve("server.p12"), clientAuth, Duration.ofSeconds(10));
    }

    /** Trusts the test CA, shows no certificate, sends a token for alice. */
    private static Security tokenClient() throws IOException {
        return Security.builder().tls(Tls.builder().trustStore(keys.resolve("truststore.p12"), password).build())
                .signingKey(SigningKey.read(keys.resolve("alice.key"))).identity("alice").build();
    }

    /** Shows {@code store} (a client certificate), trusts {@code trust}, sends no token. */
    private static Security certificateClient(Path store, char[] storePassword, Path trust, char[] trustPassword)
            throws IOException {
        return Security.builder().tls(Tls.builder().keyStore(store, storePassword).trustStore(trust, trustPassword)
                .build()).build();
    }

    private static Registration producer(String label) {
        return Registration.builder(Kind.PRODUCER, label, "dsg").host("127.0.0.1").port(7000).build();
    }

    /** Every call, over HTTPS, by a client who proves it is alice. */
    private static void everyCallWorks(RegistryClient client) throws RegistryException {
        Lease lease = client.register(producer("cpu"));
        assertEquals("127.0.0.1", client.lookup(lease.name()).host());
        assertTrue(!client.renew(lease.name()).expiresAt().isBefore(lease.expiresAt()));
        assertEquals(List.of(List.of(lease.name())),
                client.query("SELECT name FROM endpoints WHERE name = '" + lease.name() + "'").rows());
        client.registerDomain("dsg", "https://pc.dsg:8081", null, null);
        assertEquals("https://pc.dsg:8081", client.lookupDomain("dsg").url());
        client.unregister(lease.name());
        client.unregisterDomain("dsg");
        assertEquals(404, assertThrows(RegistryException.class, () -> client.lookup(lease.name())).status());
    }

    @Test
    void servesHttpsToATokenHolder() throws Exception {
        try (Registry registry = serve(Tls.ClientAuth.WANT)) {
            assertTrue(registry.url().startsWith("https://127.0.0.1:"), registry.url());
            everyCallWorks(RegistryClient.builder(registry.url()).security(tokenClient()).build());
        }
    }

    @Test
    void servesMutualTlsWithTheClientCertificateAlone() throws Exception {
        try (Registry registry = serve(Tls.ClientAuth.NEED)) {
            Security alice = certificateClient(keys.resolve("client-alice.p12"), password,
                    keys.resolve("truststore.p12"), password);
            assertEquals(null, alice.bearer(Security.REGISTRY_AUDIENCE));
            everyCallWorks(RegistryClient.builder(registry.url()).security(alice).build());

            Security bob = certificateClient(keys.resolve("client-bob.p12"), password, keys.resolve("truststore.p12"),
                    password);
            RegistryException refused = assertThrows(RegistryException.class,
                    () -> RegistryClient.builder(registry.url()).security(bob).build().register(producer("cpu")));
            assertEquals(403, refused.status());
            assertEquals("\"bob\" may not register the endpoint \"cpu@dsg\": no register rule in test rules allows it",
                    refused.getMessage());
        }
    }

    @Test
    void refusesACertificateFromAnotherCa() throws Exception {
        try (Registry registry = serve(Tls.ClientAuth.NEED)) {
            Security stranger = certificateClient(other.resolve("client-alice.p12"), otherPassword,
                    keys.resolve("truststore.p12"), password);
            RegistryException e = assertThrows(RegistryException.class,
                    () -> RegistryClient.builder(registry.url()).security(stranger).build().register(producer("x")));
            assertEquals(0, e.status(), e.getMessage());
            assertEquals("UNREACHABLE", e.code());
            RegistryClient alice = RegistryClient.builder(registry.url()).security(certificateClient(
                    keys.resolve("client-alice.p12"), password, keys.resolve("truststore.p12"), password)).build();
            assertEquals(0, alice.query("SELECT name FROM endpoints WHERE label = 'x'").rows().size(),
                    "nothing registered, and the registry still serves");
        }
    }

    @Test
    void refusesAServerCertificateThatDoesNotNameTheHost() throws Exception {
        // the other CA's server certificate names localhost only; the client connects to 127.0.0.1
        Tls tls = Tls.builder().keyStore(other.resolve("server.p12"), otherPassword)
                .trustStore(other.resolve("truststore.p12"), otherPassword).build();
        Security server = Security.builder().tls(tls).trust(Trust.read(keys.resolve("trust")))
                .rules(Rules.parse(RULES, "test rules")).build();
        try (Registry registry = Registry.builder().port(0).security(server).build().start()) {
            Security client = Security.builder().tls(Tls.builder().trustStore(other.resolve("truststore.p12"),
                    otherPassword).build()).token(() -> "unused").build();
            RegistryException e = assertThrows(RegistryException.class,
                    () -> RegistryClient.builder(registry.url()).security(client).build().lookup("a@b"));
            assertEquals("UNREACHABLE", e.code());
            assertTrue(e.getMessage().contains("Hostname 127.0.0.1 not verified"), e.getMessage());
            int port = Integer.parseInt(registry.url().substring(registry.url().lastIndexOf(':') + 1));
            RegistryException named = assertThrows(RegistryException.class, () -> RegistryClient
                    .builder("https://localhost:" + port).security(client).build().lookup("a@b"));
            assertEquals(401, named.status(), "by the name the certificate holds, TLS passes: " + named);
        }
    }

    @Test
    void plaintextToTheHttpsPortFailsAndTheRegistryGoesOn() throws Exception {
        try (Registry registry = serve(Tls.ClientAuth.WANT)) {
            String plain = registry.url().replace("https://", "http://");
            RegistryException e = assertThrows(RegistryException.class,
                    () -> RegistryClient.create(plain).register(producer("cpu")));
            assertEquals(0, e.status());
            assertEquals("UNREACHABLE", e.code());
            assertTrue(e.getMessage().endsWith(": " + plain + " speaks TLS: use " + registry.url() + ", with the trust"
                    + " of --security DIR"), e.getMessage());
            IllegalArgumentException refused = assertThrows(IllegalArgumentException.class,
                    () -> RegistryClient.builder(plain).security(tokenClient()).build());
            assertEquals("registry URL " + plain + "/registry/v1: expected scheme 'https' but was 'http' (security"
                    + " is on: credentials must not cross the network in plaintext)", refused.getMessage());
            RegistryClient alice = RegistryClient.builder(registry.url()).security(tokenClient()).build();
            assertEquals(0, alice.query("SELECT name FROM endpoints").rows().size());
        }
    }

    @Test
    void aTlsClientToAPlaintextRegistryIsToldSo() throws Exception {
        try (Registry plain = Registry.builder().port(0).build().start()) {
            String https = plain.url().replace("http://", "https://");
            RegistryException e = assertThrows(RegistryException.class,
                    () -> RegistryClient.builder(https).security(tokenClient()).build().lookup("a@b"));
            assertEquals("UNREACHABLE", e.code());
            assertTrue(e.getMessage().endsWith(": " + https + " answers in plaintext, not TLS: use " + plain.url()
                    + ", or start the registry with --security DIR"), e.getMessage());
        }
    }

    @Test
    void aReplacedKeyStoreServesNewConnectionsWithoutRestart() throws Exception {
        Path store = temp.resolve("reloaded-server.p12");
        Files.copy(keys.resolve("server.p12"), store);
        io.gma.security.KeyFiles.restrict(store);
        try (Registry registry = serve(store, Tls.ClientAuth.NONE, Duration.ofMillis(100))) {
            int port = Integer.parseInt(registry.url().substring(registry.url().lastIndexOf(':') + 1));
            // trusts the other CA only: the server's first certificate is refused, its replacement taken
            Security client = Security.builder().tls(Tls.builder().trustStore(other.resolve("truststore.p12"),
                    otherPassword).build()).token(() -> "unused").build();
            String url = "https://localhost:" + port;
            assertEquals("UNREACHABLE", assertThrows(RegistryException.class,
                    () -> RegistryClient.builder(url).security(client).build().lookup("a@b")).code());

            reencrypt(other.resolve("server.p12"), otherPassword, store, password);
            Files.setLastModifiedTime(store, FileTime.from(Instant.now().plusSeconds(5)));
            // the store is looked at every 100 ms: a new connection is answered once it was read again
            RegistryException answer = await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(150))
                    .until(() -> assertThrows(RegistryException.class,
                            () -> RegistryClient.builder(url).security(client).build().lookup("a@b")),
                            a -> a.status() != 0);
            assertEquals(401, answer.status(), "a new connection gets the new certificate: " + answer);
            assertEquals("token refused: it is not a valid token of a trusted issuer",
                    answer.getMessage());
        }
    }

    /**
     * All a caller learns from a query showing {@code token}: the status, the WWW-Authenticate header and the
     * body.
     */
    private static String answer(Registry registry, String token) throws Exception {
        HttpClient client = HttpClient.newBuilder().sslContext(Tls.builder().trustStore(keys.resolve(
                "truststore.p12"), password).build().context()).build();
        HttpRequest query = HttpRequest.newBuilder(URI.create(registry.url() + Registry.API_PATH
                + "/query?sql=SELECT%20name%20FROM%20endpoints")).header("Authorization", "Bearer " + token)
                .timeout(Duration.ofSeconds(10)).build();
        HttpResponse<String> a = client.send(query, HttpResponse.BodyHandlers.ofString());
        return a.statusCode() + " " + a.headers().firstValue("WWW-Authenticate").orElse("-") + " " + a.body();
    }

    /** A token for alice to show the registry, signed with the key in {@code dir}, valid for an hour. */
    private static String aliceToken(Path dir) throws IOException {
        return SignedTokens.issue(SigningKey.read(dir.resolve("alice.key")), "alice", Security.REGISTRY_AUDIENCE,
                Instant.now().plusSeconds(3600));
    }

    @Test
    void aTokenAlteredInAnyPartIsRefused401WithoutSayingWhichPart() throws Exception {
        try (Registry registry = serve(Tls.ClientAuth.NONE)) {
            String token = aliceToken(keys);
            assertTrue(answer(registry, token).startsWith("200 "), "unaltered: " + answer(registry, token));
            Set<String> answers = new HashSet<>();
            for (AlteredTokens.Altered bad : AlteredTokens.of(token)) {
                answers.add(answer(registry, bad.token()));
            }
            assertEquals(Set.of("401 Bearer {\"error\":\"UNAUTHORIZED\",\"message\":\"token refused: it is not a"
                    + " valid token of a trusted issuer\"}"), answers, "one answer, whichever part was altered");
        }
    }

    /**
     * What {@code gma keys --rotate alice} and then {@code --retire alice:k1} do to the trust file reaches a
     * registry that runs on it: the new key is taken, the old one during the overlap, and not once retired.
     */
    @Test
    void aRunningRegistryTakesARotatedTrustFileAndRefusesARetiredKey() throws Exception {
        Path dir = temp.resolve("rotating");
        Files.createDirectories(dir);
        for (String file : new String[] {"alice.key", Keys.TRUST}) {
            Files.copy(keys.resolve(file), dir.resolve(file), StandardCopyOption.COPY_ATTRIBUTES);
        }
        Security security = Security.builder().tls(Tls.builder().keyStore(keys.resolve("server.p12"), password)
                .build()).trust(Security.trustFile(dir.resolve(Keys.TRUST), Duration.ofMillis(50)))
                .rules(Rules.parse(RULES, "test rules")).build();
        try (Registry registry = Registry.builder().port(0).security(security).build().start()) {
            String old = aliceToken(dir);
            assertTrue(answer(registry, old).startsWith("200 "), answer(registry, old));
            assertEquals("k2", Keys.rotate(dir, "alice", Duration.ofHours(1)));
            String rotated = aliceToken(dir);
            awaitAnswer(registry, rotated, "200 ");
            assertTrue(answer(registry, old).startsWith("200 "), "during the overlap: " + answer(registry, old));
            Keys.retire(dir, "alice", "k1");
            awaitAnswer(registry, old, "401 Bearer {\"error\":\"UNAUTHORIZED\",\"message\":\"token refused"
                    + " (UNKNOWN_KEY): key k1 of issuer \\\"alice\\\" is not trusted here");
            assertTrue(answer(registry, rotated).startsWith("200 "), answer(registry, rotated));
        }
    }

    /** Waits up to 10 s for the answer to a query showing {@code token} to start with {@code expected}. */
    private static void awaitAnswer(Registry registry, String token, String expected) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        String last = answer(registry, token);
        while (!last.startsWith(expected) && System.nanoTime() < deadline) {
            Thread.sleep(50);
            last = answer(registry, token);
        }
        assertTrue(last.startsWith(expected), "the trust file was not taken within 10 s: " + last);
    }

    /** Copies a PKCS12 store under another password (the server's store file keeps its password). */
    private static void reencrypt(Path from, char[] fromPassword, Path to, char[] toPassword)
            throws IOException, GeneralSecurityException {
        KeyStore in = KeyStore.getInstance("PKCS12");
        try (InputStream s = Files.newInputStream(from)) {
            in.load(s, fromPassword);
        }
        KeyStore out = KeyStore.getInstance("PKCS12");
        out.load(null, null);
        for (String alias : java.util.Collections.list(in.aliases())) {
            if (in.isKeyEntry(alias)) {
                Key key = in.getKey(alias, fromPassword);
                Certificate[] chain = in.getCertificateChain(alias);
                out.setKeyEntry(alias, key, toPassword, chain);
            } else {
                out.setCertificateEntry(alias, in.getCertificate(alias));
            }
        }
        Path part = to.resolveSibling(to.getFileName() + ".part");
        try (OutputStream s = Files.newOutputStream(part)) {
            out.store(s, toPassword);
        }
        Files.move(part, to, java.nio.file.StandardCopyOption.REPLACE_EXISTING,
                java.nio.file.StandardCopyOption.ATOMIC_MOVE);
    }
}
