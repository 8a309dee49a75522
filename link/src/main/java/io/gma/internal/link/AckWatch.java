package io.gma.internal.link;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.PriorityQueue;

/**
 * The data messages of a send queue whose futures were asked for before they were acknowledged, lowest index
 * first. Data messages are numbered as they are queued ({@link QueuedMessage#index}) and acknowledged in that
 * order, so an ACK that brings the queue's last acknowledged index to n completes every future watched up to
 * n. Messages dropped under DROP_OLDEST are failed at once, so their entries are skipped when an ACK passes
 * them, or swept out once they outnumber the messages queued ({@link #sweepFailed}).
 *
 * <p>Not thread-safe: the send queue's lock guards it. It completes no future itself: it hands back those to
 * complete, and the queue completes them once it let go of its lock ({@link #acknowledge}, {@link #fail}).
 */
final class AckWatch {
    /** Refusals remembered at most: a peer refuses what is in flight, and a window holds 65,536 at most. */
    static final int MAX_REFUSED = 65_536;
    /**
     * Sequence numbers the peer refused with an ERROR it wrote before the ACK that passes them (a PC servlet's
     * uplink, for a destination that is full: docs/pcservlet.md), with why; their futures fail when the ACK comes.
     */
    private final LinkedHashMap<Long, LinkException> refused = new LinkedHashMap<>() {
        private static final long serialVersionUID = 1L;

        @Override
        protected boolean removeEldestEntry(Map.Entry<Long, LinkException> eldest) {
            return size() > MAX_REFUSED;
        }
    };
    /** Refused messages an ACK passed, to fail once the queue's lock is let go; null when none. */
    private List<QueuedMessage> refusedPassed;
    private final PriorityQueue<QueuedMessage> watched = new PriorityQueue<>((a, b) -> Long.compare(a.index,
            b.index));

    /** Watches {@code m}, whose future was just made, until the ACK that passes its index. */
    void add(QueuedMessage m) {
        watched.add(m);
    }

    /**
     * Stops watching every message up to index {@code acked}.
     *
     * @return those of them not failed, whose futures are to complete; null when none
     */
    List<QueuedMessage> passedBy(long acked) {
        List<QueuedMessage> done = null;
        while (!watched.isEmpty() && watched.peek().index <= acked) {
            QueuedMessage m = watched.poll();
            LinkException no = refused.isEmpty() || m.failure != null ? null : refused.remove(m.sequence());
            if (no != null) {
                m.failure = no;
                if (refusedPassed == null) {
                    refusedPassed = new ArrayList<>();
                }
                refusedPassed.add(m);
            } else if (m.failure == null) { // else dropped, and failed then
                if (done == null) {
                    done = new ArrayList<>();
                }
                done.add(m);
            }
        }
        return done;
    }

    /** The peer refused the message numbered {@code sequence}: its future fails with {@code why} at the ACK. */
    void refuse(long sequence, LinkException why) {
        refused.put(sequence, why);
    }

    /** How the peer refused the message numbered {@code sequence}, if it did (and it is remembered); else null. */
    LinkException refusal(long sequence) {
        return refused.isEmpty() ? null : refused.remove(sequence);
    }

    /** The link is gone: what it refused goes again on the next, which answers afresh. */
    void forgetRefused() {
        refused.clear();
    }

    /** The refused messages the last {@link #passedBy} passed, marked failed, for {@link #fail}; null when none. */
    List<QueuedMessage> takeRefused() {
        List<QueuedMessage> r = refusedPassed;
        refusedPassed = null;
        return r;
    }

    /**
     * A peer that acknowledges nothing while callers wait on what is dropped: once the entries outnumber the
     * {@code queued} messages, those of failed messages go. The others are queued, so a sweep removes half the
     * entries at least, and costs O(1) a drop over time.
     */
    void sweepFailed(int queued) {
        if (watched.size() > 2L * queued + 64) {
            watched.removeIf(m -> m.failure != null);
        }
    }

    /** Stops watching everything; those not failed yet, for {@link #markFailed} with the queue's reason. */
    List<QueuedMessage> removeWaiting() {
        List<QueuedMessage> waiting = new ArrayList<>();
        for (QueuedMessage m : watched) {
            if (m.failure == null) {
                waiting.add(m);
            }
        }
        watched.clear();
        return waiting;
    }

    /** How many futures asked for may still complete, dropped ones not swept yet included. */
    int size() {
        return watched.size();
    }

    /**
     * Under the queue's lock: marks {@code failed} as failed with {@code why}.
     *
     * @return those with a future, for {@link #fail} once the lock is released
     */
    static List<QueuedMessage> markFailed(Iterable<QueuedMessage> failed, LinkException why) {
        List<QueuedMessage> withFuture = new ArrayList<>();
        for (QueuedMessage m : failed) {
            m.failure = why;
            if (m.future != null) {
                withFuture.add(m);
            }
        }
        return withFuture;
    }

    /** Outside the queue's lock: completes the futures of messages acknowledged ({@code null}: none). */
    static void acknowledge(List<QueuedMessage> done) {
        if (done != null) {
            for (QueuedMessage m : done) {
                m.future.complete(null);
            }
        }
    }

    /** Outside the queue's lock: fails the futures of messages marked failed ({@code null}: none). */
    static void fail(List<QueuedMessage> failed) {
        if (failed != null) {
            for (QueuedMessage m : failed) {
                m.future.completeExceptionally(m.failureSeenBySender(m.failure));
            }
        }
    }
}
