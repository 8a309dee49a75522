package io.gma.client;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gma.internal.link.HandshakeAdmission;
import io.gma.security.Tls;
import io.gma.wire.Command;
import io.gma.wire.Message;
import io.gma.wire.Packed;
import io.gma.wire.StreamDecoder;
import io.gma.wire.WireCodec;
import java.io.IOException;
import java.net.BindException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * What a peer that has not authenticated can make an endpoint do: announce a large message (refused TOO_LARGE
 * before anything is allocated), hold connections (capped per address, the rest closed at once), stay
 * silent (closed at the deadline); each counted, and a legitimate peer served all the while.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class HandshakeLimitsTest {
    static final String RULES = "send alice *\nregister alice,bob *";
    static final String TOO_LARGE = "TOO_LARGE dataLength 16777216 exceeds 4096, the limit until the handshake is"
            + " over";

    /** The 20 bytes of a HELLO header from {@code from} announcing 16 MiB of data, and nothing after them. */
    static byte[] hugeHelloHeader(String from) {
        byte[] header = Packed.make(0, Command.HELLO, from, "", new byte[0]);
        ByteBuffer.wrap(header).putInt(16, 16 << 20);
        return java.util.Arrays.copyOf(header, 20);
    }

    /** Waits up to 15 s for the condition; {@code what} says what was missing. */
    static void await(BooleanSupplier condition, Supplier<String> what) {
        Awaitility.await().atMost(Duration.ofSeconds(15)).pollDelay(Duration.ZERO).pollInterval(Duration.ofMillis(10))
                .untilAsserted(() -> assertTrue(condition.getAsBoolean(), what));
    }

    private static int port(DirectFixture f, Consumer c) throws Exception {
        return f.portOf(c.name());
    }

    /** A producer in the fixture's domain sends one message to {@code c}, and it arrives. */
    private static void stillServes(Producer p, Consumer c, LinkedBlockingQueue<Incoming> inbox) throws Exception {
        p.send(c.name(), "welcome".getBytes(UTF_8)).acknowledged().get(15, TimeUnit.SECONDS);
        Incoming m = inbox.poll(10, TimeUnit.SECONDS);
        assertEquals("welcome", new String(m.data(), UTF_8));
    }

    private static void assertRefusedTooLarge(Socket s) throws IOException {
        s.getOutputStream().write(hugeHelloHeader("flood@lan"));
        s.getOutputStream().flush();
        List<Message> got = MisbehavingPeerTest.readUntilClosed(s, 5000);
        assertEquals(1, got.size(), got.toString());
        assertTrue(got.get(0) != null, "not closed");
        assertEquals(Command.ERROR, got.get(0).command());
        assertEquals(TOO_LARGE, got.get(0).dataAsString());
    }

    @Test
    void plaintextHelloAnnouncing16MiBIsRefusedTooLargeAndClosed() throws Exception {
        LinkedBlockingQueue<Incoming> inbox = new LinkedBlockingQueue<>();
        try (DirectFixture f = new DirectFixture();
                Consumer c = f.consumer("c").onMessage(inbox::add).build();
                Producer p = f.producer("p").build()) {
            try (Socket s = new Socket(InetAddress.getLoopbackAddress(), port(f, c))) {
                assertRefusedTooLarge(s);
            }
            await(() -> c.stats().handshakesTooLarge() == 1, () -> "not counted: " + c.stats());
            stillServes(p, c, inbox);
            assertEquals(0, c.stats().handshakesUnauthorized() + c.stats().handshakesMalformed()
                    + c.stats().handshakesTimedOut() + c.stats().connectionsOverCap(), c.stats().toString());
        }
    }

    @Test
    void tlsHelloAnnouncing16MiBIsRefusedTooLargeAndClosed() throws Exception {
        Path keys = TestKeys.main();
        LinkedBlockingQueue<Incoming> inbox = new LinkedBlockingQueue<>();
        try (DirectFixture f = new DirectFixture(keys);
                Consumer c = f.consumer("c").security(TestKeys.security(keys, "bob", RULES)).onMessage(inbox::add)
                        .build();
                Producer p = f.producer("p").security(TestKeys.security(keys, "alice", RULES)).build()) {
            Tls trustOnly = Tls.builder().trustStore(keys.resolve("truststore.p12"), SecureLinkTest.password(keys))
                    .build();
            try (javax.net.ssl.SSLSocket s = (javax.net.ssl.SSLSocket) trustOnly.socketFactory().createSocket(
                    "127.0.0.1", port(f, c))) {
                s.startHandshake();
                assertRefusedTooLarge(s);
            }
            await(() -> c.stats().handshakesTooLarge() == 1, () -> "not counted: " + c.stats());
            try (javax.net.ssl.SSLSocket s = (javax.net.ssl.SSLSocket) trustOnly.socketFactory().createSocket(
                    "127.0.0.1", port(f, c))) {
                s.startHandshake();
                s.getOutputStream().write(Packed.make(0, Command.HELLO, "anon@lan", "", new byte[0]));
                List<Message> got = MisbehavingPeerTest.readUntilClosed(s, 5000);
                assertTrue(got.get(0).dataAsString().startsWith("UNAUTHORIZED no credentials"), got.toString());
            }
            await(() -> c.stats().handshakesUnauthorized() == 1, () -> "not counted: " + c.stats());
            stillServes(p, c, inbox);
        }
    }

    /** A plaintext connection from {@code local}, or the test is skipped where that loopback address is not. */
    private static Socket from(InetAddress local, int port) throws IOException {
        Socket s = new Socket();
        try {
            s.bind(new InetSocketAddress(local, 0));
        } catch (BindException notHere) {
            s.close();
            Assumptions.abort("cannot bind " + local + " here: " + notHere.getMessage());
        }
        s.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 5000);
        return s;
    }

    @Test
    void connectionsOverTheCapOfAnAddressAreClosedAtOnceCountedAndAdmittedOnceTheOthersGo() throws Exception {
        HandshakeAdmission admission = HandshakeAdmission.process();
        int cap = admission.maxPerAddress();
        InetAddress crowd = InetAddress.getByName("127.0.0.66");
        LinkedBlockingQueue<Incoming> inbox = new LinkedBlockingQueue<>();
        List<Socket> silent = new ArrayList<>();
        try (DirectFixture f = new DirectFixture();
                Consumer c = f.consumer("c").onMessage(inbox::add).build();
                Producer p = f.producer("p").build()) {
            int port = port(f, c);
            try {
                for (int i = 0; i < cap; i++) {
                    silent.add(from(crowd, port));
                }
                await(() -> admission.pending(crowd) == cap, () -> admission.pending(crowd) + " pending of " + cap);
                for (int i = 0; i < 5; i++) {
                    try (Socket over = from(crowd, port)) {
                        long started = System.nanoTime();
                        List<Message> got = MisbehavingPeerTest.readUntilClosed(over, 2000);
                        long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
                        assertTrue(got.isEmpty(), "over the cap, yet " + got + " after " + millis + " ms");
                        assertTrue(millis < 1000, "closed after " + millis + " ms");
                    }
                }
                await(() -> c.stats().connectionsOverCap() == 5, () -> "counted: " + c.stats());
                // another address is not held up by this one's crowd
                stillServes(p, c, inbox);
            } finally {
                for (Socket s : silent) {
                    s.close();
                }
            }
            await(() -> admission.pending(crowd) == 0, () -> admission.pending(crowd) + " still pending");
            try (Socket again = from(crowd, port)) {
                again.getOutputStream().write(Packed.make(0, Command.HELLO, "again@lan", "", new byte[0]));
                again.setSoTimeout(5000);
                StreamDecoder decoder = WireCodec.standard().newStreamDecoder();
                List<Message> got = new ArrayList<>();
                byte[] buf = new byte[1024];
                while (got.isEmpty()) {
                    int n = again.getInputStream().read(buf);
                    assertTrue(n > 0, "closed: not admitted");
                    decoder.feed(buf, 0, n, got::add);
                }
                assertEquals(Command.WELCOME, got.get(0).command());
            }
            assertEquals(5, c.stats().connectionsOverCap());
        }
    }

    @Test
    void silentConnectionsAreClosedAtTheDeadlineAndCounted() throws Exception {
        try (DirectFixture f = new DirectFixture();
                Consumer c = f.consumer("c").build();
                Socket s = new Socket(InetAddress.getLoopbackAddress(), port(f, c))) {
            long started = System.nanoTime();
            List<Message> got = MisbehavingPeerTest.readUntilClosed(s, 10_000);
            long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
            assertTrue(got.isEmpty(), got.toString());
            assertTrue(millis >= 4000 && millis < 8000, "closed after " + millis + " ms");
            await(() -> c.stats().handshakesTimedOut() == 1, () -> "counted: " + c.stats());
        }
    }

    @Test
    void anEndpointRefusedOverTheCapRetriesWithItsBackOffAndGetsThrough() throws Exception {
        HandshakeAdmission admission = HandshakeAdmission.process();
        InetAddress loopback = InetAddress.getByName("127.0.0.1");
        LinkedBlockingQueue<Incoming> inbox = new LinkedBlockingQueue<>();
        List<Socket> silent = new ArrayList<>();
        try (DirectFixture f = new DirectFixture();
                Consumer c = f.consumer("c").onMessage(inbox::add).build();
                Producer p = f.producer("p").build()) {
            int port = port(f, c);
            Sent sent;
            try {
                // the producer's connections come from 127.0.0.1 too: fill that address's cap first
                while (admission.pending(loopback) < admission.maxPerAddress()) {
                    silent.add(from(loopback, port));
                    int opened = silent.size();
                    await(() -> admission.pending(loopback) >= Math.min(opened, admission.maxPerAddress())
                            || c.stats().connectionsOverCap() > 0, () -> "not accepted");
                }
                long refusedBefore = c.stats().connectionsOverCap();
                sent = p.send(c.name(), "through at last".getBytes(UTF_8));
                await(() -> c.stats().connectionsOverCap() >= refusedBefore + 2,
                        () -> "the producer did not try again: " + c.stats());
                assertTrue(!sent.acknowledged().isDone(), "delivered over the cap");
            } finally {
                for (Socket s : silent) {
                    s.close();
                }
            }
            sent.acknowledged().get(15, TimeUnit.SECONDS);
            assertEquals("through at last", new String(inbox.poll(10, TimeUnit.SECONDS).data(), UTF_8));
        }
    }
}
