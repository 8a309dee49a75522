package io.gma.security;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.cert.X509Certificate;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLHandshakeException;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLServerSocket;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.TrustManagerFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** The files of {@link Keys#make}, used for real: a TLS handshake with hostname check and client certificates. */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class KeysTest {
    @TempDir
    Path dir;

    private char[] pass() throws Exception {
        return Files.readString(dir.resolve("store.pass")).strip().toCharArray();
    }

    private KeyStore load(String file) throws Exception {
        KeyStore ks = KeyStore.getInstance("PKCS12");
        try (InputStream in = Files.newInputStream(dir.resolve(file))) {
            ks.load(in, pass());
        }
        return ks;
    }

    private SSLContext context(String keys, String trust) throws Exception {
        KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
        if (keys != null) {
            kmf.init(load(keys), pass());
        }
        TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        tmf.init(load(trust));
        SSLContext ctx = SSLContext.getInstance("TLSv1.3");
        ctx.init(keys != null ? kmf.getKeyManagers() : null, tmf.getTrustManagers(), null);
        return ctx;
    }

    @Test
    void makesACaAServerAndClientsThatHandshakeWithHostnameCheckAndMutualTls() throws Exception {
        List<Path> files = Keys.make(dir, List.of("localhost", "127.0.0.1"), List.of("alice"));
        for (String name : new String[] {"store.pass", "alice.key", "trust", "ca.p12", "ca.pem", "truststore.p12",
            "server.p12", "client-alice.p12"}) {
            assertTrue(files.contains(dir.resolve(name)), name + " in " + files);
        }
        assertTrue(Files.notExists(dir.resolve("domain.keys")), "no shared HMAC secret unless asked for");
        SigningKey alice = SigningKey.read(dir.resolve("alice.key"));
        assertEquals("alice", alice.issuer());
        assertEquals("k1", alice.keyId());
        assertTrue(Trust.read(dir.resolve("trust")).vouches("alice", "alice"));
        assertTrue(!Trust.read(dir.resolve("trust")).vouches("alice", "bob"), "a key vouches for its holder only");
        for (String secret : new String[] {"store.pass", "alice.key", "ca.p12", "server.p12", "client-alice.p12"}) {
            assertEquals("rw-------", java.nio.file.attribute.PosixFilePermissions.toString(
                    Files.getPosixFilePermissions(dir.resolve(secret))), secret);
        }

        KeyStore server = load("server.p12");
        X509Certificate leaf = (X509Certificate) server.getCertificate("server");
        X509Certificate ca = (X509Certificate) load("truststore.p12").getCertificate("ca");
        leaf.verify(ca.getPublicKey()); // signed by the CA
        assertEquals("CN=localhost", leaf.getSubjectX500Principal().getName());
        assertTrue(leaf.getSubjectAlternativeNames().toString().contains("127.0.0.1"),
                leaf.getSubjectAlternativeNames().toString());
        assertTrue(leaf.getExtendedKeyUsage().contains("1.3.6.1.5.5.7.3.1"), "serverAuth");

        // mutual TLS, the client checking the server's name
        try (SSLServerSocket listen = (SSLServerSocket) context("server.p12", "truststore.p12")
                .getServerSocketFactory().createServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            listen.setNeedClientAuth(true);
            CompletableFuture<String> peer = CompletableFuture.supplyAsync(() -> {
                try (SSLSocket s = (SSLSocket) listen.accept()) {
                    s.startHandshake();
                    OutputStream out = s.getOutputStream();
                    out.write(1);
                    out.flush();
                    return s.getSession().getPeerPrincipal().getName();
                } catch (Exception e) {
                    return "failed: " + e;
                }
            });
            try (SSLSocket c = (SSLSocket) context("client-alice.p12", "truststore.p12").getSocketFactory()
                    .createSocket("localhost", listen.getLocalPort())) {
                SSLParameters p = c.getSSLParameters();
                p.setEndpointIdentificationAlgorithm("HTTPS");
                c.setSSLParameters(p);
                c.startHandshake();
                assertEquals(1, c.getInputStream().read());
            }
            assertEquals("CN=alice", peer.get(30, TimeUnit.SECONDS));
        }
    }

    @Test
    void aCertificateOfAnotherCaIsRefused(@TempDir Path other) throws Exception {
        Keys.make(dir, List.of("localhost"), List.of());
        Keys.make(other, List.of("localhost"), List.of());
        KeyStore foreignTrust = KeyStore.getInstance("PKCS12");
        try (InputStream in = Files.newInputStream(other.resolve("truststore.p12"))) {
            foreignTrust.load(in, Files.readString(other.resolve("store.pass")).strip().toCharArray());
        }
        TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        tmf.init(foreignTrust);
        SSLContext client = SSLContext.getInstance("TLSv1.3");
        client.init(null, tmf.getTrustManagers(), null);
        try (SSLServerSocket listen = (SSLServerSocket) context("server.p12", "truststore.p12")
                .getServerSocketFactory().createServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            CompletableFuture.runAsync(() -> {
                try (SSLSocket s = (SSLSocket) listen.accept()) {
                    s.startHandshake();
                } catch (Exception expected) {
                    // the client gives up
                }
            });
            try (SSLSocket c = (SSLSocket) client.getSocketFactory().createSocket("localhost", listen.getLocalPort())) {
                assertThrows(SSLHandshakeException.class, c::startHandshake);
            }
        }
        assertThrows(java.io.IOException.class, () -> Keys.make(dir, List.of("localhost"), List.of()),
                "existing files are not overwritten");
    }
}
