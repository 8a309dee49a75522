package io.gma.client;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gma.wire.Command;
import io.gma.wire.ErrorCode;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.awaitility.core.ConditionTimeoutException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The behaviour of send, request and publish/subscribe that every transport must give; a subclass names the
 * transport by its {@link Fixture}.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
abstract class ContractSuite {
    private Fixture fixture;
    protected final LinkedBlockingQueue<Incoming> atProducer = new LinkedBlockingQueue<>();
    protected final LinkedBlockingQueue<Incoming> atConsumer = new LinkedBlockingQueue<>();
    protected Producer producer;
    protected Consumer consumer;

    abstract Fixture fixture() throws Exception;

    @BeforeEach
    void start() throws Exception {
        fixture = fixture();
        producer = fixture.producer("sensor").onMessage(m -> {
            if (m.replyExpected() && m.data().length >= 64 * 1024) {
                m.reply(m.data()); // a large request is echoed as it came
                return;
            }
            String text = new String(m.data(), UTF_8);
            if (m.replyExpected() && text.equals("fail")) {
                throw new IllegalStateException("asked to fail");
            }
            if (m.replyExpected() && text.equals("slow")) {
                return; // never answers
            }
            if (m.replyExpected()) {
                m.reply(("echo:" + text).getBytes(UTF_8));
            } else {
                atProducer.add(m);
            }
        }).build();
        consumer = fixture.consumer("collector").onMessage(atConsumer::add).build();
    }

    @AfterEach
    void stop() throws Exception {
        consumer.close();
        producer.close();
        fixture.close();
    }

    private static String text(Incoming m) {
        return new String(m.data(), UTF_8);
    }

    @Test
    void sendIsDeliveredOnceAndAcknowledged() throws Exception {
        Sent sent = consumer.send(producer.name(), "n=1".getBytes(UTF_8));
        sent.acknowledged().get(10, TimeUnit.SECONDS);
        Incoming m = atProducer.poll(10, TimeUnit.SECONDS);
        assertEquals("n=1", text(m));
        assertEquals(consumer.name(), m.from());
        assertEquals(Command.DATA, m.command());
        assertEquals(sent.sequence(), m.sequence());
        assertNull(atProducer.poll(200, TimeUnit.MILLISECONDS));
    }

    @Test
    void requestGetsTheReply() throws Exception {
        assertArrayEquals("echo:ping".getBytes(UTF_8), consumer.request(producer.name(), "ping".getBytes(UTF_8),
                Duration.ofSeconds(10)));
        assertArrayEquals("echo:async".getBytes(UTF_8),
                consumer.requestAsync(producer.name(), "async".getBytes(UTF_8)).get(10, TimeUnit.SECONDS));
    }

    @Test
    void aLargeRequestGetsItsLargeReply() throws Exception {
        java.util.Random random = new java.util.Random(19);
        for (int size : new int[] {64 * 1024, 300_000, (1 << 20) + 3}) {
            byte[] data = new byte[size];
            random.nextBytes(data);
            assertArrayEquals(data, consumer.request(producer.name(), data, Duration.ofSeconds(10)), size + " bytes");
            assertArrayEquals(data, consumer.requestAsync(producer.name(), data).get(10, TimeUnit.SECONDS),
                    size + " bytes, asynchronously");
        }
    }

    @Test
    void failingHandlerAnswersError() {
        EndpointException e = assertThrows(EndpointException.class,
                () -> consumer.request(producer.name(), "fail".getBytes(UTF_8), Duration.ofSeconds(10)));
        assertEquals(ErrorCode.INTERNAL, e.code());
        assertTrue(e.getMessage().startsWith(producer.name() + " answered ERROR INTERNAL the handler of "
                + producer.name() + " failed"), e.getMessage());
    }

    @Test
    void requestWithoutReplyTimesOut() {
        EndpointException e = assertThrows(EndpointException.class,
                () -> consumer.request(producer.name(), "slow".getBytes(UTF_8), Duration.ofMillis(300)));
        assertEquals(ErrorCode.TIMEOUT, e.code());
        assertTrue(e.getMessage().startsWith("no reply from " + producer.name() + " to request "), e.getMessage());
    }

