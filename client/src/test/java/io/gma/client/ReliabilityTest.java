package io.gma.client;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Complete, ordered, exactly-once delivery while both endpoints live, across cut connections. */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class ReliabilityTest {

    /** Counts messages carrying 0, 1, 2, ... as 8-byte payloads; remembers the first gap or duplicate. */
    static final class InOrder implements MessageHandler {
        final AtomicLong next = new AtomicLong();
        final AtomicReference<String> broken = new AtomicReference<>();
        final CountDownLatch done;

        InOrder(long expected) {
            done = new CountDownLatch(1);
            this.expected = expected;
        }

        private final long expected;

        @Override
        public void onMessage(Incoming m) {
            long got = ByteBuffer.wrap(m.data()).getLong();
            long want = next.get();
            if (got != want) {
                broken.compareAndSet(null, "expected " + want + " but got " + got);
                return;
            }
            if (next.incrementAndGet() == expected) {
                done.countDown();
            }
        }
    }

    private static byte[] number(long i) {
        return ByteBuffer.allocate(8).putLong(i).array();
    }

    @Test
    void millionMessagesArriveCompleteInOrderWithoutDuplicates() throws Exception {
        long n = 1_000_000;
        InOrder check = new InOrder(n);
        try (DirectFixture f = new DirectFixture();
                Consumer sink = f.consumer("sink").onMessage(check).build();
                Producer source = f.producer("source").build()) {
            Sent last = null;
            for (long i = 0; i < n; i++) {
                last = source.send(sink.name(), number(i));
            }
            assertTrue(check.done.await(120, TimeUnit.SECONDS), "only " + check.next.get() + " of " + n
                    + " arrived; " + check.broken.get());
            last.acknowledged().get(10, TimeUnit.SECONDS);
            assertEquals(null, check.broken.get());
            assertEquals(n, check.next.get());
            // a duplicate would come now
            await().pollDelay(Duration.ZERO).during(Duration.ofMillis(100)).atMost(Duration.ofSeconds(2))
                    .until(() -> check.next.get() == n);
            assertEquals(n, check.next.get(), "more than " + n + " delivered");
        }
    }

    @Test
    void cutConnectionsLoseAndDuplicateNothing() throws Exception {
        long n = 200_000;
        InOrder check = new InOrder(n);
        try (DirectFixture f = new DirectFixture();
                Consumer sink = f.consumer("sink").onMessage(check).build();
                Producer source = f.producer("source").build()) {
            for (long i = 0; i < n; i++) {
                source.send(sink.name(), number(i));
                if (i % 40_000 == 20_000) {
                    // alternately cut at the sender and at the receiver, mid-stream
                    ((i / 40_000) % 2 == 0 ? source.core() : sink.core()).severLinks();
                }
            }
            assertTrue(check.done.await(120, TimeUnit.SECONDS), "only " + check.next.get() + " of " + n
                    + " arrived; " + check.broken.get());
            assertEquals(null, check.broken.get());
            // a duplicate would come now
            await().pollDelay(Duration.ZERO).during(Duration.ofMillis(200)).atMost(Duration.ofSeconds(2))
                    .until(() -> check.next.get() == n);
            assertEquals(n, check.next.get(), "more than " + n + " delivered");
            assertTrue(source.stats().reconnects() + sink.stats().reconnects() >= 1, source.stats().toString());
        }
    }

    @Test
    void requestsSurviveACutLink() throws Exception {
        try (DirectFixture f = new DirectFixture();
                Producer echo = f.producer("echo").onMessage(m -> m.reply(m.data())).build();
                Consumer asker = f.consumer("asker").build()) {
            for (int i = 0; i < 50; i++) {
                if (i % 10 == 5) {
                    asker.core().severLinks();
                }
                byte[] reply = asker.request(echo.name(), ("q" + i).getBytes(UTF_8), java.time.Duration.ofSeconds(10));
                assertEquals("q" + i, new String(reply, UTF_8));
            }
        }
    }
}
