package io.gma.internal.link;

import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;

/**
 * How long to wait before trying again after failures in a row: a ceiling that doubles from a minimum up to a
 * maximum, and a delay picked at random between half the ceiling and all of it, so that clients that failed
 * together do not all come back together.
 *
 * <pre>
 *   failures in a row   1      2      3      4     ...   7 and more (min 50 ms, max 5 s)
 *   ceiling             100    200    400    800         5000 ms
 *   delay               50-100 100-200 200-400 400-800   2500-5000 ms
 * </pre>
 *
 * A reconnecting peer uses 50 ms to 5 s; the PC servlet's forwarder and poller, whose every attempt is an HTTP
 * call, 100 ms to 5 s. Not thread-safe: a {@link Peer} guards its own with its monitor; a forwarder or a poller
 * uses its own from its one thread.
 */
public final class Backoff {
    /** Failures counted at most: enough for any ceiling, and no overflow however long the failing goes on. */
    private static final int MOST_FAILURES = 16;
    /** The ceiling stops doubling after this many failures (min << 10 is past any sensible max). */
    private static final int MOST_DOUBLINGS = 10;

    private final long minMillis;
    private final long maxMillis;
    private int failures;

    /**
     * @param min the first ceiling is twice this (the first delay is between min and 2 min)
     * @param max the ceiling at most
     * @throws IllegalArgumentException if min is not positive, or max is less than min
     */
    public Backoff(Duration min, Duration max) {
        if (min.isNegative() || min.isZero()) {
            throw new IllegalArgumentException("back-off min " + min + " is not positive");
        }
        if (max.compareTo(min) < 0) {
            throw new IllegalArgumentException("back-off max " + max + " is less than min " + min);
        }
        this.minMillis = min.toMillis();
        this.maxMillis = max.toMillis();
    }

    /** One more failure in a row: the delay before the next attempt, in milliseconds. */
    public long failed() {
        failures = Math.min(failures + 1, MOST_FAILURES);
        long ceiling = Math.min(maxMillis, minMillis << Math.min(failures, MOST_DOUBLINGS));
        return ceiling / 2 + ThreadLocalRandom.current().nextLong(ceiling / 2 + 1);
    }

    /** An attempt worked: the next failure starts from the minimum again. */
    public void reset() {
        failures = 0;
    }
}