    @Test
    void applicationCommandArrivesAsItself() throws Exception {
        consumer.send(producer.name(), Command.application(0x50), "stop".getBytes(UTF_8));
        Incoming m = atProducer.poll(10, TimeUnit.SECONDS);
        assertEquals(Command.application(0x50), m.command());
        assertEquals("stop", text(m));
    }

    @Test
    void consumerSubscribesAndUnsubscribes() throws Exception {
        consumer.subscribe(producer.name(), "metric=load").acknowledged().get(10, TimeUnit.SECONDS);
        eventually(() -> !producer.subscribers().isEmpty()); // across domains, the ACK is the PC servlet's
        assertEquals(java.util.Map.of(consumer.name(), "metric=load"), producer.subscribers());
        producer.publish("load=0.5".getBytes(UTF_8));
        assertEquals("load=0.5", text(atConsumer.poll(10, TimeUnit.SECONDS)));
        assertEquals(0, producer.publish("cpu=3".getBytes(UTF_8), f -> f.contains("cpu")).size());
        consumer.unsubscribe(producer.name());
        eventually(() -> producer.subscribers().isEmpty());
        assertEquals(List.of(), producer.publish("load=0.6".getBytes(UTF_8)));
    }

    @Test
    void producerAddsASubscriber() throws Exception {
        producer.addSubscriber(consumer.name(), null);
        for (Sent s : producer.publish("pushed".getBytes(UTF_8))) {
            s.acknowledged().get(10, TimeUnit.SECONDS);
        }
        assertEquals("pushed", text(atConsumer.poll(10, TimeUnit.SECONDS)));
    }

    @Test
    void vanishedSubscriberIsDropped() throws Exception {
        Consumer gone = fixture.consumer("gone").build();
        String name = gone.name();
        gone.close();
        producer.addSubscriber(name, null);
        List<Sent> sent = producer.publish("anyone?".getBytes(UTF_8));
        if (fixture.acknowledgedByDestination()) {
            ExecutionException e = assertThrows(ExecutionException.class,
                    () -> sent.get(0).acknowledged().get(10, TimeUnit.SECONDS));
            assertEquals(ErrorCode.NO_ROUTE, ((EndpointException) e.getCause()).code());
        } // else the PC servlet took it, and its NO_ROUTE comes back as an ERROR, which drops the subscriber
        eventually(() -> producer.subscribers().isEmpty());
        assertEquals(java.util.Map.of(), producer.subscribers());
    }

    /** Waits up to 10 s for the condition; the assertion after it says what was expected. */
    static void eventually(java.util.function.BooleanSupplier condition) {
        try {
            await().atMost(Duration.ofSeconds(10)).pollDelay(Duration.ZERO).pollInterval(Duration.ofMillis(10))
                    .until(condition::getAsBoolean);
        } catch (ConditionTimeoutException e) {
            // not within 10 s: the assertion after it says what was expected
        }
    }

