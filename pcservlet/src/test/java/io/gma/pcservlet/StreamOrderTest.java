package io.gma.pcservlet;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The order in which a receiving PC servlet takes the batches a sending domain has in flight. */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class StreamOrderTest {
    private final StreamOrder order = new StreamOrder();
    private final ExecutorService threads = Executors.newCachedThreadPool();

    @AfterEach
    void stop() {
        threads.shutdownNow();
    }

    private static StreamOrder.Position at(long stream, long epoch, long batch) {
        return new StreamOrder.Position(stream, epoch, batch);
    }

    private CompletableFuture<StreamOrder.Turn> awaitLater(String from, StreamOrder.Position p) {
        return CompletableFuture.supplyAsync(() -> {
            try {
                return order.await(from, p);
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
        }, threads);
    }

    @Test
    void aBatchOfAStreamThisSideForgotIsRefusedAtOnceOrAfterASecondNotTen() throws Exception {
        // a receiver that restarted meets batch n of an epoch whose first batch it never saw: past the window that
        // first batch went long ago (409 at once), within it the first may still be on its way (a second at most)
        long start = System.nanoTime();
        assertNull(order.await("d", at(0xA, 3, StreamOrder.MAX_WINDOW + 1)), "batch 17 of an unknown epoch");
        assertTrue(System.nanoTime() - start < TimeUnit.MILLISECONDS.toNanos(500), "at once");
        start = System.nanoTime();
        assertNull(order.await("d", at(0xA, 3, 2)), "batch 2 of an unknown epoch, its first never coming");
        long waited = System.nanoTime() - start;
        assertTrue(waited >= StreamOrder.UNKNOWN_WAIT_NANOS && waited < StreamOrder.WAIT_NANOS / 2,
                "waited " + waited / 1_000_000 + " ms");
        // the first that comes late within the second still starts the epoch, and the waiter takes its turn after
        CompletableFuture<StreamOrder.Turn> second = awaitLater("d", at(0xB, 1, 2));
        Thread.sleep(200);
        order.await("d", at(0xB, 1, 1)).endIfOpen(true);
        assertNotNull(second.get(5, TimeUnit.SECONDS), "batch 2 after a late batch 1");
    }

    @Test
    void aDomainSendingOnTwoStreamsHasEachTakenInItsOwnOrder() throws Exception {
        // an outbound-only domain sends to two domains through the one it polls: one stream each
        order.await("o", at(0xA, 1, 1)).endIfOpen(true);
        order.await("o", at(0xB, 1, 1)).endIfOpen(true);
        // stream A's second batch: its turn, not a wait for a batch 1 of A that stream B replaced
        StreamOrder.Turn second = awaitLater("o", at(0xA, 1, 2)).get(5, TimeUnit.SECONDS);
        assertNotNull(second, "stream A's batch 2 was refused");
        second.endIfOpen(true);
    }

    @Test
    void aBatchOfTheOldEpochRefusedLateDoesNotBreakTheNewEpoch() throws Exception {
        order.await("d", at(0xA, 1, 1)).endIfOpen(true);
        StreamOrder.Turn old = order.await("d", at(0xA, 1, 2)); // being taken, slowly
        // meanwhile the sender's oldest batch failed on its side: it goes back, in a new epoch
        CompletableFuture<StreamOrder.Turn> first = awaitLater("d", at(0xA, 2, 1));
        Thread.sleep(200);
        assertFalse(first.isDone(), "taken while the old batch was being taken");
        old.endIfOpen(false); // the old batch refused for now (429): its epoch, not the new one, is broken
        StreamOrder.Turn turn = first.get(5, TimeUnit.SECONDS);
        assertNotNull(turn, "the new epoch's batch 1 was refused");
        turn.endIfOpen(true);
        assertNotNull(order.await("d", at(0xA, 2, 2)), "the new epoch's batch 2 was refused");
    }
}
