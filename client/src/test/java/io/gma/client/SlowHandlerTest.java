package io.gma.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A handler that takes 100 ms a message, on the link's event loop (no executor), behind a burst that arrives in
 * one read: ACKs go on as messages are taken, so the producer never takes the consumer for dead, nothing is
 * resent, and nothing reaches dedup twice (issue 22).
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class SlowHandlerTest {
    /** Three intervals of silence make a peer dead: 1.2 s, against 3 s of handling. */
    private static final Duration PING = Duration.ofMillis(400);
    private static final int MESSAGES = 30;
    private static final long HANDLER_MILLIS = 100;
    /**
     * Messages taken and not yet acknowledged at the producer as a handler starts, at most: 500 ms of them, for a
     * busy machine (an ACK follows a take within about 35 ms).
     */
    private static final int ACK_SLACK = 5;

    @Test
    void aHandlerOf100MillisecondsAMessageKeepsAcksFlowingAndNothingIsResent() throws Exception {
        try (DirectFixture f = new DirectFixture()) {
            slowHandler(f);
        }
    }

    @Test
    void overTlsToo() throws Exception {
        try (TlsFixture f = new TlsFixture()) {
            slowHandler(f);
        }
    }

    @Test
    void aBurstSentOnALinkItsHandlerHoldsGoesOutAtOnce() throws Exception {
        // b's handler holds the link a's message came by for 3 s; meanwhile b's application sends a burst to a,
        // close together (a stream, left to the loop): the loop writes it though it does not read the link, and
        // a has it long before the handler returns
        int warmUp = 50_000;
        CountDownLatch warm = new CountDownLatch(warmUp);
        CountDownLatch burst = new CountDownLatch(200);
        java.util.concurrent.Semaphore handling = new java.util.concurrent.Semaphore(0);
        try (DirectFixture f = new DirectFixture();
                Producer a = f.producer("a").onMessage(m -> (m.data()[0] == 0 ? warm : burst).countDown()).build();
                Producer b = f.producer("b").onMessage(m -> {
                    handling.release();
                    Thread.sleep(3_000); // a deliberate pause: the handler holds its link
                }).build()) {
            a.send(b.name(), new byte[] {0}); // the link, a's, which b sends on too
            assertTrue(handling.tryAcquire(10, TimeUnit.SECONDS), "b's handler ran");
            Thread.sleep(3_100);
            for (int i = 0; i < warmUp; i++) { // compiled, b's sends come microseconds apart: a stream
                b.send(a.name(), new byte[] {0});
            }
            assertTrue(warm.await(30, TimeUnit.SECONDS), "the warm-up reached a");
            a.send(b.name(), new byte[] {0});
            assertTrue(handling.tryAcquire(10, TimeUnit.SECONDS), "b's handler ran again");
            Thread.sleep(100); // the link is held by now (the stall guard looks every 10 ms)
            long start = System.nanoTime();
            for (int i = 0; i < 200; i++) {
                b.send(a.name(), new byte[] {1});
            }
            assertTrue(burst.await(1_500, TimeUnit.MILLISECONDS), (200 - burst.getCount()) + " of 200 messages"
                    + " reached a in 1.5 s, while b's handler held the link");
            assertTrue(System.nanoTime() - start < TimeUnit.MILLISECONDS.toNanos(2_000),
                    "before the handler returned");
        }
    }

    /** The consumer's handler takes 100 ms a message, behind a burst: ACKs follow, nothing is resent. */
    private static void slowHandler(Fixture f) throws Exception {
        List<Sent> sent = new ArrayList<>();
        List<Long> order = new ArrayList<>();
        List<String> late = new ArrayList<>();
        CountDownLatch done = new CountDownLatch(MESSAGES);
        try (Consumer slow = f.consumer("slow").pingInterval(PING).onMessage(m -> {
                    long k = ByteBuffer.wrap(m.data()).getLong();
                    // every message taken 500 ms ago or more is acknowledged by now: an ACK follows each take
                    long acked = acknowledged(sent);
                    if (acked < k - ACK_SLACK) {
                        late.add("as message " + k + " was handled, only " + acked + " were acknowledged");
                    }
                    order.add(k);
                    Thread.sleep(HANDLER_MILLIS); // a deliberate pause: the handler is slow
                    done.countDown();
                }).build();
                Producer p = f.producer("p").pingInterval(PING).build()) {
            synchronized (sent) {
                // queued together, before the link opens: the link writes them at once, and they arrive in one read
                for (long k = 0; k < MESSAGES; k++) {
                    sent.add(p.send(slow.name(), ByteBuffer.allocate(64).putLong(k).array()));
                }
            }
            assertTrue(done.await(30, TimeUnit.SECONDS), "handled " + order.size() + " of " + MESSAGES);
            sent.get(MESSAGES - 1).acknowledged().get(5, TimeUnit.SECONDS);
            List<Long> expected = new ArrayList<>();
            for (long k = 0; k < MESSAGES; k++) {
                expected.add(k);
            }
            assertEquals(expected, order, "each message once, in order");
            assertEquals(List.of(), late, "ACKs must follow what the handler took");
            EndpointStats producer = p.stats();
            EndpointStats consumer = slow.stats();
            assertEquals(0, producer.reconnects(), "the producer took the consumer for dead: " + producer);
            assertEquals(0, consumer.reconnects(), "the consumer took the producer for dead: " + consumer);
            assertEquals(MESSAGES, producer.messagesOut(), "resent: " + producer);
            assertEquals(0, consumer.duplicates(), "duplicates reached dedup: " + consumer);
        }
    }

    /**
     * One event loop serves both of the hub's links (ioThreads 1), and a's handler waits until b's message is
     * handled: that can only happen if the loop goes on without the thread a's handler holds (issue 22). Without
     * it, a's handler waits out its 20 s and the test fails.
     */
    @Test
    void aHandlerThatHoldsItsThreadDoesNotHoldTheOtherLinksOfItsLoop() throws Exception {
        CountDownLatch aStarted = new CountDownLatch(1);
        CountDownLatch bHandled = new CountDownLatch(1);
        List<Boolean> aSawB = new ArrayList<>();
        try (DirectFixture f = new DirectFixture();
                Producer a = f.producer("a").build();
                Producer b = f.producer("b").build();
                Consumer hub = f.consumer("hub").ioThreads(1).onMessage(m -> {
                    if (m.from().equals(a.name())) {
                        aStarted.countDown();
                        boolean saw = bHandled.await(20, TimeUnit.SECONDS); // held until b's message is handled
                        synchronized (aSawB) {
                            aSawB.add(saw);
                        }
                    } else {
                        bHandled.countDown();
                    }
                }).build()) {
            Sent first = a.send(hub.name(), "hold".getBytes());
            assertTrue(aStarted.await(10, TimeUnit.SECONDS), "a's message was not handled");
            b.send(hub.name(), "go".getBytes()).acknowledged().get(10, TimeUnit.SECONDS);
            first.acknowledged().get(10, TimeUnit.SECONDS);
            synchronized (aSawB) {
                assertEquals(List.of(true), aSawB, "b's message was handled while a's handler held its thread");
            }
            assertEquals(0, hub.stats().reconnects(), "a link was taken for dead: " + hub.stats());
        }
    }

    /** How many of {@code sent}, from the first, are acknowledged. */
    private static long acknowledged(List<Sent> sent) {
        synchronized (sent) {
            long n = 0;
            for (Sent s : sent) {
                if (!s.acknowledged().isDone()) {
                    break;
                }
                n++;
            }
            return n;
        }
    }
}
