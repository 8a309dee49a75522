package io.gma.internal.link;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(10)
class BackoffTest {
    /** The delays of failures 1 to n in a row, many times over: each within half its ceiling and all of it. */
    private static void assertDelays(long minMillis, long maxMillis) {
        for (int run = 0; run < 200; run++) {
            Backoff b = new Backoff(Duration.ofMillis(minMillis), Duration.ofMillis(maxMillis));
            for (int failures = 1; failures <= 40; failures++) {
                long ceiling = Math.min(maxMillis, minMillis << Math.min(failures, 10));
                long delay = b.failed();
                assertTrue(delay >= ceiling / 2 && delay <= ceiling, "failure " + failures + ": " + delay
                        + " ms is outside " + ceiling / 2 + ".." + ceiling);
            }
        }
    }

    @Test
    void aPeerWaitsFiftyToOneHundredMillisecondsFirstAndAtMostFiveSeconds() {
        assertDelays(50, 5_000);
    }

    @Test
    void aForwarderWaitsOneHundredToTwoHundredMillisecondsFirstAndAtMostFiveSeconds() {
        assertDelays(100, 5_000);
    }

    @Test
    void resetStartsFromTheMinimumAgain() {
        Backoff b = new Backoff(Duration.ofMillis(50), Duration.ofSeconds(5));
        for (int i = 0; i < 10; i++) {
            b.failed();
        }
        b.reset();
        long delay = b.failed();
        assertTrue(delay >= 50 && delay <= 100, delay + " ms");
    }

    @Test
    void refusesBoundsThatMakeNoSense() {
        assertEquals("back-off min PT0S is not positive", assertThrows(IllegalArgumentException.class,
                () -> new Backoff(Duration.ZERO, Duration.ofSeconds(1))).getMessage());
        assertEquals("back-off max PT0.01S is less than min PT0.1S", assertThrows(IllegalArgumentException.class,
                () -> new Backoff(Duration.ofMillis(100), Duration.ofMillis(10))).getMessage());
    }
}
