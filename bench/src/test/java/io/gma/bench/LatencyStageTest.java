package io.gma.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
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
        Peer stalling = new Peer("stalling", (size, n) -> {
            if (calls.incrementAndGet() == 100) {
                Thread.sleep(50);
            }
            return new long[n];
        }, null);
        Histogram h = LatencyStage.atRate(stalling, 1_000, 300_000_000L);
        assertEquals(300, h.getTotalCount());
        long late = h.getCountBetweenValues(10_000_000L, Long.MAX_VALUE / 2);
        assertTrue(late >= 30 && late <= 60, late + " round trips of 10 ms or more, expected about 40");
    }
}
