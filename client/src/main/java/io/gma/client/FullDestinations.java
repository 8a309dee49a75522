package io.gma.client;

import io.gma.internal.link.WhenFull;
import io.gma.wire.ErrorCode;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Destinations in other domains that this endpoint's PC servlet said are full, so that sends to them wait or fail
 * as sends to a full send queue do, while the other destinations on the same uplink flow.
 *
 * <p>On a direct link a full destination fills its own send queue. Across domains every destination shares the
 * uplink, whose acknowledgements are cumulative (protocol.md section 4): the PC servlet cannot leave one
 * destination's message unacknowledged without holding up all that follow. So it refuses a message for a
 * destination that is full (its share of the queue for that domain taken) with ERROR QUEUE_FULL, and
 * acknowledges it. That ERROR {@link #refused marks} the destination here for {@link #PAUSE_NANOS}:
 *
 * <pre>
 *   ERROR QUEUE_FULL from D  -&gt; D marked for PAUSE (again, if marked)
 *   send to D, marked        -&gt; FAIL: QUEUE_FULL at once; BLOCK: waits (up to blockTimeout), then QUEUE_FULL;
 *                               DROP_OLDEST: goes (there is nothing of D's here to drop)
 *   PAUSE over               -&gt; one send goes ahead, the probe; the others wait or fail as before, until
 *   the probe acknowledged   -&gt; D no longer marked, unless its ERROR came first (marked again)
 * </pre>
 *
 * What was sent before the mark, and the probe, may be refused all the same: its sender learns it from the
 * ERROR (a receipt or a request fails with QUEUE_FULL). Any thread; no lock but this object's monitor, on which
 * BLOCK sends wait for a mark to go.
 */
final class FullDestinations {
    /** How long a destination stays marked after a refusal: as long as a PC servlet's default Retry-After. */
    static final long PAUSE_NANOS = TimeUnit.SECONDS.toNanos(1);
    /** Past this many marks, expired ones are swept as a new one comes: names from the network stay bounded. */
    private static final int SWEEP_OVER = 1024;

    /** A destination found full: until when, why (the PC servlet's sentence), and the probe under way. */
    private static final class Mark {
        final long at = System.nanoTime();
        final long until = at + PAUSE_NANOS;
        final String why;
        /** Until when (System.nanoTime) a probe's acknowledgement is awaited; 0: no probe out. */
        final AtomicLong probing = new AtomicLong();

        Mark(String why) {
            this.why = why;
        }
    }

    private final Map<String, Mark> marks = new ConcurrentHashMap<>();
    /** How many marks there are: sends to other domains look no further while it is 0. */
    private final AtomicInteger marked = new AtomicInteger();
    private final Counters counters;

    FullDestinations(Counters counters) {
        this.counters = counters;
    }

    /** Whether any destination is marked: a volatile read, all a send pays while none is. */
    boolean any() {
        return marked.get() != 0;
    }

    /**
     * An ERROR QUEUE_FULL came from {@code destination} (a destination in another domain, through the uplink):
     * it is marked full for PAUSE_NANOS from now.
     *
     * @param why the ERROR's text, which names the destination and the limit it met
     */
    void refused(String destination, String why) {
        if (marks.size() > SWEEP_OVER) {
            long now = System.nanoTime();
            marks.forEach((d, m) -> {
                if (m.until - now <= 0 && m.probing.get() == 0 && marks.remove(d, m)) {
                    marked.decrementAndGet();
                }
            });
        }
        if (marks.put(destination, new Mark(why)) == null) {
            marked.incrementAndGet();
        }
        changed();
    }

    /**
     * Before a data message to {@code to} goes up the uplink: nothing while {@code to} is not marked; else, under
     * the policy, waits for the mark to go or fails as a full send queue would.
     *
     * @return the mark this message probes (see {@link #probed}), or null
     * @throws EndpointException QUEUE_FULL, naming {@code to} and the limit: at once under FAIL, after
     *     {@code blockNanos} under BLOCK
     */
    Object admit(String to, WhenFull policy, long blockNanos) throws EndpointException {
        long deadline = System.nanoTime() + blockNanos;
        boolean waited = false;
        while (true) {
            Mark m = marks.get(to);
            if (m == null || policy == WhenFull.DROP_OLDEST) {
                return null;
            }
            long now = System.nanoTime();
            long probe = m.probing.get();
            if (m.until - now <= 0 && (probe == 0 || probe - now <= 0)
                    && m.probing.compareAndSet(probe, now + PAUSE_NANOS)) {
                return m; // the pause is over: this one finds out whether there is room again
            }
            if (policy != WhenFull.BLOCK || deadline - now <= 0) {
                counters.fullDestinationRejected.increment();
                throw new EndpointException(ErrorCode.QUEUE_FULL, "not sent to " + to + ": its PC servlet refused"
                        + " a message for it " + TimeUnit.NANOSECONDS.toMillis(now - m.at) + " ms ago, and sends to"
                        + " it wait or fail for " + TimeUnit.NANOSECONDS.toMillis(PAUSE_NANOS) + " ms after that: "
                        + m.why);
            }
            if (!waited) {
                waited = true;
                counters.fullDestinationWaits.increment();
            }
            // wakes when a mark changes, or when this one's pause or probe runs out, or at the deadline
            long until = m.until - now > 0 ? m.until : probe;
            awaitChange(to, m, Math.min(deadline - now, Math.max(until - now, 1)));
        }
    }

    /**
     * The probe {@code mark} let through was acknowledged by the PC servlet ({@code taken}), or failed on the way:
     * taken, and no ERROR marked {@code to} again meanwhile, {@code to} has room again; failed, another send may
     * probe.
     */
    void probed(String to, Object mark, boolean taken) {
        Mark m = (Mark) mark;
        if (!taken) {
            m.probing.set(0);
        } else if (marks.remove(to, m)) {
            marked.decrementAndGet();
        }
        changed();
    }

    /** Waits up to {@code nanos} for a change of the marks, unless {@code to}'s mark {@code m} changed already. */
    private synchronized void awaitChange(String to, Mark m, long nanos) throws EndpointException {
        try {
            if (marks.get(to) == m && (m.until - System.nanoTime() > 0 || m.probing.get() != 0)) {
                TimeUnit.NANOSECONDS.timedWait(this, nanos);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new EndpointException(ErrorCode.QUEUE_FULL, "interrupted while waiting for room: " + m.why, e);
        }
    }

    private synchronized void changed() {
        notifyAll();
    }
}
