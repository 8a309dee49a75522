package io.gma.client;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gma.registry.api.Kind;
import io.gma.registry.api.Registration;
import io.gma.registry.api.RegistryClient;
import io.gma.registry.api.RegistryException;
import io.gma.wire.ErrorCode;
import java.net.ServerSocket;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The outbox's options, and its faults: a directory another process has, a full outbox under each policy, a close
 * that keeps what was not delivered, a damaged record, and sequence numbers that never go back. A real registry
 * and real endpoints; a destination registered at a port where nothing listens holds messages back.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class OutboxTest {
    @TempDir
    Path tmp;

    /** Registers {@code label@lan} exactly at a port where nothing listens: messages for it wait. */
    private static void registerNowhere(DirectFixture f, String label) throws Exception {
        int dead;
        try (ServerSocket s = new ServerSocket(0)) {
            dead = s.getLocalPort();
        }
        RegistryClient.create(f.registryUrl()).register(Registration.builder(Kind.CONSUMER, label, "lan").exact(true)
                .port(dead).build());
    }

    @Test
    void buildRefusesAnOutboxWithoutAnExactNameOrWithDropOldest() {
        Path dir = tmp.resolve("o");
        EndpointBuilder<Producer> b = Producer.builder().registry("http://127.0.0.1:1").domain("lan").label("p")
                .outbox(dir);
        assertEquals("outbox " + dir + " needs exactLabel(true): what it keeps goes out again after a restart under"
                + " the same name with the same sequence numbers, which is how receivers tell it from new messages,"
                + " and a name with a nonce is new on every start",
                assertThrows(IllegalStateException.class, b::build).getMessage());
        b.exactLabel(true).fullQueuePolicy(FullQueuePolicy.DROP_OLDEST);
        assertEquals("outbox " + dir + " cannot go with fullQueuePolicy DROP_OLDEST: an outbox keeps what send"
                + " accepted until it is delivered, and DROP_OLDEST drops accepted messages; choose BLOCK or FAIL",
                assertThrows(IllegalStateException.class, b::build).getMessage());
        assertEquals("takeOver needs exactLabel(true): a name with a nonce is new on every start, so there is"
                + " nothing to take over", assertThrows(IllegalStateException.class, () -> Producer.builder()
                .registry("http://127.0.0.1:1").domain("lan").label("p").takeOver(true).build()).getMessage());
        assertEquals("maxOutboxBytes 1048575 is outside 1048576..1099511627776", assertThrows(
                IllegalArgumentException.class, () -> b.maxOutboxBytes((1 << 20) - 1)).getMessage());
        assertThrows(NullPointerException.class, () -> b.outbox(null));
        assertTrue(Files.notExists(dir), "nothing was made for a refused build");
    }

    @Test
    void anOutboxAnotherLiveProcessHasIsRefusedNamingItAndTheProcess() throws Exception {
        Path dir = tmp.resolve("shared");
        try (DirectFixture f = new DirectFixture(); Consumer sink = f.consumer("sink").exactLabel(true).build();
                ChildJvm other = ChildJvm.start(List.of("-Xmx64m"), OutboxProducerMain.class.getName(),
                        List.of(f.registryUrl(), dir.toString(), "first", sink.name(), "0", "1"))) {
            other.await(Pattern.compile("done .*"), 30_000);
            IllegalStateException refused = assertThrows(IllegalStateException.class,
                    () -> f.producer("second").exactLabel(true).outbox(dir).build());
            String m = refused.getMessage();
            assertTrue(m.startsWith("outbox " + dir + ": the spool directory " + dir.toAbsolutePath()
                    + " is in use by process " + other.pid() + "@"), m);
            assertTrue(m.endsWith(": one process at a time may use a spool directory; give each endpoint an outbox"
                    + " directory of its own"), m);
            RegistryException none = assertThrows(RegistryException.class,
                    () -> RegistryClient.create(f.registryUrl()).lookup("second@lan"));
            assertEquals(404, none.status(), "a refused outbox registered nothing");
        }
    }

    @Test
    void aFullOutboxRefusesAtOnceUnderFail() throws Exception {
        Path dir = tmp.resolve("fail");
        try (DirectFixture f = new DirectFixture()) {
            registerNowhere(f, "nowhere");
            try (Producer p = f.producer("filler").exactLabel(true).outbox(dir).maxOutboxBytes(1 << 20)
                    .fullQueuePolicy(FullQueuePolicy.FAIL).build()) {
                EndpointException full = null;
                int accepted = 0;
                while (full == null && accepted < 5_000) {
                    try {
                        p.send("nowhere@lan", new byte[1000]);
                        accepted++;
                    } catch (EndpointException e) {
                        full = e;
                    }
                }
                assertNotNull(full, accepted + " sends of 1000 bytes into 1 MiB");
                assertEquals(ErrorCode.QUEUE_FULL, full.code());
                assertTrue(full.getMessage().startsWith("outbox " + dir + " is full (maxOutboxBytes 1048576): the"
                        + " spool at " + dir + " holds "), full.getMessage());
                EndpointStats s = p.stats();
                assertTrue(accepted > 900 && accepted < 1050, accepted + " accepted");
                assertEquals(accepted, s.outboxMessages());
                assertTrue(s.outboxBytes() <= 1 << 20, s.toString());
                assertEquals(1, s.rejected());
            }
        }
    }

    @Test
    void aFullOutboxBlocksTheSenderUntilDeliveryFreesRoom() throws Exception {
        Path dir = tmp.resolve("block");
        int count = 3_000;
        try (DirectFixture f = new DirectFixture()) {
            registerNowhere(f, "later");
            try (Producer p = f.producer("filler").exactLabel(true).outbox(dir).maxOutboxBytes(1 << 20)
                    .blockTimeout(Duration.ofSeconds(60)).build()) {
                AtomicInteger sent = new AtomicInteger();
                CompletableFuture<Void> sending = CompletableFuture.runAsync(() -> {
                    for (int i = 0; i < count; i++) {
                        byte[] data = ByteBuffer.allocate(1000).putInt(i).array();
                        try {
                            p.send("later@lan", data);
                        } catch (EndpointException e) {
                            throw new IllegalStateException("send " + i + " failed", e);
                        }
                        sent.incrementAndGet();
                    }
                });
                // the sender stops: the outbox is full and nothing is delivered
                await().atMost(Duration.ofSeconds(30)).until(() -> p.stats().waits() > 0);
                int stuck = sent.get();
                await().during(Duration.ofMillis(500)).atMost(Duration.ofSeconds(5))
                        .until(() -> sent.get() == stuck);
                assertTrue(stuck < count, stuck + " sent");
                assertTrue(p.stats().outboxBytes() <= 1 << 20, p.stats().toString());

                // the destination comes (taking the name over, so that it is never unknown meanwhile): delivery
                // frees room, the sender goes on, and everything arrives, in order, once
                List<Integer> got = Collections.synchronizedList(new ArrayList<>());
                try (Consumer c = f.consumer("later").exactLabel(true).takeOver(true)
                        .onMessage(m -> got.add(ByteBuffer.wrap(m.data()).getInt())).build()) {
                    sending.get(60, TimeUnit.SECONDS);
                    await().atMost(Duration.ofSeconds(30)).until(() -> got.size() >= count);
                    List<Integer> expected = new ArrayList<>();
                    for (int i = 0; i < count; i++) {
                        expected.add(i);
                    }
                    assertEquals(expected, new ArrayList<>(got));
                }
            }
        }
    }

    @Test
    void aSendWaitingForRoomInTheOutboxEndsWhenTheEndpointCloses() throws Exception {
        Path dir = tmp.resolve("closing");
        try (DirectFixture f = new DirectFixture()) {
            registerNowhere(f, "nowhere");
            Producer p = f.producer("filler").exactLabel(true).outbox(dir).maxOutboxBytes(1 << 20)
                    .blockTimeout(Duration.ofSeconds(60)).build();
            CompletableFuture<Void> sending = CompletableFuture.runAsync(() -> {
                while (true) {
                    try {
                        p.send("nowhere@lan", new byte[1000]);
                    } catch (EndpointException e) {
                        throw new IllegalStateException(e);
                    }
                }
            });
            await().atMost(Duration.ofSeconds(30)).until(() -> p.stats().waits() > 0);
            long started = System.nanoTime();
            p.close();
            ExecutionException ended = assertThrows(ExecutionException.class, () -> sending.get(10, TimeUnit.SECONDS));
            assertTrue(TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - started) < 10);
            EndpointException why = (EndpointException) ended.getCause().getCause();
            assertEquals(ErrorCode.SHUTTING_DOWN, why.code());
            assertEquals("the endpoint closed while this send waited for room in its outbox " + dir + "; the message"
                    + " was not kept", why.getMessage());
        }
    }

    @Test
    void whatACloseLeftGoesOutOnTheNextStartAndADamagedRecordIsSkippedAndCounted() throws Exception {
        Path dir = tmp.resolve("kept");
        try (DirectFixture f = new DirectFixture()) {
            registerNowhere(f, "later");
            List<Sent> first = new ArrayList<>();
            try (Producer p = f.producer("keeper").exactLabel(true).outbox(dir).build()) {
                for (int i = 0; i < 10; i++) {
                    first.add(p.send("later@lan", ("msg-" + i).getBytes(UTF_8)));
                }
                assertEquals(10, p.stats().outboxMessages());
            }
            ExecutionException closed = assertThrows(ExecutionException.class,
                    () -> first.get(0).acknowledged().get(10, TimeUnit.SECONDS));
            assertEquals(ErrorCode.SHUTTING_DOWN, ((EndpointException) closed.getCause()).code());
            assertEquals("keeper@lan closed; what its outbox " + dir + " holds goes out when it starts again with it",
                    closed.getCause().getMessage());

            // a flipped byte inside msg-4's record
            Path segment;
            try (Stream<Path> files = Files.list(dir)) {
                segment = files.filter(x -> x.toString().endsWith(".seg")).findFirst().orElseThrow();
            }
            byte[] bytes = Files.readAllBytes(segment);
            int at = new String(bytes, java.nio.charset.StandardCharsets.ISO_8859_1).indexOf("msg-4");
            assertTrue(at > 0);
            bytes[at + 2] ^= 0x01;
            Files.write(segment, bytes);

            List<String> got = Collections.synchronizedList(new ArrayList<>());
            try (Consumer c = f.consumer("later").exactLabel(true).takeOver(true)
                    .onMessage(m -> got.add(new String(m.data(), UTF_8))).build();
                    Producer again = f.producer("keeper").exactLabel(true).outbox(dir).build()) {
                EndpointStats s = again.stats();
                assertEquals(9, s.outboxRecovered(), s.toString());
                assertEquals(1, s.outboxDamaged(), s.toString());
                Sent next = again.send(c.name(), "msg-10".getBytes(UTF_8));
                next.acknowledged().get(30, TimeUnit.SECONDS);
                // numbered above the earlier run's, which went out first, with their own numbers
                for (Sent earlier : first) {
                    assertTrue(Long.compareUnsigned(next.sequence(), earlier.sequence()) > 0);
                }
                assertEquals(List.of("msg-0", "msg-1", "msg-2", "msg-3", "msg-5", "msg-6", "msg-7", "msg-8", "msg-9",
                        "msg-10"), new ArrayList<>(got));
                await().atMost(Duration.ofSeconds(10)).until(() -> again.stats().outboxMessages() == 0);
            }
        }
    }

    @Test
    void anOutboxKeepsWhatAsksForAReceiptAndItsReceiptComes() throws Exception {
        Path dir = tmp.resolve("receipts");
        try (DirectFixture f = new DirectFixture(); Consumer sink = f.consumer("sink").exactLabel(true)
                .onMessage(m -> { }).build();
                Producer p = f.producer("asker").exactLabel(true).outbox(dir).receipts(Duration.ofSeconds(10))
                        .build()) {
            // a receipt comes only for a message whose bytes asked for one: the outbox's bytes are what went
            p.send(sink.name(), "kept".getBytes(UTF_8)).delivered().get(10, TimeUnit.SECONDS);
            await().atMost(Duration.ofSeconds(10)).until(() -> p.stats().outboxMessages() == 0);
        }
    }

    @Test
    void sequenceNumbersGoOnAboveWhatTheOutboxReservedWhateverTheClockSays() throws Exception {
        Path dir = tmp.resolve("numbers");
        List<Long> got = Collections.synchronizedList(new ArrayList<>());
        try (DirectFixture f = new DirectFixture();
                Consumer sink = f.consumer("sink").exactLabel(true).onMessage(m -> got.add(m.sequence())).build()) {
            long before;
            try (Producer p = f.producer("counter").exactLabel(true).outbox(dir).build()) {
                Sent s = p.send(sink.name(), new byte[1]);
                s.acknowledged().get(10, TimeUnit.SECONDS);
                before = s.sequence();
            }
            // a run whose clock was far ahead reserved numbers up to here: the next starts above them
            long ahead = SequenceNumbers.clockFloor() + (1L << 50);
            SequenceNumbers.write(dir.resolve(SequenceNumbers.FILE), ahead);
            try (Producer p = f.producer("counter").exactLabel(true).outbox(dir).outboxForceOnSend(true).build()) {
                Sent s = p.send(sink.name(), new byte[1]);
                s.acknowledged().get(10, TimeUnit.SECONDS);
                assertEquals(ahead + 1, s.sequence());
                assertTrue(SequenceNumbers.read(dir.resolve(SequenceNumbers.FILE)) >= ahead + 1);
            }
            // a damaged file: numbering goes on from the clock, above the first run's
            Files.write(dir.resolve(SequenceNumbers.FILE), new byte[] {1, 2, 3});
            try (Producer p = f.producer("counter").exactLabel(true).outbox(dir).build()) {
                Sent s = p.send(sink.name(), new byte[1]);
                s.acknowledged().get(10, TimeUnit.SECONDS);
                assertTrue(s.sequence() > before, s.sequence() + " after " + before);
            }
            assertEquals(3, got.size(), "a number the receiver took for a duplicate: " + got);
        }
    }
}
