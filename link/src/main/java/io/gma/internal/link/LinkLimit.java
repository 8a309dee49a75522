package io.gma.internal.link;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The most links one owner (an endpoint, or a PC servlet's uplink side) holds open at once, both ways: its
 * {@code maxLinks}. A link counts from the moment it opens (accepted: HELLO authenticated; outbound: WELCOME
 * received) until it closes; before, the {@link HandshakeAdmission} caps bound it. At the limit, an accepted link
 * is refused at HELLO with {@code ERROR QUEUE_FULL} (protocol-choices.md, "Too many links"), which its peer takes
 * as "no room now": it keeps its messages and tries again after its back-off. An outbound link is closed as it
 * opens, and its peer's messages wait likewise. The owner's other links go on. Refusals are counted
 * ({@code linksOverLimit}) and logged at most once per {@link #LOG_EVERY_NANOS}, with their number since the last
 * line.
 *
 * <p>Threads: links' event loops open and close; lock-free.
 */
public final class LinkLimit {
    private static final Logger LOG = LoggerFactory.getLogger(LinkLimit.class);
    /** The default: the scale issue 22 aims at for one PC servlet. */
    public static final int DEFAULT_MAX = 10_000;
    /** The largest limit that may be set. */
    public static final int MOST = 1_000_000;
    static final long LOG_EVERY_NANOS = TimeUnit.SECONDS.toNanos(10);

    private final int max;
    private final LongSupplier clock;
    private final AtomicInteger open = new AtomicInteger();
    /** Refusals since the last log line, and when that line was written (clock time; MIN_VALUE: never). */
    private final AtomicLong unlogged = new AtomicLong();
    private final AtomicLong loggedAt = new AtomicLong(Long.MIN_VALUE);

    /**
     * @param max the most links open at once, 1..{@value #MOST}
     * @throws IllegalArgumentException if {@code max} is outside 1..{@value #MOST}
     */
    public LinkLimit(int max) {
        this(max, System::nanoTime);
    }

    LinkLimit(int max, LongSupplier clock) {
        this.max = check(max);
        this.clock = clock;
    }

    /**
     * Checks a {@code maxLinks} setting.
     *
     * @return {@code max}
     * @throws IllegalArgumentException if {@code max} is outside 1..{@value #MOST}
     */
    public static int check(int max) {
        if (max < 1 || max > MOST) {
            throw new IllegalArgumentException("maxLinks " + max + " is outside 1.." + MOST + " (default "
                    + DEFAULT_MAX + ")");
        }
        return max;
    }

    /** A link opens: whether it may (it then counts until {@link #closed()}). */
    boolean tryOpen() {
        for (int n = open.get(); n < max; n = open.get()) {
            if (open.compareAndSet(n, n + 1)) {
                return true;
            }
        }
        return false;
    }

    /** A link that counted closed. */
    void closed() {
        open.decrementAndGet();
    }

    /**
     * The sentence of a refusal by {@code owner} of a link with {@code peer}, logged at most once per
     * {@link #LOG_EVERY_NANOS}.
     */
    String refused(String owner, String peer) {
        String sentence = owner + " has " + max + " links open, its most (maxLinks " + max + "): try again later";
        unlogged.incrementAndGet();
        long now = clock.getAsLong();
        long last = loggedAt.get();
        if ((last == Long.MIN_VALUE || now - last >= LOG_EVERY_NANOS) && loggedAt.compareAndSet(last, now)) {
            LOG.warn("{}: refused a link with {}: {} links are open, maxLinks {} (raise it with --max-links or"
                    + " maxLinks, with the open-file limit to match); links refused at the limit since the last such"
                    + " line: {} (logged at most once per {} s)", owner, peer, max, max, unlogged.getAndSet(0),
                    TimeUnit.NANOSECONDS.toSeconds(LOG_EVERY_NANOS));
        }
        return sentence;
    }

    /** Links open now. */
    public int open() {
        return open.get();
    }

    /** The most links open at once. */
    public int max() {
        return max;
    }
}
