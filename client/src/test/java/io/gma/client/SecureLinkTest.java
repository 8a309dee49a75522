package io.gma.client;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gma.internal.link.Link;
import io.gma.registry.api.RegistryClient;
import io.gma.security.Rules;
import io.gma.security.Security;
import io.gma.security.SignedTokens;
import io.gma.security.SigningKey;
import io.gma.security.Tls;
import io.gma.wire.Command;
import io.gma.wire.ErrorCode;
import io.gma.wire.Message;
import io.gma.wire.Packed;
import java.io.IOException;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLSocket;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Every way a link can be refused, each with its documented code and sentence, nothing delivered, and the
 * endpoint serving a good client afterwards.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class SecureLinkTest {
    static final String RULES = "send alice *\nregister alice *";
    private final Path keys = TestKeys.main();
    private final LinkedBlockingQueue<Incoming> delivered = new LinkedBlockingQueue<>();
    private DirectFixture fixture;
    private Consumer inbox;
    private Producer good;

    @BeforeEach
    void start() throws Exception {
        fixture = new DirectFixture(keys);
        inbox = fixture.consumer("inbox").security(TestKeys.security(keys, "alice", RULES))
                .onMessage(delivered::add).build();
    }

    @AfterEach
    void stop() throws Exception {
        if (good != null) {
            good.close();
        }
        inbox.close();
        fixture.close();
    }

    /**
     * A client showing {@code token} in HELLO, with alice's certificate for TLS (and a good token for the
     * registry, where it registers).
     */
    private Producer withToken(String label, String token) throws Exception {
        String forRegistry = validToken(Security.REGISTRY_AUDIENCE, Instant.now().plus(Duration.ofMinutes(10)));
        return fixture.producer(label).security(TestKeys.builder(keys, "alice", Tls.ClientAuth.WANT).tokens(
                audience -> audience.equals(Security.REGISTRY_AUDIENCE) ? forRegistry : token)
                .rules(Rules.parse(RULES, "test rules")).build()).build();
    }

    /** Alice's signed token for {@code audience}, expiring at {@code expiry}. */
    private String validToken(String audience, Instant expiry) throws IOException {
        return SignedTokens.issue(SigningKey.read(keys.resolve("alice.key")), "alice", audience, expiry);
    }

    /** The send fails with {@code code} and a message holding {@code sentence}; nothing reaches the inbox. */
    private void refused(Producer p, ErrorCode code, String sentence) throws Exception {
        try (p) {
            Probes.refused(p, inbox.name(), code, sentence);
        }
        assertNull(delivered.poll(200, TimeUnit.MILLISECONDS));
    }

    /** A good client (alice's token) still gets through, and only its message arrives. */
    private void stillServes() throws Exception {
        if (good == null) {
            good = fixture.producer("good").security(TestKeys.security(keys, "alice", RULES)).build();
        }
        good.send(inbox.name(), "welcome".getBytes(UTF_8)).acknowledged().get(10, TimeUnit.SECONDS);
        Incoming m = delivered.poll(10, TimeUnit.SECONDS);
        assertEquals("welcome", new String(m.data(), UTF_8));
        assertEquals(good.name(), m.from());
        assertNull(delivered.poll(100, TimeUnit.MILLISECONDS));
    }

    private int inboxPort() throws Exception {
        return RegistryClient.builder(fixture.registryUrl()).security(TestKeys.security(keys, "alice", RULES)).build()
                .lookup(inbox.name()).port();
    }

    @Test
    void goodTokenIsAccepted() throws Exception {
        stillServes();
    }

    /** Large messages, read straight into their arrays past the first read, arrive whole over TLS among small ones. */
    @Test
    void largeMessagesArriveWholeOverTls() throws Exception {
        stillServes();
        java.util.Random random = new java.util.Random(11);
        int[] sizes = {1 << 20, 5, 300_000, 65_537, 16_000, 700_001};
        List<byte[]> sent = new java.util.ArrayList<>();
        for (int size : sizes) {
            byte[] data = new byte[size];
            random.nextBytes(data);
            sent.add(data);
            good.send(inbox.name(), data);
        }
        for (byte[] data : sent) {
            Incoming m = delivered.poll(10, TimeUnit.SECONDS);
            assertEquals(data.length, m.data().length);
            assertTrue(java.util.Arrays.equals(data, m.data()), "a message of " + data.length + " bytes changed");
        }
        assertNull(delivered.poll(100, TimeUnit.MILLISECONDS));
    }

    @Test
    void garbageTokenIsUnauthorized() throws Exception {
        refused(withToken("garbage", "not-a-token"), ErrorCode.UNAUTHORIZED,
                "refused the link: UNAUTHORIZED token refused: it is not a valid token of a trusted issuer");
        stillServes();
    }

    @Test
    void refusedTlsClientsCostTheLoopThatRefusesThemNoSpinning() throws Exception {
        // a refusal closes the link after its ERROR, and the goodbye writes TLS's close_notify and waits for the
        // peer to close: it must not spin its loop for the 200 ms the goodbye may last (a flood of refused
        // clients would keep the loop busy)
        java.lang.management.ThreadMXBean threads = java.lang.management.ManagementFactory.getThreadMXBean();
        java.util.function.LongSupplier loopCpu = () -> Thread.getAllStackTraces().keySet().stream()
                .filter(t -> t.getName().startsWith("gma-inbox-link"))
                .mapToLong(t -> Math.max(0, threads.getThreadCpuTime(t.getId()))).sum();
        stillServes(); // the loop is up, and warm
        long before = loopCpu.getAsLong();
        for (int i = 0; i < 5; i++) {
            refused(withToken("garbage" + i, "not-a-token"), ErrorCode.UNAUTHORIZED, "UNAUTHORIZED token refused");
        }
        Thread.sleep(300); // every refused link's goodbye is over by now: 200 ms at most
        long cpuMillis = (loopCpu.getAsLong() - before) / 1_000_000;
        assertTrue(cpuMillis < 250, "the inbox's loop spent " + cpuMillis + " ms of CPU on 5 refusals");
        stillServes();
    }

    @Test
    void expiredTokenIsUnauthorized() throws Exception {
        String expired = validToken(inbox.name(), Instant.now().minus(Duration.ofMinutes(110)));
        refused(withToken("expired", expired), ErrorCode.UNAUTHORIZED,
                "UNAUTHORIZED token refused (EXPIRED): the token expired at ");
        stillServes();
    }

    @Test
    void tamperedTokenIsUnauthorized() throws Exception {
        // alice's token, its subject edited to say bob: the signature no longer matches
        String[] part = validToken(inbox.name(), Instant.now().plus(Duration.ofMinutes(10))).split("\\.");
        part[3] = java.util.Base64.getUrlEncoder().withoutPadding().encodeToString("bob".getBytes(UTF_8));
        refused(withToken("tampered", String.join(".", part)), ErrorCode.UNAUTHORIZED,
                "UNAUTHORIZED token refused: it is not a valid token of a trusted issuer");
        stillServes();
    }

    @Test
    void tokenOfAnotherKeyIdIsUnauthorized() throws Exception {
        String other = SignedTokens.issue(SigningKey.generate("alice", "k9"), "alice", inbox.name(),
                Instant.now().plus(Duration.ofMinutes(10)));
        refused(withToken("otherkey", other), ErrorCode.UNAUTHORIZED, "UNAUTHORIZED token refused (UNKNOWN_KEY): key"
                + " k9 of issuer \"alice\" is not trusted here (not in the trust file, or past its until)");
        stillServes();
    }

    @Test
    void tokenReplayedAfterItsExpiryIsUnauthorized() throws Exception {
        // valid for about 6 s more: it expired 54 s ago, and the clock skew allowed is 60 s
        String token = validToken(inbox.name(), Instant.now().minusSeconds(54));
        long validUntil = System.nanoTime() + TimeUnit.SECONDS.toNanos(6);
        try (Producer first = withToken("first", token)) {
            first.send(inbox.name(), "in time".getBytes(UTF_8)).acknowledged().get(5, TimeUnit.SECONDS);
            assertEquals("in time", new String(delivered.poll(5, TimeUnit.SECONDS).data(), UTF_8));
        }
        // a deliberate pause, not a wait: the token must lapse, and 1.5 s more pass
        Thread.sleep(Math.max(0, TimeUnit.NANOSECONDS.toMillis(validUntil - System.nanoTime())) + 1500);
        refused(withToken("replay", token), ErrorCode.UNAUTHORIZED, "UNAUTHORIZED token refused (EXPIRED)");
        stillServes();
    }

    @Test
    void noCredentialsAtAllIsUnauthorized() throws Exception {
        // TLS with the right CA, but no token in HELLO and no client certificate
        Tls trustOnly = Tls.builder().trustStore(keys.resolve("truststore.p12"), password(keys)).build();
        try (SSLSocket s = (SSLSocket) trustOnly.socketFactory().createSocket("127.0.0.1", inboxPort())) {
            s.startHandshake();
            s.getOutputStream().write(Packed.make(0, Command.HELLO, "anon-aaaaaa@lan", "", new byte[0]));
            s.getOutputStream().write(Packed.make(1, Command.DATA, "anon-aaaaaa@lan", inbox.name(), new byte[1]));
            List<Message> answer = MisbehavingPeerTest.readUntilClosed(s, 5000);
            assertEquals(1, answer.size(), answer.toString());
            assertEquals("UNAUTHORIZED no credentials: send 'Bearer <token>' or a client certificate",
                    answer.get(0).dataAsString());
        }
        assertNull(delivered.poll(200, TimeUnit.MILLISECONDS));
        stillServes();
    }

    /** Registers {@code name}, an endpoint listening on {@code port} here, in {@code registry} too, exactly. */
    private static void mirror(RegistryClient registry, String name, int port) throws Exception {
        registry.register(io.gma.registry.api.Registration.builder(io.gma.registry.api.Kind.CONSUMER, name.substring(0,
                name.lastIndexOf('@')), name.substring(name.lastIndexOf('@') + 1)).exact(true).host("127.0.0.1")
                .port(port).build());
    }

    /** Alice's token for the registry, and no credential for anyone else. */
    private java.util.function.Function<String, String> registryOnly() throws IOException {
        String forRegistry = validToken(Security.REGISTRY_AUDIENCE, Instant.now().plus(Duration.ofMinutes(10)));
        return audience -> audience.equals(Security.REGISTRY_AUDIENCE) ? forRegistry : null;
    }

    static char[] password(Path dir) throws IOException {
        return Files.readString(dir.resolve("store.pass"), UTF_8).strip().toCharArray();
    }

    @Test
    void serverCertificateOfAnotherCaIsRefused() throws Exception {
        LinkedBlockingQueue<Incoming> atForeign = new LinkedBlockingQueue<>();
        // it serves a certificate of another CA; it reaches the registry with the test CA's trust and alice's token
        Path other = TestKeys.foreign();
        Security foreignSide = Security.builder().tls(Tls.builder().keyStore(other.resolve("server.p12"),
                password(other)).trustStore(keys.resolve("truststore.p12"), password(keys)).build())
                .tokens(registryOnly()).rules(Rules.parse("send * *", "test rules")).build();
        // a registry that asks for no client certificate: this one's would be refused there too
        try (io.gma.registry.Registry registry = TestKeys.registry(keys, "127.0.0.1", Tls.ClientAuth.NONE);
                DirectFixture fixture = new DirectFixture(registry, keys);
                Consumer foreign = fixture.consumer("foreign").security(foreignSide).onMessage(atForeign::add).build();
                Producer alice = fixture.producer("alice").security(TestKeys.security(keys, "alice", RULES))
                        .build()) {
            EndpointException e = Probes.refused(alice, foreign.name(), ErrorCode.UNAUTHORIZED, "TLS with "
                    + foreign.name() + " failed: ");
            assertTrue(e.getMessage().contains("PKIX path"), e.getMessage());
            assertNull(atForeign.poll(200, TimeUnit.MILLISECONDS));
        }
        stillServes();
    }

    @Test
    void clientCertificateOfAnotherCaIsRefusedByMutualTls() throws Exception {
        LinkedBlockingQueue<Incoming> atStrict = new LinkedBlockingQueue<>();
        Path foreign = TestKeys.foreign();
        Tls foreignCert = Tls.builder().keyStore(foreign.resolve("server.p12"), password(foreign))
                .trustStore(keys.resolve("truststore.p12"), password(keys)).clientAuth(Tls.ClientAuth.WANT).build();
        try (io.gma.registry.Registry registry = TestKeys.registry(keys, "127.0.0.1", Tls.ClientAuth.NONE);
                DirectFixture fixture = new DirectFixture(registry, keys);
                Consumer strict = fixture.consumer("strict").security(TestKeys.builder(keys, "alice",
                Tls.ClientAuth.NEED).rules(Rules.parse("send * *\nregister * *", "test rules")).build())
                .onMessage(atStrict::add).build();
                Producer stranger = fixture.producer("stranger").security(Security.builder().tls(foreignCert)
                        .tokens(registryOnly()).build()).build()) {
            Probes.refused(stranger, strict.name(), ErrorCode.UNAUTHORIZED, "TLS with " + strict.name()
                    + " failed: ");
            assertNull(atStrict.poll(200, TimeUnit.MILLISECONDS));
        }
        stillServes();
    }

    @Test
    void certificateNotNamingTheRegisteredHostIsRefused() throws Exception {
        Path localhostOnly = TestKeys.localhostOnly();
        Security sec = TestKeys.security(localhostOnly, "alice", "send * *\nregister * *");
        LinkedBlockingQueue<Incoming> at = new LinkedBlockingQueue<>();
        // a registry of that CA, by the name its certificate holds; endpoints show the certificate to it
        try (io.gma.registry.Registry registry = TestKeys.registry(localhostOnly, "localhost");
                DirectFixture fixture = new DirectFixture(registry, localhostOnly);
                Consumer byIp = fixture.consumer("byip").security(sec).onMessage(at::add).build();
                Consumer byName = fixture.consumer("byname").host("localhost").security(sec).onMessage(at::add)
                        .build();
                Producer client = fixture.producer("client").security(sec).build()) {
            // registered as 127.0.0.1, which its certificate does not name
            EndpointException e = Probes.refused(client, byIp.name(), ErrorCode.UNAUTHORIZED, "TLS with "
                    + byIp.name() + " failed: ");
            assertTrue(e.getMessage().contains("127.0.0.1"), e.getMessage());
            assertNull(at.poll(200, TimeUnit.MILLISECONDS));
            // the same certificate, registered as localhost: accepted
            client.send(byName.name(), "by name".getBytes(UTF_8)).acknowledged().get(10, TimeUnit.SECONDS);
            assertEquals("by name", new String(at.poll(10, TimeUnit.SECONDS).data(), UTF_8));
        }
        stillServes();
    }

    @Test
    void plaintextHelloToTlsPortGetsUnauthorizedInPlaintext() throws Exception {
        try (Socket s = new Socket("127.0.0.1", inboxPort())) {
            s.getOutputStream().write(Packed.make(0, Command.HELLO, "plain-aaaaaa@lan", "", new byte[0]));
            List<Message> answer = MisbehavingPeerTest.readUntilClosed(s, 5000);
            assertEquals(1, answer.size(), answer.toString());
            assertEquals(Command.ERROR, answer.get(0).command());
            assertEquals("UNAUTHORIZED this port speaks TLS: connect with TLS", answer.get(0).dataAsString());
        }
        // a plaintext endpoint finds the inbox in a plaintext registry of its own
        try (DirectFixture plain = new DirectFixture()) {
            mirror(RegistryClient.create(plain.registryUrl()), inbox.name(), inboxPort());
            refused(plain.producer("plain").build(), ErrorCode.UNAUTHORIZED,
                    "refused the link: UNAUTHORIZED this port speaks TLS: connect with TLS");
        }
        stillServes();
    }

    @Test
    void tlsToPlaintextPortFailsNamingThePeer() throws Exception {
        LinkedBlockingQueue<Incoming> atPlain = new LinkedBlockingQueue<>();
        try (DirectFixture plainFixture = new DirectFixture();
                Consumer plain = plainFixture.consumer("plain").onMessage(atPlain::add).build();
                Producer alice = fixture.producer("alice").security(TestKeys.security(keys, "alice", RULES))
                        .build()) {
            mirror(RegistryClient.builder(fixture.registryUrl()).security(TestKeys.security(keys, "alice", RULES))
                    .build(), plain.name(), RegistryClient.create(plainFixture.registryUrl()).lookup(plain.name())
                    .port());
            Probes.refused(alice, plain.name(), ErrorCode.UNAUTHORIZED, plain.name() + " answered in plaintext GMA:"
                    + " it does not speak TLS");
            assertNull(atPlain.poll(200, TimeUnit.MILLISECONDS));
        }
        stillServes();
    }

    @Test
    void silentAndSlowHandshakesAreClosedWithoutHoldingOthersUp() throws Exception {
        try (Socket silent = new Socket("127.0.0.1", inboxPort());
                Socket slow = new Socket("127.0.0.1", inboxPort())) {
            long connected = System.nanoTime();
            // the start of a TLS record header, then nothing
            slow.getOutputStream().write(new byte[] {0x16, 0x03, 0x01});
            stillServes(); // meanwhile, others get through at once
            assertTrue(System.nanoTime() - connected < Link.HANDSHAKE_NANOS, "a good client waited");
            for (Socket s : List.of(silent, slow)) {
                assertTrue(MisbehavingPeerTest.readUntilClosed(s, (int) TimeUnit.NANOSECONDS.toMillis(
                        Link.HANDSHAKE_NANOS) + 3000).isEmpty(), "still open, or answered");
            }
            long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - connected);
            assertTrue(millis < TimeUnit.NANOSECONDS.toMillis(Link.HANDSHAKE_NANOS) + 2500, millis + " ms");
        }
        stillServes();
    }
}
