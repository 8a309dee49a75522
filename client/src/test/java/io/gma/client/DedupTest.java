package io.gma.client;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.Random;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(value = 60, unit = TimeUnit.SECONDS)
class DedupTest {
    @Test
    void remembersExactlyTheHighestDeliveredNumbersWhateverTheGaps() {
        Dedup.Seen seen = new Dedup.Seen();
        Random random = new Random(7);
        TreeSet<Long> model = new TreeSet<>();
        long seq = 1;
        for (int i = 0; i < 300_000; i++) {
            long s;
            int kind = random.nextInt(20);
            if (kind == 0 && !model.isEmpty()) {
                s = model.last() - random.nextInt(50); // a repeat of a recent number, or a late one
            } else if (kind == 1 && !model.isEmpty()) {
                s = Math.max(1, model.first() + random.nextInt(100_000) - 50_000); // around the lowest remembered
            } else {
                s = seq += 1 + random.nextInt(2_000); // gaps: a sender with many destinations
            }
            boolean fresh = !model.contains(s) && s > 0;
            assertEquals(fresh, seen.add(s), "at " + i + " seq " + s);
            if (fresh) {
                model.add(s);
                if (model.size() > Dedup.REMEMBERED) {
                    model.pollFirst();
                }
            }
        }
        assertEquals(Dedup.REMEMBERED, model.size());
    }

    @Test
    void numbersArrivingBackwardsAreEachDeliveredOnce() {
        Dedup.Seen seen = new Dedup.Seen();
        for (long s = 5_000; s >= 1; s--) {
            assertTrue(seen.add(s), "first time " + s);
        }
        for (long s = 1; s <= 5_000; s++) {
            assertFalse(seen.add(s), "again " + s);
        }
        assertTrue(seen.add(-1L), "the highest unsigned number sorts above the others");
        assertFalse(seen.add(-1L));
        assertFalse(seen.add(4_999));
    }

    @Test
    void lateReplyAfterManyOtherSequencesIsStillDelivered() throws Exception {
        AtomicReference<Incoming> slow = new AtomicReference<>();
        try (DirectFixture f = new DirectFixture();
                Producer echo = f.producer("echo").onMessage(m -> {
                    if (new String(m.data(), UTF_8).equals("slow")) {
                        slow.set(m);
                    } else {
                        m.reply(m.data());
                    }
                }).build();
                Consumer asker = f.consumer("asker").build()) {
            CompletableFuture<byte[]> first = asker.requestAsync(echo.name(), "slow".getBytes(UTF_8));
            await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(5)).until(() -> slow.get() != null);
            for (int i = 0; i < 70_000; i++) {
                asker.core().nextSequence(); // messages to other peers
            }
            asker.request(echo.name(), "fast".getBytes(UTF_8), Duration.ofSeconds(5));
            slow.get().reply("late".getBytes(UTF_8));
            assertEquals("late", new String(first.get(5, TimeUnit.SECONDS), UTF_8));
        }
    }

    @Test
    void controlOvertakingOldDataLosesNothing() throws Exception {
        LinkedBlockingQueue<String> got = new LinkedBlockingQueue<>();
        try (DirectFixture f = new DirectFixture();
                Producer sink = f.producer("sink").onMessage(m -> got.add(new String(m.data(), UTF_8))).build();
                Consumer c = f.consumer("c").build()) {
            Sent d = c.send(sink.name(), "old data".getBytes(UTF_8));
            for (int i = 0; i < 70_000; i++) {
                c.core().nextSequence();
            }
            c.unsubscribe(sink.name()); // control lane, a much higher number, may go first
            d.acknowledged().get(10, TimeUnit.SECONDS);
            assertEquals("old data", got.poll(5, TimeUnit.SECONDS));
            assertEquals(0, sink.stats().duplicates());
        }
    }

    @Test
    void queueCannotOutgrowWhatReceiversRemember() {
        assertFalse(Dedup.REMEMBERED < 65_536);
        IllegalArgumentException e = org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class,
                () -> Producer.builder().maxQueuedMessages(65_537));
        assertTrue(e.getMessage().equals("maxQueuedMessages 65537 is outside 1..65536"), e.getMessage());
    }

    @Test
    void aRecordKeptBeyondItsSendersByeOrEvictionSaysItIsForgotten() {
        Dedup dedup = new Dedup();
        Dedup.Seen a = dedup.of("a@lan");
        assertTrue(a == dedup.of("a@lan"), "one record a sender");
        assertTrue(a.add(7));
        dedup.forget("a@lan");
        assertTrue(a.forgotten, "a link that kept it looks the sender up again");
        Dedup.Seen again = dedup.of("a@lan");
        assertFalse(again.forgotten);
        assertTrue(again.add(7), "a sender that said BYE starts afresh");
        for (int i = 0; i < 4096; i++) {
            dedup.of("s" + i + "@lan");
        }
        assertTrue(again.forgotten, "the least recently used of 4,097 senders");
    }

    @Test
    void aBusySenderWhoseRecordIsKeptStaysRecentWhileThousandsOfOthersSendOnce() {
        // as the Inbox does: a link keeps its sender's record from message to message, and looks it up again when
        // the record says it is due; meanwhile more than MAX_SENDERS others each send one message
        Dedup dedup = new Dedup();
        Dedup.Seen busy = dedup.of("busy@lan");
        int others = 0;
        for (long seq = 1; seq <= 3 * Dedup.MAX_SENDERS; seq++) {
            synchronized (busy) {
                if (busy.due()) {
                    dedup.of("busy@lan");
                }
                busy.add(seq);
            }
            dedup.of("other-" + others++ + "@lan");
        }
        assertTrue(!busy.forgotten && dedup.remembers("busy@lan"), "the busy sender was pushed out by " + others
                + " senders of one message each");
    }
}
