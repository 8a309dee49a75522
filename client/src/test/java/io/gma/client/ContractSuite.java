package io.gma.client;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gma.wire.Command;
import io.gma.wire.ErrorCode;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
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
        consumer.send(producer.name(), Command.application(0x41), "stop".getBytes(UTF_8));
        Incoming m = atProducer.poll(10, TimeUnit.SECONDS);
        assertEquals(Command.application(0x41), m.command());
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
}
