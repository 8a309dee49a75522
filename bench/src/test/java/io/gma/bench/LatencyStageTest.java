package io.gma.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.HdrHistogram.Histogram;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(value = 30, unit = TimeUnit.SECONDS)
class LatencyStageTest {
    /**
     * One stall of 50 ms among round trips that take nothing, offered 1,000 a second: the round trips due during
     * the stall count their wait (about 50 of them at 10 ms or more), not just the one that stalled, as a timer
     * started at the send would have it.
     */
    @Test
    void aStallCountsForEveryRoundTripItHeldUp() throws Exception {
        AtomicInteger calls = new AtomicInteger();
        AtomicLong stalledNanos = new AtomicLong();
        Peer stalling = new Peer("stalling", (size, n) -> {
            if (calls.incrementAndGet() == 100) {
                long t = System.nanoTime();
                Thread.sleep(50);
                stalledNanos.set(System.nanoTime() - t); // a loaded machine sleeps longer than asked
            }
            return new long[n];
        }, null);
        Histogram h = LatencyStage.atRate(stalling, 1_000, 300_000_000L);
        assertEquals(300, h.getTotalCount());
        long late = h.getCountBetweenValues(10_000_000L, Long.MAX_VALUE / 2);
        // a stall of S ms holds up the round trips due in it, one a millisecond: about S - 10 of them wait 10 ms
        // or more (a timer started at the send would count 1); the machine's own pauses may add a few
        long stalled = TimeUnit.NANOSECONDS.toMillis(stalledNanos.get());
        assertTrue(late >= stalled - 20 && late <= stalled + 20, late + " round trips of 10 ms or more, expected"
                + " about " + (stalled - 10) + " after a stall of " + stalled + " ms");
    }
}
