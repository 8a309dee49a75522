package io.gma.client;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gma.internal.link.HandshakeAdmission;
import io.gma.registry.api.EndpointInfo;
import io.gma.registry.api.Kind;
import io.gma.registry.api.Registration;
import io.gma.registry.api.RegistryClient;
import io.gma.wire.Command;
import io.gma.wire.Message;
import io.gma.wire.Packed;
import io.gma.wire.StreamDecoder;
import io.gma.wire.Threads;
import io.gma.wire.WireCodec;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Peers that hang or send garbage: the endpoint notices, closes that connection, and serves the others. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class MisbehavingPeerTest {

    /** Reads whole messages from a raw socket until it closes or the timeout passes. */
    static List<Message> readUntilClosed(Socket s, int timeoutMillis) throws IOException {
        s.setSoTimeout(timeoutMillis);
        List<Message> got = new ArrayList<>();
        StreamDecoder decoder = WireCodec.standard().newStreamDecoder();
        byte[] buf = new byte[8192];
        InputStream in = s.getInputStream();
        try {
            for (int n; (n = in.read(buf)) >= 0;) {
                decoder.feed(buf, 0, n, got::add);
            }
        } catch (SocketTimeoutException stillOpen) {
            got.add(null); // marks "not closed"
        } catch (IOException reset) {
            // closed with our bytes unread (the peer's kernel answers with a reset rather than an end of stream),
            // or TLS ended without close_notify: closed all the same
        }
        return got;
    }

    private static Socket rawTo(RegistryClient registry, String name) throws IOException {
        EndpointInfo info = registry.lookup(name);
        return new Socket(info.host(), info.port());
    }

    @Test
    void hungPeerIsDeclaredDeadWithinThreePingIntervals() throws Exception {
        long ping = 200;
        try (DirectFixture f = new DirectFixture();
                ServerSocket hung = new ServerSocket(0, 5, InetAddress.getLoopbackAddress());
                Producer p = f.producer("p").pingInterval(Duration.ofMillis(ping)).build()) {
            RegistryClient registry = RegistryClient.create(f.registryUrl());
            String name = registry.register(Registration.builder(Kind.CONSUMER, "hung", "lan").port(hung.getLocalPort())
                    .build()).name();
            p.send(name, "hello?".getBytes(UTF_8));
            try (Socket s = hung.accept()) {
                // answer the handshake, then neither read nor answer: the connection stays open
                OutputStream out = s.getOutputStream();
                out.write(Packed.make(0, Command.WELCOME, name, p.name(), new byte[0]));
                long welcomed = System.nanoTime();
                // declared dead within three ping intervals: read until it closes, 1 s more at most between reads
                List<Message> got = readUntilClosed(s, (int) (3 * ping + 400) + 1000);
                long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - welcomed);
                assertTrue(got.isEmpty() || got.get(got.size() - 1) != null, "still open after " + millis + " ms");
                assertTrue(got.stream().anyMatch(m -> m != null && m.command() == Command.PING), got.toString());
            }
        }
    }

    @Test
    void garbageGetsErrorAndCloseWhileOthersCarryOn() throws Exception {
        try (DirectFixture f = new DirectFixture();
                Producer echo = f.producer("echo").onMessage(m -> m.reply(m.data())).build();
                Consumer c = f.consumer("c").build()) {
            RegistryClient registry = RegistryClient.create(f.registryUrl());
            c.request(echo.name(), new byte[] {1}, Duration.ofSeconds(10));

            try (Socket garbage = rawTo(registry, echo.name())) {
                garbage.getOutputStream().write("GET / HTTP/1.1\r\nHost: x\r\n\r\n".getBytes(UTF_8));
                List<Message> got = readUntilClosed(garbage, 5000);
                assertTrue(!got.isEmpty() && got.get(got.size() - 1) != null, "not closed: " + got);
                assertEquals(Command.ERROR, got.get(0).command());
                assertTrue(got.get(0).dataAsString().startsWith("MALFORMED magic 0x4745"), got.get(0).dataAsString());
            }

            try (Socket huge = rawTo(registry, echo.name())) {
                OutputStream out = huge.getOutputStream();
                out.write(Packed.make(0, Command.HELLO, "raw@lan", "", new byte[0]));
                byte[] header = Packed.make(1, Command.DATA, "raw@lan", echo.name(), new byte[0]);
                ByteBuffer.wrap(header).putInt(16, Integer.MAX_VALUE);
                out.write(header, 0, 20);
                List<Message> got = readUntilClosed(huge, 5000);
                assertTrue(!got.isEmpty() && got.get(got.size() - 1) != null, "not closed: " + got);
                Message error = got.stream().filter(m -> m.command() == Command.ERROR).findFirst().orElseThrow();
                assertEquals("TOO_LARGE dataLength 2147483647 exceeds maxMessageBytes 16777216",
                        error.dataAsString());
            }

            try (Socket truncated = rawTo(registry, echo.name())) {
                OutputStream out = truncated.getOutputStream();
                out.write(Packed.make(0, Command.HELLO, "raw2@lan", "", new byte[0]));
                byte[] m = Packed.make(1, Command.DATA, "raw2@lan", echo.name(), new byte[100]);
                out.write(m, 0, 60);
                out.flush();
                truncated.shutdownOutput();
                List<Message> got = readUntilClosed(truncated, 5000);
                assertTrue(!got.isEmpty() && got.get(got.size() - 1) != null, "not closed: " + got);
            }

            try (Socket noHello = rawTo(registry, echo.name())) {
                noHello.getOutputStream().write(Packed.make(1, Command.DATA, "raw3@lan", echo.name(), new byte[1]));
                List<Message> got = readUntilClosed(noHello, 5000);
                assertEquals("MALFORMED expected HELLO first, got DATA", got.get(0).dataAsString());
            }

            // the endpoint still serves its real peers
            assertArrayEquals(new byte[] {2}, c.request(echo.name(), new byte[] {2}, Duration.ofSeconds(10)));
        }
    }

    @Test
    void peerThatHangsUpAtOnceIsRetriedWithBackOffNotStormed() throws Exception {
        java.util.concurrent.atomic.AtomicInteger accepted = new java.util.concurrent.atomic.AtomicInteger();
        try (DirectFixture f = new DirectFixture();
                ServerSocket bad = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
                Producer p = f.producer("p").fullQueuePolicy(FullQueuePolicy.FAIL).build()) {
            Threads.start("bad-peer-accept", () -> {
                try {
                    while (true) {
                        bad.accept().close();
                        accepted.incrementAndGet();
                    }
                } catch (IOException closed) {
                    // the test is over
                }
            });
            RegistryClient registry = RegistryClient.create(f.registryUrl());
            String name = registry.register(Registration.builder(Kind.CONSUMER, "bad", "lan")
                    .port(bad.getLocalPort()).build()).name();
            long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(2);
            while (System.nanoTime() < end) {
                try {
                    p.send(name, new byte[1]);
                } catch (EndpointException full) {
                    // the queue filled: the peer never takes anything
                }
                Thread.sleep(1); // a deliberate pause, not a wait: sends spread over the 2 s
            }
            int during = accepted.get();
            // the next 2 s, a window on purpose: the back-off leaves the peer all but alone all the while
            await().pollDelay(Duration.ZERO).during(Duration.ofSeconds(2)).atMost(Duration.ofSeconds(3))
                    .until(() -> accepted.get() - during <= 4);
            int idle = accepted.get() - during;
            // back-off 50 ms doubling to 5 s: about 7 attempts in 2 s; one per send would be hundreds
            assertTrue(during <= 12, during + " connections in 2 s of sending");
            assertTrue(idle <= 4, idle + " connections in the next 2 s");
            assertTrue(p.core().timerTasks() < 5, p.core().timerTasks() + " timer tasks");
        }
    }

    @Test
    void pingFloodFromAPeerThatNeverReadsIsCutOff() throws Exception {
        try (DirectFixture f = new DirectFixture();
                Producer p = f.producer("p").build()) {
            RegistryClient registry = RegistryClient.create(f.registryUrl());
            try (Socket s = rawTo(registry, p.name())) {
                s.setReceiveBufferSize(4096);
                OutputStream out = s.getOutputStream();
                out.write(Packed.make(0, Command.HELLO, "flood@lan", "", new byte[0]));
                byte[] ping = Packed.make(0, Command.PING, "flood@lan", p.name(), new byte[1 << 20]);
                try {
                    for (int i = 0; i < 16; i++) {
                        out.write(ping); // never reading the PONGs
                    }
                } catch (IOException cut) {
                    return; // cut off while still flooding
                }
                List<Message> got = readUntilClosed(s, 10_000);
                assertTrue(got.isEmpty() || got.get(got.size() - 1) != null, "still open after 16 MiB of PINGs");
            }
        }
    }

    @Test
    void aPingIsAnsweredAfterTheAckOfWhatCameBeforeIt() throws Exception {
        // what a PC servlet with a spool relies on: it sends a PING after a batch, and learns at once, not within
        // the 20 ms an ACK may wait, that the endpoint took the batch
        try (DirectFixture f = new DirectFixture();
                Consumer c = f.consumer("c").build()) {
            RegistryClient registry = RegistryClient.create(f.registryUrl());
            try (Socket s = rawTo(registry, c.name())) {
                OutputStream out = s.getOutputStream();
                out.write(Packed.make(0, Command.HELLO, "raw@lan", "", new byte[0]));
                for (int i = 1; i <= 3; i++) {
                    out.write(Packed.make(i, Command.DATA, "raw@lan", c.name(), new byte[] {(byte) i}));
                }
                out.write(Packed.make(0, Command.PING, "raw@lan", c.name(), new byte[] {7}));
                out.flush();
                List<Message> got = readUntilClosed(s, 500);
                List<Command> commands = got.stream().filter(m -> m != null).map(Message::command).toList();
                int ack = commands.indexOf(Command.ACK);
                int pong = commands.indexOf(Command.PONG);
                assertTrue(ack >= 0 && pong > ack, "an ACK before the PONG: " + commands);
                assertEquals(3, got.get(ack).dataBuffer().getLong());
            }
        }
    }

    @Test
    void aMessageFromAPeerThatGaveNoNameIsTakenAndAcknowledged() throws Exception {
        // an unregistered peer may send to an endpoint that asks for no authentication: its HELLO names nobody,
        // and this side keeps no peer for the link (it sends nothing back on it but ACKs and answers)
        List<Incoming> delivered = new CopyOnWriteArrayList<>();
        try (DirectFixture f = new DirectFixture();
                Consumer c = f.consumer("c").onMessage(delivered::add).build()) {
            RegistryClient registry = RegistryClient.create(f.registryUrl());
            try (Socket s = rawTo(registry, c.name())) {
                OutputStream out = s.getOutputStream();
                out.write(Packed.make(0, Command.HELLO, "", "", new byte[0]));
                out.write(Packed.make(1, Command.DATA, "raw@lan", c.name(), new byte[] {1}));
                out.write(Packed.make(0, Command.PING, "raw@lan", c.name(), new byte[] {7}));
                out.flush();
                List<Command> commands = readUntilClosed(s, 500).stream().filter(m -> m != null)
                        .map(Message::command).toList();
                assertTrue(commands.contains(Command.ACK) && commands.contains(Command.PONG),
                        "the DATA acknowledged and the link still up: " + commands);
            }
            assertEquals(1, delivered.size());
        }
    }

    /** What a raw "PC servlet" does on each uplink a consumer opens to it, after the consumer's HELLO. */
    private interface UplinkScript {
        void run(Socket s, String consumer) throws Exception;
    }

    /**
     * A consumer whose PC servlet is a raw server socket: each uplink it opens gets {@code script}; the milliseconds
     * from the end of each uplink to the consumer's next connection.
     */
    private static List<Long> uplinkRounds(int rounds, UplinkScript script) throws Exception {
        List<Long> waits = new ArrayList<>();
        try (ServerSocket pc = new ServerSocket(0, 5, InetAddress.getLoopbackAddress());
                DirectFixture f = new DirectFixture();
                Consumer c = Consumer.builder().registry(f.registryUrl()).domain("lan")
                        .pcServlet("127.0.0.1:" + pc.getLocalPort()).label("c").onMessage(m -> { }).build()) {
            pc.setSoTimeout(20_000);
            long closedAt = 0;
            for (int round = 1; round <= rounds; round++) {
                try (Socket s = pc.accept()) {
                    if (round > 1) {
                        waits.add(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - closedAt));
                    }
                    StreamDecoder decoder = WireCodec.standard().newStreamDecoder();
                    List<Message> got = new ArrayList<>();
                    byte[] buf = new byte[4096];
                    s.setSoTimeout(5_000);
                    while (got.isEmpty()) {
                        int n = s.getInputStream().read(buf);
                        assertTrue(n > 0, "the consumer's HELLO");
                        decoder.feed(buf, 0, n, got::add);
                    }
                    assertEquals(Command.HELLO, got.get(0).command());
                    script.run(s, c.name());
                }
                closedAt = System.nanoTime();
            }
        }
        return waits;
    }

    @Test
    void anUplinkThatBroughtMessagesIsOpenedAgainAtOnceAfterEachLoss() throws Exception {
        // a consumer sends nothing up its uplink, so its PC servlet never ACKs anything there: the messages that
        // came down it are what says the link worked. Before, each restart of the PC servlet made the consumer
        // wait longer to come back (138 ms, 391, 555, 1,533, 4,437: the back-off of a peer that never worked),
        // while its queue at the PC servlet filled and producers were refused with QUEUE_FULL
        List<Long> waits = uplinkRounds(6, (s, consumer) -> {
            OutputStream out = s.getOutputStream();
            out.write(Packed.make(0, Command.WELCOME, "pc@lan", consumer, new byte[0]));
            out.write(Packed.make(1, Command.DATA, "p-aaaaaa@far", consumer, new byte[] {1}));
            out.flush();
            // the consumer takes it (and ACKs it within 20 ms); the link lasts, as a working one does
            readUntilClosed(s, 1_200);
        });
        assertTrue(waits.stream().allMatch(w -> w < 1_000), "the consumer came back after " + waits + " ms");
    }

    @Test
    void anUplinkThatFailsAtOnceAfterAMessageIsOpenedAgainAfterTheBackOff() throws Exception {
        // a peer that sends a message and then one the consumer refuses (here a HELLO after the handshake), on
        // every link, as a PC servlet would resend a message over the consumer's limit behind a few small ones:
        // the message does not make such a link one that worked, and the consumer backs off rather than
        // reconnecting at once, again and again
        List<Long> waits = uplinkRounds(4, (s, consumer) -> {
            OutputStream out = s.getOutputStream();
            out.write(Packed.make(0, Command.WELCOME, "pc@lan", consumer, new byte[0]));
            out.write(Packed.make(1, Command.DATA, "p-aaaaaa@far", consumer, new byte[] {1}));
            out.write(Packed.make(0, Command.HELLO, "pc@lan", "", new byte[0]));
            out.flush();
            readUntilClosed(s, 2_000); // the consumer refuses the HELLO and closes
        });
        // three reconnects after links that did not work: 50 ms or more each, growing
        assertTrue(waits.stream().mapToLong(Long::longValue).sum() >= 150, "the consumer came back after " + waits
                + " ms");
    }

    @Test
    void closeReachesALinkStillInItsHandshake() throws Exception {
        try (DirectFixture f = new DirectFixture()) {
            Producer p = f.producer("p").build();
            RegistryClient registry = RegistryClient.create(f.registryUrl());
            try (Socket silent = rawTo(registry, p.name())) {
                // accepted, waiting for a HELLO that never comes: it counts as a handshake pending from here
                HandshakeAdmission admission = HandshakeAdmission.process();
                await().atMost(Duration.ofSeconds(5)).pollInterval(Duration.ofMillis(5))
                        .until(() -> admission.pending(silent.getLocalAddress()) > 0);
                p.close();
                List<Message> got = readUntilClosed(silent, 5_000);
                assertTrue(got.isEmpty() || got.get(got.size() - 1) != null, "still open after close: " + got);
            }
        }
    }

    @Test
    void handlerThrowingAnErrorFailsThatMessageOnly() throws Exception {
        try (DirectFixture f = new DirectFixture();
                Producer p = f.producer("p").onMessage(m -> {
                    if (m.data()[0] == 0) {
                        throw new AssertionError("boom");
                    }
                    m.reply(m.data());
                }).build();
                Consumer c = f.consumer("c").build()) {
            EndpointException e = org.junit.jupiter.api.Assertions.assertThrows(EndpointException.class,
                    () -> c.request(p.name(), new byte[] {0}, Duration.ofSeconds(5)));
            assertEquals(io.gma.wire.ErrorCode.INTERNAL, e.code());
            assertArrayEquals(new byte[] {1}, c.request(p.name(), new byte[] {1}, Duration.ofSeconds(5)));
            assertEquals(0, c.stats().reconnects());
        }
    }

    @Test
    void messageForAnotherNameIsAnsweredNoRoute() throws Exception {
        try (DirectFixture f = new DirectFixture();
                Producer p = f.producer("p").build()) {
            RegistryClient registry = RegistryClient.create(f.registryUrl());
            try (Socket s = rawTo(registry, p.name())) {
                OutputStream out = s.getOutputStream();
                out.write(Packed.make(0, Command.HELLO, "raw@lan", "", new byte[0]));
                // one for it first: the link remembers the name it matched, and must still check the next
                out.write(Packed.make(6, Command.DATA, "raw@lan", p.name(), new byte[1]));
                out.write(Packed.make(7, Command.DATA, "raw@lan", "someone-else@lan", new byte[1]));
                s.setSoTimeout(5000);
                StreamDecoder decoder = WireCodec.standard().newStreamDecoder();
                List<Message> got = new ArrayList<>();
                byte[] buf = new byte[4096];
                while (got.stream().noneMatch(m -> m.command() == Command.ERROR)) {
                    int n = s.getInputStream().read(buf);
                    assertTrue(n > 0, "closed before the ERROR");
                    decoder.feed(buf, 0, n, got::add);
                }
                Message error = got.stream().filter(m -> m.command() == Command.ERROR).findFirst().get();
                assertEquals(7, error.sequence());
                assertTrue(error.dataAsString().startsWith("NO_ROUTE this is " + p.name() + ", not someone-else@lan"),
                        error.dataAsString());
            }
        }
    }
}
