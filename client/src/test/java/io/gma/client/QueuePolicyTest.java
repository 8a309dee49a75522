package io.gma.client;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gma.wire.Command;
import io.gma.wire.ErrorCode;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A consumer that reads 100 messages a second, and a producer sending flat out: the producer's queue fills to
 * its limit and no further, each policy does what it says, and control traffic still gets through.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class QueuePolicyTest {
    private static final long LIMIT = 64 * 1024;
    private static final byte[] KB = new byte[1024];

    private DirectFixture fixture;
    private Consumer slow;
    /** While set, the consumer's handler waits on it: it takes nothing, and acknowledges nothing more. */
    private volatile CountDownLatch stopped;
    private final AtomicLong maxQueued = new AtomicLong();

    @BeforeEach
    void start() throws Exception {
        fixture = new DirectFixture();
        slow = fixture.consumer("slow").onMessage(m -> {
            if (m.command() == Command.DATA) {
                CountDownLatch s = stopped;
                if (s != null) {
                    s.await(30, TimeUnit.SECONDS);
                }
                Thread.sleep(10); // a deliberate pause, not a wait: 100 messages a second, on the link's own thread,
                // which stops reading meanwhile
            }
        }).build();
    }

    @AfterEach
    void stop() throws Exception {
        slow.close();
        fixture.close();
    }

    private Producer producer(FullQueuePolicy policy) throws EndpointException {
        return fixture.producer("fast").maxQueuedBytes(LIMIT).fullQueuePolicy(policy)
                .blockTimeout(Duration.ofMillis(300)).onMessage(m -> {
                    if (new String(m.data(), UTF_8).equals("stop")) {
                        m.reply("stopping".getBytes(UTF_8));
                    }
                }).build();
    }

    private void sample(Producer p) {
        maxQueued.accumulateAndGet(p.stats().queuedBytes(), Math::max);
    }

    @Test
    void failRefusesAtOnceWhenFull() throws Exception {
        try (Producer p = producer(FullQueuePolicy.FAIL)) {
            EndpointException full = null;
            for (int i = 0; i < 10_000 && full == null; i++) {
                try {
                    p.send(slow.name(), KB);
                } catch (EndpointException e) {
                    full = e;
                }
                sample(p);
            }
            assertTrue(full != null, "never full");
            assertEquals(ErrorCode.QUEUE_FULL, full.code());
            assertTrue(full.getMessage().startsWith("send queue for " + slow.name() + " is full: "), full.getMessage());
            long started = System.nanoTime();
            assertThrows(EndpointException.class, () -> p.send(slow.name(), KB));
            assertTrue(System.nanoTime() - started < TimeUnit.MILLISECONDS.toNanos(100), "FAIL waited");
            assertTrue(p.stats().rejected() >= 2);
            assertTrue(maxQueued.get() <= LIMIT, "queued " + maxQueued.get() + " bytes, limit " + LIMIT);
        }
    }

    @Test
    void blockWaitsThenFails() throws Exception {
        // a consumer that takes 100 a second acknowledges each message as it takes it, so a BLOCK send gets room
        // within tens of ms: this one stops taking, and room never comes
        stopped = new CountDownLatch(1);
        try (Producer p = producer(FullQueuePolicy.BLOCK)) {
            EndpointException full = null;
            long waited = 0;
            for (int i = 0; i < 10_000 && full == null; i++) {
                long started = System.nanoTime();
                try {
                    p.send(slow.name(), KB);
                } catch (EndpointException e) {
                    full = e;
                    waited = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
                }
                sample(p);
            }
            assertTrue(full != null, "never full");
            assertEquals(ErrorCode.QUEUE_FULL, full.code());
            assertTrue(waited >= 290, "failed after " + waited + " ms, blockTimeout is 300 ms");
            assertTrue(p.stats().waits() >= 1);
            assertTrue(maxQueued.get() <= LIMIT, "queued " + maxQueued.get() + " bytes, limit " + LIMIT);
        } finally {
            stopped.countDown();
        }
    }

    @Test
    void dropOldestCountsItsDrops() throws Exception {
        try (Producer p = producer(FullQueuePolicy.DROP_OLDEST)) {
            Sent first = null;
            for (int i = 0; i < 2_000; i++) {
                Sent s = p.send(slow.name(), KB); // never throws under DROP_OLDEST
                first = first == null ? s : first;
                sample(p);
            }
            assertTrue(p.stats().drops() > 0, p.stats().toString());
            assertTrue(maxQueued.get() <= LIMIT, "queued " + maxQueued.get() + " bytes, limit " + LIMIT);
        }
    }

    @Test
    void controlGetsThroughWhileTheQueueIsFull() throws Exception {
        try (Producer p = producer(FullQueuePolicy.FAIL)) {
            boolean full = false;
            for (int i = 0; i < 10_000 && !full; i++) {
                try {
                    p.send(slow.name(), KB);
                } catch (EndpointException e) {
                    full = true;
                }
            }
            assertTrue(full);
            // the jGMA paper's failure: the consumer's "stop" could not reach a producer stuck on a full queue
            long started = System.nanoTime();
            byte[] reply = slow.request(p.name(), "stop".getBytes(UTF_8), Duration.ofSeconds(20));
            long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
            assertArrayEquals("stopping".getBytes(UTF_8), reply);
            assertTrue(millis < 5_000, "the reply took " + millis + " ms");
        }
    }

    @Test
    void messageLargerThanTheQueueIsRefused() throws Exception {
        try (Producer p = producer(FullQueuePolicy.BLOCK)) {
            EndpointException e = assertThrows(EndpointException.class,
                    () -> p.send(slow.name(), new byte[(int) LIMIT]));
            assertTrue(e.getMessage().matches("message of \\d+ bytes exceeds maxQueuedBytes 65536"), e.getMessage());
        }
    }

    @Test
    void closingFailsWhatIsQueued() throws Exception {
        Producer p = producer(FullQueuePolicy.FAIL);
        Sent last = null;
        try {
            for (int i = 0; i < 10_000; i++) {
                last = p.send(slow.name(), KB);
            }
        } catch (EndpointException full) {
            // the queue is full: enough waiting
        }
        p.close();
        Sent pending = last;
        ExecutionException e = assertThrows(ExecutionException.class,
                () -> pending.acknowledged().get(5, TimeUnit.SECONDS));
        assertEquals(ErrorCode.SHUTTING_DOWN, ((EndpointException) e.getCause()).code());
    }
}
