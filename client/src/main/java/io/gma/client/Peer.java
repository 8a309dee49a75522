package io.gma.client;

import io.gma.wire.Envelope;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Everything about one remote endpoint: its send queue (which outlives links), its live links, the one
 * messages go out on, and the reconnect back-off. An endpoint that has a live link with a peer, whichever
 * side opened it, sends over it rather than opening another (PROTOCOL.md section 4).
 */
final class Peer {
    static final long MIN_BACKOFF_MILLIS = 50;
    static final long MAX_BACKOFF_MILLIS = 5_000;
    private static final int MAX_ENVELOPES = 1024;

    final String name;
    final SendQueue queue;
    /**
     * This endpoint's name and the peer's, encoded once for every message between them; null at a gateway,
     * which forwards messages already packed.
     */
    private final Envelope envelope;
    /** On an uplink, which carries messages for many destinations: their envelopes, a bounded cache. */
    private final Map<String, Envelope> envelopes = new ConcurrentHashMap<>();
    private final CopyOnWriteArrayList<Link> links = new CopyOnWriteArrayList<>();
    private volatile Link active;
    /** The endpoint stopped sending to this peer (its queue is closed); a send to its name makes a new one. */
    volatile boolean forgotten;
    /** Guarded by this: a connection attempt is under way. */
    private boolean connecting;
    /** Guarded by this: attempts that failed, and links closed before carrying an ACK, since the last ACK. */
    private int failures;
    /** Guarded by this: no attempt before this time (System.nanoTime); one retry is scheduled for it. */
    private long nextAttemptAt;

    Peer(String name, SendQueue queue, Envelope envelope) {
        this.name = name;
        this.queue = queue;
        this.envelope = envelope;
    }

    /** The envelope of a message to {@code to}: the peer's own, or on an uplink one for that destination. */
    Envelope envelope(String to) {
        if (to.equals(name)) {
            return envelope;
        }
        Envelope e = envelopes.get(to);
        if (e == null) {
            if (envelopes.size() >= MAX_ENVELOPES) {
                envelopes.clear();
            }
            e = Envelope.of(envelope.from(), to);
            envelopes.put(to, e);
        }
        return e;
    }

    Link active() {
        return active;
    }

    /** A link is open: it carries this peer's messages unless another already does. */
    synchronized void attach(Link link) {
        links.add(link);
        if (active == null) {
            active = link;
            queue.carriedBy(link);
        }
        connecting = false;
    }

    /** A link carried an ACK: the peer works, and the next reconnect needs no back-off. */
    synchronized void healthy() {
        failures = 0;
    }

    /**
     * A link closed. If it was carrying the messages, what it had in flight goes back in front of the queue
     * and another live link, if any, takes over.
     *
     * @return the new active link, or null
     */
    synchronized Link detach(Link link) {
        links.remove(link);
        if (active == link) {
            active = links.isEmpty() ? null : links.get(0);
            queue.linkLost(link, active);
        }
        return active;
    }

    /**
     * Whether the caller should start a connection attempt now: none under way, no live link, and not before
     * the back-off's next attempt (a retry is scheduled for then).
     */
    synchronized boolean startConnecting() {
        if (active != null || connecting || System.nanoTime() < nextAttemptAt) {
            return false;
        }
        connecting = true;
        return true;
    }

    /**
     * An attempt failed, or a link closed before it carried an ACK: the delay before the next attempt, 0
     * after a link that worked, else capped exponential with jitter. The caller schedules that one attempt.
     */
    synchronized long failedAttempt(boolean linkWorked) {
        connecting = false;
        if (linkWorked) {
            failures = 0;
            nextAttemptAt = 0;
            return 0;
        }
        failures = Math.min(failures + 1, 16);
        long ceiling = Math.min(MAX_BACKOFF_MILLIS, MIN_BACKOFF_MILLIS << Math.min(failures, 10));
        long delay = ceiling / 2 + ThreadLocalRandom.current().nextLong(ceiling / 2 + 1);
        nextAttemptAt = System.nanoTime() + delay * 1_000_000;
        return delay;
    }

    /** Writes what is queued, now, on the active link if there is one. */
    void kick() {
        Link l = active;
        if (l != null) {
            l.flush();
        }
    }

    Iterable<Link> links() {
        return links;
    }
}
