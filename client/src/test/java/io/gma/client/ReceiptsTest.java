package io.gma.client;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gma.internal.link.LinkCounters;
import io.gma.internal.link.SendQueue;
import io.gma.registry.api.Kind;
import io.gma.registry.api.Registration;
import io.gma.registry.api.RegistryClient;
import io.gma.wire.Command;
import io.gma.wire.Envelope;
import io.gma.wire.ErrorCode;
import io.gma.wire.Message;
import io.gma.wire.Packed;
import io.gma.wire.StreamDecoder;
import io.gma.wire.WireCodec;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Receipts in one domain, where a test can stand in for one side with a raw socket: the flag on the wire, a
 * receiver that sends none, forged receipts, a duplicate still with the executor, the bound and its policies,
 * the options, and what a send costs with receipts off. The behaviour over every transport is in
 * {@link ContractSuite}.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ReceiptsTest {
    private DirectFixture fixture;
    private final CountDownLatch entered = new CountDownLatch(1);
    private final CountDownLatch release = new CountDownLatch(1);
    private final AtomicInteger handled = new AtomicInteger();
    private final ExecutorService handlers = Executors.newSingleThreadExecutor();

    @BeforeEach
    void start() throws Exception {
        fixture = new DirectFixture();
    }

    @AfterEach
    void stop() throws Exception {
        release.countDown();
        handlers.shutdownNow();
        fixture.close();
    }

    /** A consumer whose handler, on an executor, holds every message until {@link #release}. */
    private Consumer held() throws EndpointException {
        return fixture.consumer("held").executor(handlers).onMessage(m -> {
            handled.incrementAndGet();
            entered.countDown();
            release.await();
        }).build();
    }

    private static EndpointException failure(CompletableFuture<Void> f) {
        ExecutionException e = assertThrows(ExecutionException.class, () -> f.get(10, TimeUnit.SECONDS));
        return (EndpointException) e.getCause();
    }

    @Test
    void withoutReceiptsDeliveredSaysHowToAskForThem() throws Exception {
        try (Consumer c = fixture.consumer("c").build(); Producer p = fixture.producer("p").build()) {
            Sent sent = p.send(c.name(), "x".getBytes(UTF_8));
            sent.acknowledged().get(10, TimeUnit.SECONDS);
            assertEquals("delivered() needs receipts, which this endpoint does not ask for: build it with"
                    + " EndpointBuilder.receipts(timeout)", assertThrows(IllegalStateException.class,
                            sent::delivered).getMessage());
            assertEquals(0, p.stats().receiptsAwaited());
        }
    }

    @Test
    void withoutReceiptsASendAllocatesOnlyItsSentAndItsBytes() throws Exception {
        com.sun.management.ThreadMXBean threads =
                (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        int n = 10_000;
        // what a Sent is in this JVM: measured, not assumed (object layout differs with the heap's size)
        SendQueue queue = new SendQueue(1 << 20, 1000, new LinkCounters());
        Pending[] kept = new Pending[n];
        long sent = Long.MAX_VALUE;
        for (int round = 0; round < 5; round++) {
            long before = threads.getCurrentThreadAllocatedBytes();
            for (int i = 0; i < n; i++) {
                kept[i] = new Pending(queue, i + 1);
            }
            sent = Math.min(sent, (threads.getCurrentThreadAllocatedBytes() - before) / n);
        }
        try (Consumer c = fixture.consumer("sink").onMessage(m -> { }).build();
                Producer p = fixture.producer("off").build()) {
            byte[] data = new byte[16];
            int packed = Envelope.of(p.name(), c.name()).packedLength(Command.DATA, data);
            long least = Long.MAX_VALUE;
            for (int round = 0; round < 10; round++) {
                long before = threads.getCurrentThreadAllocatedBytes();
                for (int i = 0; i < n; i++) {
                    p.send(c.name(), data);
                }
                // the least of several rounds: a round in which the link's thread contended for the queue's
                // lock allocated that lock's wait nodes, which are not the send's own
                least = Math.min(least, (threads.getCurrentThreadAllocatedBytes() - before) / n);
                await().atMost(Duration.ofSeconds(10)).until(() -> p.stats().queuedMessages() == 0);
            }
            // the message's bytes, packed into a shared segment, and its Sent: nothing else, no receipt's future
            assertTrue(least <= packed + sent + 4, least + " bytes per send, over the " + packed + " of its message"
                    + " and the " + sent + " of its Sent");
        }
        // and that Sent is no larger than the link module's message: what receipts need is in a subclass
        assertEquals(List.of(), Arrays.stream(Pending.class.getDeclaredFields())
                .filter(f -> !Modifier.isStatic(f.getModifiers())).map(Field::getName).toList());
    }

    @Test
    void theOptionsRefuseValuesOutsideTheirLimits() {
        EndpointBuilder<Producer> b = fixture.producer("p");
        assertEquals("receipts timeout PT0.009S is outside 10 ms..24 h", assertThrows(IllegalArgumentException.class,
                () -> b.receipts(Duration.ofMillis(9))).getMessage());
        assertEquals("receipts timeout PT24H0.001S is outside 10 ms..24 h", assertThrows(
                IllegalArgumentException.class, () -> b.receipts(Duration.ofHours(24).plusMillis(1))).getMessage());
        assertEquals("receipts timeout null is not positive", assertThrows(IllegalArgumentException.class,
                () -> b.receipts(null)).getMessage());
        assertEquals("maxAwaitedReceipts 0 is outside 1..1048576", assertThrows(IllegalArgumentException.class,
                () -> b.maxAwaitedReceipts(0)).getMessage());
        assertEquals("maxAwaitedReceipts 1048577 is outside 1..1048576", assertThrows(IllegalArgumentException.class,
                () -> b.maxAwaitedReceipts(1_048_577)).getMessage());
        assertEquals("maxAwaitedReceipts 10 is set, but no receipts are asked for: set receipts(timeout) too",
                assertThrows(IllegalStateException.class, () -> b.maxAwaitedReceipts(10).build()).getMessage());
    }

    @Test
    void aMessageAsksForItsReceiptWithReplyExpectedAndAReceiverThatSendsNoneTimesOut() throws Exception {
        try (ServerSocket listener = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
                Producer p = fixture.producer("p").receipts(Duration.ofMillis(300)).build()) {
            String raw = RegistryClient.create(fixture.registryUrl()).register(Registration.builder(Kind.CONSUMER,
                    "raw", "lan").port(listener.getLocalPort()).build()).name();
            Sent ignored = p.send(raw, "first".getBytes(UTF_8));
            try (RawPeer peer = new RawPeer(listener.accept())) {
                Message hello = peer.next();
                assertEquals(Command.HELLO, hello.command());
                peer.write(Packed.make(0, Command.WELCOME, raw, p.name(), new byte[0]));
                Message data = peer.next();
                assertEquals(Command.DATA, data.command());
                assertEquals(Message.REPLY_EXPECTED, data.flags(), "the DATA does not ask for a receipt");
                assertEquals(ignored.sequence(), data.sequence());
                peer.write(Packed.make(0, Command.ACK, raw, p.name(), ByteBuffer.allocate(8).putLong(1).array()));
                // a receiver of an earlier version, or of another language, that sends no receipt: only TIMEOUT
                ignored.acknowledged().get(10, TimeUnit.SECONDS);
                EndpointException why = failure(ignored.delivered());
                assertEquals(ErrorCode.TIMEOUT, why.code());
                assertEquals("no receipt from " + raw + " for message " + ignored.sequence() + " within 300 ms",
                        why.getMessage());

                Sent answered = p.send(raw, "second".getBytes(UTF_8));
                Message second = peer.next();
                assertEquals(answered.sequence(), second.sequence());
                peer.write(Packed.make(second.sequence(), Command.REPLY, raw, p.name(), new byte[0]));
                answered.delivered().get(10, TimeUnit.SECONDS);
            }
        }
    }

    @Test
    void aReceiptFromAnotherThanTheDestinationIsRefused() throws Exception {
        try (Consumer c = held(); Producer p = fixture.producer("p").receipts(Duration.ofSeconds(30)).build();
                RawPeer mallory = new RawPeer(new Socket("127.0.0.1", fixture.portOf(p.name())))) {
            Sent sent = p.send(c.name(), "x".getBytes(UTF_8));
            assertTrue(entered.await(10, TimeUnit.SECONDS));
            String mal = "mal-abcdef@lan";
            mallory.write(Packed.make(0, Command.HELLO, mal, "", new byte[0]));
            assertEquals(Command.WELCOME, mallory.next().command());
            mallory.write(Packed.make(sent.sequence(), Command.REPLY, mal, p.name(), new byte[0]));
            mallory.write(Packed.make(sent.sequence(), Command.ERROR, mal, p.name(), "NO_ROUTE forged"));
            await("the forged receipts were not refused").atMost(Duration.ofSeconds(10))
                    .until(() -> p.stats().refusedAnswers() == 2);
            assertFalse(sent.delivered().isDone(), "a forged receipt was taken");
            release.countDown();
            sent.delivered().get(10, TimeUnit.SECONDS);
        }
    }

    @Test
    void aDuplicateWhoseFirstCopyIsStillWithTheExecutorIsAnsweredOnceTheHandlerReturns() throws Exception {
        LinkedBlockingQueue<Boolean> replyExpected = new LinkedBlockingQueue<>();
        try (Consumer c = fixture.consumer("held").executor(handlers).onMessage(m -> {
            replyExpected.add(m.replyExpected());
            handled.incrementAndGet();
            entered.countDown();
            release.await();
        }).build(); RawPeer raw = new RawPeer(new Socket("127.0.0.1", fixture.portOf(c.name())))) {
            String name = "raw-abcdef@lan";
            raw.write(Packed.make(0, Command.HELLO, name, "", new byte[0]));
            assertEquals(Command.WELCOME, raw.next().command());
            byte[] data = Packed.marshal(Message.of(Command.DATA, Message.REPLY_EXPECTED, name, c.name(), 5,
                    "x".getBytes(UTF_8)));
            raw.write(data);
            assertTrue(entered.await(10, TimeUnit.SECONDS));
            assertEquals(false, replyExpected.take(), "a receipt is the endpoint's to send, not the handler's reply");
            raw.write(data); // as resent after a lost link
            await().atMost(Duration.ofSeconds(10)).until(() -> c.stats().duplicates() == 1);
            assertNull(raw.next(Duration.ofMillis(300)), "a receipt came while the handler still held the message");
            release.countDown();
            Message receipt = raw.next();
            assertEquals(Command.REPLY, receipt.command());
            assertEquals(5, receipt.sequence());
            assertEquals(c.name(), receipt.from());
            assertEquals(name, receipt.to());
            assertEquals(0, receipt.data().length);
            assertNull(raw.next(Duration.ofMillis(300)), "more than one receipt for the two copies");
            raw.write(data); // once more, now that it was taken: answered at once
            assertEquals(5, raw.next().sequence());
            assertEquals(1, handled.get());
        }
    }

    @Test
    void aHandlerThatThrowsOrNoHandlerFailsDeliveredWithInternal() throws Exception {
        try (Consumer throwing = fixture.consumer("throwing").onMessage(m -> {
            throw new IllegalStateException("not today");
        }).build(); Consumer none = fixture.consumer("none").build();
                Producer p = fixture.producer("p").receipts(Duration.ofSeconds(30)).build()) {
            EndpointException why = failure(p.send(throwing.name(), "x".getBytes(UTF_8)).delivered());
            assertEquals(ErrorCode.INTERNAL, why.code());
            assertEquals(throwing.name() + " answered ERROR INTERNAL the handler of " + throwing.name() + " failed:"
                    + " java.lang.IllegalStateException: not today", why.getMessage());
            why = failure(p.send(none.name(), "x".getBytes(UTF_8)).delivered());
            assertEquals(ErrorCode.INTERNAL, why.code());
            assertEquals(none.name() + " answered ERROR INTERNAL " + none.name() + " has no message handler",
                    why.getMessage());
        }
    }

    @Test
    void pastMaxAwaitedReceiptsFailFailsTheSendAtOnce() throws Exception {
        try (Consumer c = held(); Producer p = fixture.producer("p").receipts(Duration.ofSeconds(30))
                .maxAwaitedReceipts(2).fullQueuePolicy(FullQueuePolicy.FAIL).build()) {
            p.send(c.name(), "1".getBytes(UTF_8));
            p.send(c.name(), "2".getBytes(UTF_8));
            EndpointException e = assertThrows(EndpointException.class, () -> p.send(c.name(), "3".getBytes(UTF_8)));
            assertEquals(ErrorCode.QUEUE_FULL, e.code());
            assertEquals("not sent to " + c.name() + ": 2 receipts are awaited, the most maxAwaitedReceipts allows",
                    e.getMessage());
            assertEquals(2, p.stats().receiptsAwaited());
            assertEquals(1, p.stats().rejected());
        }
    }

    @Test
    void pastMaxAwaitedReceiptsBlockWaitsForAReceipt() throws Exception {
        try (Consumer c = held(); Producer p = fixture.producer("p").receipts(Duration.ofSeconds(30))
                .maxAwaitedReceipts(1).blockTimeout(Duration.ofMillis(200)).build()) {
            Sent first = p.send(c.name(), "1".getBytes(UTF_8));
            EndpointException e = assertThrows(EndpointException.class, () -> p.send(c.name(), "2".getBytes(UTF_8)));
            assertEquals(ErrorCode.QUEUE_FULL, e.code());
            assertEquals(1, p.stats().waits());
            try (Producer patient = fixture.producer("patient").receipts(Duration.ofSeconds(30)).maxAwaitedReceipts(1)
                    .build()) {
                Sent held = patient.send(c.name(), "3".getBytes(UTF_8));
                CompletableFuture<Sent> waiting = CompletableFuture.supplyAsync(() -> {
                    try {
                        return patient.send(c.name(), "4".getBytes(UTF_8));
                    } catch (EndpointException ex) {
                        throw new IllegalStateException(ex);
                    }
                });
                await("the send did not wait for room").during(Duration.ofMillis(300)).atMost(Duration.ofSeconds(2))
                        .until(() -> !waiting.isDone());
                release.countDown();
                held.delivered().get(10, TimeUnit.SECONDS);
                waiting.get(10, TimeUnit.SECONDS).delivered().get(10, TimeUnit.SECONDS);
                first.delivered().get(10, TimeUnit.SECONDS);
            }
        }
    }

    @Test
    void pastMaxAwaitedReceiptsDropOldestGivesUpTheOldestReceiptNotItsMessage() throws Exception {
        try (Consumer c = held(); Producer p = fixture.producer("p").receipts(Duration.ofSeconds(30))
                .maxAwaitedReceipts(2).fullQueuePolicy(FullQueuePolicy.DROP_OLDEST).build()) {
            Sent first = p.send(c.name(), "1".getBytes(UTF_8));
            Sent second = p.send(c.name(), "2".getBytes(UTF_8));
            Sent third = p.send(c.name(), "3".getBytes(UTF_8));
            EndpointException why = failure(first.delivered());
            assertEquals(ErrorCode.QUEUE_FULL, why.code());
            assertEquals("the receipt of " + first.sequence() + " is no longer awaited under DROP_OLDEST: 2 receipts"
                    + " were awaited, the most allowed", why.getMessage());
            assertEquals(1, p.stats().receiptsGivenUp());
            assertEquals(2, p.stats().receiptsAwaited());
            release.countDown();
            second.delivered().get(10, TimeUnit.SECONDS);
            third.delivered().get(10, TimeUnit.SECONDS);
            assertEquals(3, handled.get(), "the first message did not arrive");
        }
    }

    @Test
    void closingFailsTheReceiptsAwaitedWithShuttingDown() throws Exception {
        try (Consumer c = held()) {
            Producer p = fixture.producer("p").receipts(Duration.ofSeconds(30)).build();
            Sent sent = p.send(c.name(), "x".getBytes(UTF_8));
            assertTrue(entered.await(10, TimeUnit.SECONDS));
            p.close();
            EndpointException why = failure(sent.delivered());
            assertEquals(ErrorCode.SHUTTING_DOWN, why.code());
            assertEquals(0, p.stats().receiptsAwaited());
        }
    }

    /** One end of a link, played by the test: raw messages written, and read but for ACK, PING and PONG. */
    private static final class RawPeer implements AutoCloseable {
        private final Socket socket;
        private final StreamDecoder decoder = WireCodec.standard().newStreamDecoder();
        private final ArrayDeque<Message> read = new ArrayDeque<>();
        private final byte[] buf = new byte[8192];

        RawPeer(Socket socket) {
            this.socket = socket;
        }

        void write(byte[] packed) throws IOException {
            socket.getOutputStream().write(packed);
        }

        /** The next message; fails after 10 s. */
        Message next() throws Exception {
            Message m = next(Duration.ofSeconds(10));
            assertNotNull(m, "nothing came within 10 s");
            return m;
        }

        /** The next message, or null when none came within {@code within}. */
        Message next(Duration within) throws Exception {
            long deadline = System.nanoTime() + within.toNanos();
            while (read.isEmpty()) {
                long left = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
                if (left <= 0) {
                    return null;
                }
                socket.setSoTimeout((int) left);
                int n;
                try {
                    n = socket.getInputStream().read(buf);
                } catch (SocketTimeoutException quiet) {
                    return null;
                }
                assertTrue(n > 0, "the peer closed the link");
                decoder.feed(buf, 0, n, m -> {
                    if (m.command() != Command.ACK && m.command() != Command.PING && m.command() != Command.PONG) {
                        read.add(m);
                    }
                });
            }
            return read.poll();
        }

        @Override
        public void close() throws IOException {
            socket.close();
        }
    }
}
