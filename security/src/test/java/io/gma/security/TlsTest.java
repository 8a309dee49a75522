package io.gma.security;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.cert.Certificate;
import java.time.Duration;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLException;
import javax.net.ssl.SSLServerSocket;
import javax.net.ssl.SSLSocket;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** {@link Tls} for real: handshakes over loopback with stores in PKCS12 and PEM, client identities, reloads. */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class TlsTest {
    @TempDir
    static Path keys;
    @TempDir
    static Path foreign;
    static char[] pass;

    @BeforeAll
    static void makeKeys() throws IOException {
        Keys.make(keys, List.of("localhost", "127.0.0.1"), List.of("alice"));
        Keys.make(foreign, List.of("localhost", "127.0.0.1"), List.of("mallory"));
        pass = Files.readString(keys.resolve("store.pass")).strip().toCharArray();
    }

    private static Tls tls(Path dir, String keyStore, Tls.ClientAuth auth) throws IOException {
        char[] p = Files.readString(dir.resolve("store.pass")).strip().toCharArray();
        Tls.Builder b = Tls.builder().trustStore(dir.resolve("truststore.p12"), p).clientAuth(auth);
        if (keyStore != null) {
            b.keyStore(dir.resolve(keyStore), p);
        }
        return b.build();
    }

    /** Serves one handshake with {@code server}; answers the client certificate's identity (or "none"). */
    private static String handshake(Tls server, Tls client, String host) throws Exception {
        try (SSLServerSocket ss = (SSLServerSocket) server.context().getServerSocketFactory().createServerSocket(0,
                1, InetAddress.getLoopbackAddress())) {
            ss.setSSLParameters(server.serverEngine().getSSLParameters());
            CompletableFuture<String> seen = CompletableFuture.supplyAsync(() -> {
                try (SSLSocket s = (SSLSocket) ss.accept()) {
                    s.startHandshake();
                    String id = Tls.identity(s.getSession());
                    s.getOutputStream().write(1);
                    s.getOutputStream().flush();
                    return id == null ? "none" : id;
                } catch (IOException e) {
                    return "server failed: " + e.getMessage();
                }
            });
            // connected to the server, wherever it is; TLS told it is "host"
            Socket plain = new Socket(InetAddress.getLoopbackAddress(), ss.getLocalPort());
            try (SSLSocket s = (SSLSocket) client.socketFactory().createSocket(plain, host, ss.getLocalPort(), true)) {
                s.setSSLParameters(client.clientEngine(host, ss.getLocalPort()).getSSLParameters());
                s.startHandshake();
                assertEquals("TLSv1.3", s.getSession().getProtocol());
                assertEquals(1, s.getInputStream().read());
            }
            return seen.get(30, TimeUnit.SECONDS);
        }
    }

    @Test
    void pkcs12StoresHandshakeWithTls13AndTheClientCertificateNamesItsIdentity() throws Exception {
        Tls server = tls(keys, "server.p12", Tls.ClientAuth.NEED);
        assertEquals("alice", handshake(server, tls(keys, "client-alice.p12", Tls.ClientAuth.NONE), "localhost"));
        assertEquals("none", handshake(tls(keys, "server.p12", Tls.ClientAuth.NONE),
                tls(keys, null, Tls.ClientAuth.NONE), "127.0.0.1"));
    }

    @Test
    void aForeignCaAndAHostNameTheCertificateLacksAreRefused() throws Exception {
        Tls server = tls(keys, "server.p12", Tls.ClientAuth.NONE);
        assertThrows(SSLException.class, () -> handshake(server, tls(foreign, null, Tls.ClientAuth.NONE),
                "localhost"));
        Tls clientMallory = tls(foreign, "client-mallory.p12", Tls.ClientAuth.NONE);
        Tls needing = tls(keys, "server.p12", Tls.ClientAuth.NEED);
        // the server refuses the foreign client certificate (the client may see it as a reset or an alert)
        assertThrows(IOException.class, () -> handshake(needing, Tls.builder().keyStore(
                foreign.resolve("client-mallory.p12"), Files.readString(foreign.resolve("store.pass")).strip()
                        .toCharArray()).trustStore(keys.resolve("truststore.p12"), pass).build(), "localhost"));
        assertFalse(clientMallory.toString().contains(new String(pass)));
        // not among the certificate's names (localhost, 127.0.0.1)
        assertThrows(SSLException.class, () -> handshake(server, tls(keys, null, Tls.ClientAuth.NONE),
                "gma.example"));
    }

    @Test
    void pemChainAndKeyWorkLikeTheirStore() throws Exception {
        KeyStore ks = KeyStore.getInstance("PKCS12");
        try (InputStream in = Files.newInputStream(keys.resolve("client-alice.p12"))) {
            ks.load(in, pass);
        }
        StringBuilder chain = new StringBuilder();
        for (Certificate c : ks.getCertificateChain("client-alice")) {
            chain.append(pem("CERTIFICATE", c.getEncoded()));
        }
        PrivateKey key = (PrivateKey) ks.getKey("client-alice", pass);
        Path dir = Files.createTempDirectory(keys, "pem");
        Files.writeString(dir.resolve("alice.pem"), chain);
        Files.writeString(dir.resolve("alice.key"), pem("PRIVATE KEY", key.getEncoded()));
        Files.writeString(dir.resolve("ca.pem"), Files.readString(keys.resolve("ca.pem")));
        Files.setPosixFilePermissions(dir.resolve("alice.key"), java.nio.file.attribute.PosixFilePermissions
                .fromString("rw-r--r--"));
        IOException open = assertThrows(IOException.class, () -> Tls.builder().keyStoreFile(dir.resolve(
                "alice.pem"), new char[0]).build());
        assertEquals(dir.resolve("alice.key") + " holds a secret and is readable by every user of this machine"
                + " (rw-r--r--): make it private with chmod 600 " + dir.resolve("alice.key"), open.getMessage());
        KeyFiles.restrict(dir.resolve("alice.key"));

        Tls pemClient = Tls.builder().keyStoreFile(dir.resolve("alice.pem"), new char[0])
                .trustStoreFile(dir.resolve("ca.pem"), new char[0]).build();
        assertEquals("alice", handshake(tls(keys, "server.p12", Tls.ClientAuth.NEED), pemClient, "localhost"));

        KeyFiles.writeNew(dir.resolve("rsa.key"),
                "-----BEGIN RSA PRIVATE KEY-----\nAAAA\n-----END RSA PRIVATE KEY-----\n");
        IOException e = assertThrows(IOException.class, () -> Tls.builder().pem(dir.resolve("alice.pem"),
                dir.resolve("rsa.key")).build());
        assertTrue(e.getMessage().contains("openssl pkcs8"), e.getMessage());
    }

    private static String pem(String type, byte[] der) {
        return "-----BEGIN " + type + "-----\n" + Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII))
                .encodeToString(der) + "\n-----END " + type + "-----\n";
    }

    @Test
    void aReplacedTrustStoreTakesEffectForNewHandshakesWithoutRestart() throws Exception {
        Path dir = Files.createTempDirectory(keys, "reload");
        Path trust = dir.resolve("trust.p12");
        char[] foreignPass = Files.readString(foreign.resolve("store.pass")).strip().toCharArray();
        Files.copy(foreign.resolve("truststore.p12"), trust);
        Tls client = Tls.builder().trustStore(trust, foreignPass).reloadCheck(Duration.ZERO).build();
        Tls server = tls(keys, "server.p12", Tls.ClientAuth.NONE);
        assertThrows(SSLException.class, () -> handshake(server, client, "localhost"));

        // a half-written file is not taken: the previous trust stays in use
        Files.writeString(trust, "not a store");
        assertThrows(SSLException.class, () -> handshake(server, client, "localhost"));

        // the same password is kept: a store of ours re-saved under the foreign password
        KeyStore ks = KeyStore.getInstance("PKCS12");
        try (InputStream in = Files.newInputStream(keys.resolve("truststore.p12"))) {
            ks.load(in, pass);
        }
        Path next = dir.resolve("next.p12");
        try (var out = Files.newOutputStream(next)) {
            ks.store(out, foreignPass);
        }
        Files.move(next, trust, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        assertEquals("none", handshake(server, client, "localhost"));
    }

    @Test
    void clientCertificatesNeedATrustStoreOfTheirOwnCa() {
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> Tls.builder()
                .keyStore(keys.resolve("server.p12"), pass).clientAuth(Tls.ClientAuth.WANT).build());
        assertTrue(e.getMessage().contains("need a trust store"), e.getMessage());
    }

    @Test
    void aWrongPasswordNamesTheFileButNotThePassword() {
        IOException e = assertThrows(IOException.class, () -> Tls.builder()
                .keyStore(keys.resolve("server.p12"), "wrong-password-xyz".toCharArray()).build());
        assertTrue(e.getMessage().contains("server.p12"), e.getMessage());
        assertFalse(e.getMessage().contains("wrong-password-xyz"), e.getMessage());
    }
}
