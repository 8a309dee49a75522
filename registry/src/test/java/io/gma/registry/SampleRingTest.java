package io.gma.registry;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The ring of a PC servlet's samples: it holds its capacity and no more, the oldest going first; a short period
 * comes back as the samples' own rates and depths, a long one as buckets whose rate is what their samples counted
 * over the time they span, whose depth is the deepest sample, never more of them than asked for.
 */
class SampleRingTest {
    /** A sample every 10 s from {@code t0}: 10 messages in and 5 out a second, the queue as deep as i % 7. */
    private static SampleRing steady(int capacity, int samples, long t0) {
        SampleRing ring = new SampleRing(capacity);
        for (int i = 0; i < samples; i++) {
            ring.add(t0 + i * 10_000L, i * 100L, i * 50L, i % 7, (i % 7) * 100L);
        }
        return ring;
    }

    @Test
    void itHoldsItsCapacityTheOldestGoingFirst() {
        SampleRing ring = steady(100, 250, 0);
        assertEquals(100, ring.size());
        assertEquals(249 * 10_000L, ring.newest());
        SampleRing.Points all = ring.read(0, 1000);
        assertEquals(100, all.at().size());
        assertEquals(150 * 10_000L, all.at().get(0)); // samples 150..249
        assertEquals(249 * 10_000L, all.at().get(99));
        assertNull(all.in().get(0), "the oldest kept has none before it to count from");
        assertEquals(10.0, all.in().get(1), 1e-9);
        assertEquals(5.0, all.out().get(99), 1e-9);
        assertEquals(List.of(3L, 4L, 5L), all.queuedMessages().subList(0, 3)); // 150 % 7 == 3
    }

    @Test
    void aShortPeriodIsTheSamplesThemselves() {
        SampleRing ring = steady(8_640, 60, 1_000_000);
        SampleRing.Points p = ring.read(1_000_000 + 30 * 10_000L, 720);
        assertEquals(30, p.at().size());
        assertTrue(p.in().stream().allMatch(r -> Math.abs(r - 10.0) < 1e-9), p.in().toString());
        assertTrue(p.out().stream().allMatch(r -> Math.abs(r - 5.0) < 1e-9), p.out().toString());
        assertEquals(30 * 10_000L + 1_000_000, p.at().get(0));
        assertEquals(0, ring.read(2_000_000_000L, 720).at().size(), "nothing after the newest");
    }

    @Test
    void aLongPeriodIsBucketsOfTheRatesCountedAndTheDeepestQueue() {
        SampleRing ring = steady(8_640, 8_640, 0); // a day at 10 s
        SampleRing.Points p = ring.read(0, 720);
        assertTrue(p.at().size() <= 720 && p.at().size() >= 700, p.at().size() + " points");
        for (int i = 1; i < p.at().size(); i++) {
            assertEquals(10.0, p.in().get(i), 1e-9, "bucket " + i);
            assertEquals(5.0, p.out().get(i), 1e-9, "bucket " + i);
            assertEquals(6L, p.queuedMessages().get(i), "a bucket of 12 samples holds a depth of 6 (i % 7)");
            assertEquals(600L, p.queuedBytes().get(i));
            assertTrue(p.at().get(i) > p.at().get(i - 1));
        }
        assertEquals(8_639 * 10_000L, p.at().get(p.at().size() - 1), "the last bucket ends at the newest sample");

        // uneven rates: a bucket's rate is what it counted over the time it spans, not a mean of the rates
        SampleRing uneven = new SampleRing(100);
        uneven.add(0, 0, 0, 0, 0);
        uneven.add(1_000, 100, 0, 0, 0); // 100/s for 1 s
        uneven.add(10_000, 190, 0, 0, 0); // 10/s for 9 s
        uneven.add(20_000, 190, 0, 9, 0);
        SampleRing.Points two = uneven.read(0, 3); // buckets of 10,001 ms: [0, 1,000, 10,000] and [20,000]
        assertEquals(2, two.at().size(), two.toString());
        assertEquals(19.0, two.in().get(0), 1e-9); // 190 messages in 10 s, where the mean of the rates is 55
        assertEquals(0.0, two.in().get(1), 1e-9);
        assertEquals(9L, two.queuedMessages().get(1));
    }

    @Test
    void aCounterThatWentBackCountsNothing() {
        SampleRing ring = new SampleRing(10);
        ring.add(0, 1000, 1000, 0, 0);
        ring.add(1_000, 1010, 1005, 0, 0);
        ring.add(2_000, 3, 2, 0, 0); // the PC servlet restarted
        ring.add(3_000, 13, 7, 0, 0);
        SampleRing.Points p = ring.read(0, 10);
        assertEquals(10.0, p.in().get(1), 1e-9);
        assertNull(p.in().get(2));
        assertNull(p.out().get(2));
        assertEquals(10.0, p.in().get(3), 1e-9);
        SampleRing.Points one = ring.read(0, 1);
        assertTrue(one.at().size() <= 2, one.toString());
        assertEquals(10.0, one.in().get(0), 1e-9, "20 counted over 2 s: the pair that went back is left out");
    }
}
