package io.gma.client;

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

    final String name;
    final SendQueue queue;
    private final CopyOnWriteArrayList<Link> links = new CopyOnWriteArrayList<>();
    private volatile Link active;
    /** Guarded by this: a connection attempt is under way. */
    private boolean connecting;
    private int failures;

    Peer(String name, SendQueue queue) {
        this.name = name;
        this.queue = queue;
    }

    Link active() {
        return active;
    }

    /** A link is open: it carries this peer's messages unless another already does. */
    synchronized void attach(Link link) {
        links.add(link);
        if (active == null) {
            active = link;
        }
        connecting = false;
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
            queue.linkLost();
            active = links.isEmpty() ? null : links.get(0);
        }
        return active;
    }

    /** Whether the caller should start a connection attempt (none under way and no live link). */
    synchronized boolean startConnecting() {
        if (active != null || connecting) {
            return false;
        }
        connecting = true;
        return true;
    }

    /** A connection attempt failed: the delay before the next one, capped exponential with jitter. */
    synchronized long failedAttempt() {
        connecting = false;
        failures = Math.min(failures + 1, 16);
        long ceiling = Math.min(MAX_BACKOFF_MILLIS, MIN_BACKOFF_MILLIS << Math.min(failures, 10));
        return ceiling / 2 + ThreadLocalRandom.current().nextLong(ceiling / 2 + 1);
    }

    /** Sends what is queued, on the active link if there is one. */
    void kick() {
        Link l = active;
        if (l != null) {
            l.send();
        }
    }

    Iterable<Link> links() {
        return links;
    }
}