    @Test
    void thousandsArriveCompleteAndInOrder() throws Exception {
        int n = 20_000;
        List<Sent> sent = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            sent.add(consumer.send(producer.name(), Integer.toString(i).getBytes(UTF_8)));
        }
        for (int i = 0; i < n; i++) {
            Incoming m = atProducer.poll(10, TimeUnit.SECONDS);
            assertEquals(Integer.toString(i), text(m));
        }
        sent.get(n - 1).acknowledged().get(10, TimeUnit.SECONDS);
        assertNull(atProducer.poll(100, TimeUnit.MILLISECONDS));
    }

    /**
     * Messages of every size around the writer's buffers (128 KiB, and the 1 MiB ones a larger message takes)
     * arrive whole and in order, mixed with small ones that share the buffers after them.
     */
    @Test
    void largeAndSmallMessagesArriveWholeAndInOrder() throws Exception {
        java.util.Random random = new java.util.Random(26);
        int[] sizes = {(3 << 20) + 7, 5, 1 << 20, (128 << 10) + 1, 300_000, 1, (1 << 20) - 1, 128 << 10,
                (1 << 20) + 1, 64 << 10, 17};
        List<byte[]> sent = new ArrayList<>();
        // about 6.6 MiB in all: within every queue's default 8 MiB on the way, in one domain or across two
        for (int size : sizes) {
            byte[] data = new byte[size];
            random.nextBytes(data);
            sent.add(data);
            consumer.send(producer.name(), data);
            byte[] small = {(byte) sent.size()};
            sent.add(small);
            consumer.send(producer.name(), small);
        }
        for (int i = 0; i < sent.size(); i++) {
            Incoming m = atProducer.poll(10, TimeUnit.SECONDS);
            assertNotNull(m, "message " + i + " of " + sent.get(i).length + " bytes did not arrive");
            assertArrayEquals(sent.get(i), m.data(), "message " + i + " of " + sent.get(i).length + " bytes");
            assertSame(m.data(), m.data(), "the payload is the handler's: the same array on each call");
        }
        assertNull(atProducer.poll(100, TimeUnit.MILLISECONDS));
    }

    // ---------------------------------------------------------------- receipts (end-to-end acknowledgement)

    /** A producer that asks for receipts, awaited {@code timeout}. */
    private Producer asker(Duration timeout) throws EndpointException {
        return fixture.producer("asker").receipts(timeout).build();
    }

    @Test
    void deliveredWaitsForTheHandlerWhileAcknowledgedDoesNot() throws Exception {
        CountDownLatch entered = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        ExecutorService handlers = Executors.newSingleThreadExecutor();
        try (Consumer held = fixture.consumer("held").executor(handlers).onMessage(m -> {
            entered.countDown();
            release.await();
        }).build(); Producer p = asker(Duration.ofSeconds(30))) {
            Sent sent = p.send(held.name(), "hold me".getBytes(UTF_8));
            assertTrue(entered.await(10, TimeUnit.SECONDS), "the message never reached the handler");
            sent.acknowledged().get(10, TimeUnit.SECONDS);
            await("delivered() completed while the handler still held the message").during(Duration.ofMillis(300))
                    .atMost(Duration.ofSeconds(2)).until(() -> !sent.delivered().isDone());
            release.countDown();
            sent.delivered().get(10, TimeUnit.SECONDS);
        } finally {
            release.countDown();
            handlers.shutdownNow();
        }
    }

    @Test
    void publishGivesEachSubscriberItsOwnReceipt() throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        ExecutorService handlers = Executors.newSingleThreadExecutor();
        try (Consumer held = fixture.consumer("held").executor(handlers).onMessage(m -> release.await()).build();
                Producer p = asker(Duration.ofSeconds(30))) {
            p.addSubscriber(consumer.name(), null);
            p.addSubscriber(held.name(), null);
            List<Sent> sent = p.publish("to both".getBytes(UTF_8));
            assertEquals(2, sent.size());
            for (Sent s : sent) {
                s.acknowledged().get(10, TimeUnit.SECONDS);
            }
            assertEquals("to both", text(atConsumer.poll(10, TimeUnit.SECONDS)));
            // one of the two is held by its handler, the other was taken: exactly one receipt comes
            await("not one receipt, the free subscriber's, came").atMost(Duration.ofSeconds(10))
                    .until(() -> sent.stream().filter(s -> s.delivered().isDone()).count() == 1);
            await("a receipt came from the held subscriber").during(Duration.ofMillis(300))
                    .atMost(Duration.ofSeconds(2))
                    .until(() -> sent.stream().filter(s -> s.delivered().isDone()).count() == 1);
            release.countDown();
            for (Sent s : sent) {
                s.delivered().get(10, TimeUnit.SECONDS);
            }
            assertTrue(sent.get(0).sequence() != sent.get(1).sequence(), "each subscriber's message is numbered");
        } finally {
            release.countDown();
            handlers.shutdownNow();
        }
    }

    @Test
    void subscribeIsDeliveredWhenTheProducerHasTheSubscriber() throws Exception {
        try (Consumer c = fixture.consumer("subscriber").receipts(Duration.ofSeconds(30)).build()) {
            c.subscribe(producer.name(), "metric=cpu").delivered().get(10, TimeUnit.SECONDS);
            assertEquals("metric=cpu", producer.subscribers().get(c.name())); // no waiting: the receipt says so
        }
    }

    @Test
    void aDuplicateIsAnsweredWithAReceiptButNotHandedToTheHandler() throws Exception {
        LinkedBlockingQueue<Incoming> got = new LinkedBlockingQueue<>();
        AtomicReference<Consumer> self = new AtomicReference<>();
        try (Consumer cutter = fixture.consumer("cutter").onMessage(m -> {
            got.add(m);
            if (got.size() == 1) {
                // on the link's thread, before any ACK of it: the message comes again on the next link
                self.get().core().severLinks();
            }
        }).build(); Producer p = asker(Duration.ofSeconds(30))) {
            self.set(cutter);
            Sent sent = p.send(cutter.name(), "once".getBytes(UTF_8));
            sent.delivered().get(10, TimeUnit.SECONDS);
            eventually(() -> cutter.stats().duplicates() >= 1);
            assertEquals(1, cutter.stats().duplicates(), "the message never came again: " + cutter.stats());
            // two receipts: the first copy's and the duplicate's; the second answers nothing any more
            eventually(() -> p.stats().duplicates() >= 1);
            assertEquals(1, p.stats().duplicates(), "the duplicate got no receipt: " + p.stats());
            assertEquals("once", text(got.take()));
            assertNull(got.poll(200, TimeUnit.MILLISECONDS), "the duplicate reached the handler");
        }
    }

    @Test
    void deliveredFailsWithNoRouteForAnEndpointThatIsGone() throws Exception {
        Consumer gone = fixture.consumer("gone").build();
        String name = gone.name();
        gone.close();
        try (Producer p = asker(Duration.ofSeconds(30))) {
            Sent sent = p.send(name, "anyone?".getBytes(UTF_8));
            ExecutionException e = assertThrows(ExecutionException.class,
                    () -> sent.delivered().get(20, TimeUnit.SECONDS));
            EndpointException why = (EndpointException) e.getCause();
            assertEquals(ErrorCode.NO_ROUTE, why.code(), why.getMessage());
            if (!fixture.acknowledgedByDestination()) {
                // the PC servlet took it; the destination's PC servlet answered in the destination's name
                sent.acknowledged().get(10, TimeUnit.SECONDS);
                assertTrue(why.getMessage().startsWith(name + " answered ERROR NO_ROUTE"), why.getMessage());
            }
            assertEquals(0, p.stats().receiptsAwaited());
        }
    }

    @Test
    void deliveredFailsWithTimeoutWhenNoReceiptComes() throws Exception {
        CountDownLatch entered = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        ExecutorService handlers = Executors.newSingleThreadExecutor();
        try (Consumer stuck = fixture.consumer("stuck").executor(handlers).onMessage(m -> {
            entered.countDown();
            release.await();
        }).build(); Producer p = asker(Duration.ofMillis(500))) {
            Sent sent = p.send(stuck.name(), "too slow".getBytes(UTF_8));
            ExecutionException e = assertThrows(ExecutionException.class,
                    () -> sent.delivered().get(10, TimeUnit.SECONDS));
            EndpointException why = (EndpointException) e.getCause();
            assertEquals(ErrorCode.TIMEOUT, why.code(), why.getMessage());
            assertEquals("no receipt from " + stuck.name() + " for message " + sent.sequence() + " within 500 ms",
                    why.getMessage());
            assertEquals(0, p.stats().receiptsAwaited(), "a receipt timed out is no longer remembered");
            assertEquals(1, p.stats().receiptsTimedOut());
            // the late receipt answers nothing awaited
            assertTrue(entered.await(10, TimeUnit.SECONDS), "the message never reached the handler");
            release.countDown();
            eventually(() -> p.stats().duplicates() >= 1);
            assertEquals(1, p.stats().duplicates(), "the late receipt never came: " + p.stats());
        } finally {
            release.countDown();
            handlers.shutdownNow();
        }
    }
}
