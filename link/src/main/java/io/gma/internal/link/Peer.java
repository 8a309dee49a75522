package io.gma.internal.link;

import io.gma.wire.Envelope;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * Everything about one remote endpoint: its send queue (which outlives links), its live links, the one
 * messages go out on, and the reconnect back-off. An endpoint that has a live link with a peer, whichever
 * side opened it, sends over it rather than opening another (protocol.md section 4).
 *
 * <p>A peer knows its links; a link knows only the queue it carries ({@link Link#carry}), not the peer.
 */
public final class Peer {
    /** The first reconnect waits 50 to 100 ms; the back-off grows to 2.5 to 5 s. */
    static final Duration MIN_BACKOFF = Duration.ofMillis(50);
    static final Duration MAX_BACKOFF = Duration.ofSeconds(5);
    private static final int MAX_ENVELOPES = 1024;

    private final String name;
    private final SendQueue queue;
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
    private volatile boolean forgotten;
    /** Guarded by this: a connection attempt is under way. */
    private boolean connecting;
    /** Guarded by this: attempts that failed, and links closed before carrying an ACK, since the last ACK. */
    private final Backoff backoff = new Backoff(MIN_BACKOFF, MAX_BACKOFF);
    /** Guarded by this: no attempt before this time (System.nanoTime); one retry is scheduled for it. */
    private long nextAttemptAt;

    /**
     * @param envelope this side's name and the peer's, for {@link #envelope}; null when messages for it come
     *     packed already (a gateway's)
     */
    public Peer(String name, SendQueue queue, Envelope envelope) {
        this.name = name;
        this.queue = queue;
        this.envelope = envelope;
    }

    /** The peer's name. */
    public String name() {
        return name;
    }

    /** Its send queue, which outlives links. */
    public SendQueue queue() {
        return queue;
    }

    /** The envelope of a message to {@code to}: the peer's own, or on an uplink one for that destination. */
    public Envelope envelope(String to) {
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

    /** The link messages go out on, or null. */
    public Link active() {
        return active;
    }

    /**
     * A link is open: it may carry this peer's messages, and does unless another already does. Callers that
     * must not race with it (a gateway dropping the peer) hold this peer's monitor.
     */
    public synchronized void attach(Link link) {
        link.carry(queue);
        links.add(link);
        if (active == null) {
            active = link;
            queue.carriedBy(link);
        }
        connecting = false;
    }

    /** A link carried an ACK from the peer: it works, and the next reconnect needs no back-off. */
    public synchronized void healthy() {
        backoff.reset();
    }

    /**
     * A link closed. If it was carrying the messages, what it had in flight goes back in front of the queue
     * and another live link, if any, takes over.
     *
     * @return the new active link, or null
     */
    public synchronized Link detach(Link link) {
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
    public synchronized boolean startConnecting() {
        if (active != null || connecting || System.nanoTime() < nextAttemptAt) {
            return false;
        }
        connecting = true;
        return true;
    }

    /**
     * An attempt failed, or a link closed before it carried an ACK: the delay before the next attempt, in
     * milliseconds: 0 after a link that worked, else the {@link Backoff}'s. The caller schedules that one attempt.
     */
    public synchronized long failedAttempt(boolean linkWorked) {
        connecting = false;
        if (linkWorked) {
            backoff.reset();
            nextAttemptAt = 0;
            return 0;
        }
        long delay = backoff.failed();
        nextAttemptAt = System.nanoTime() + delay * 1_000_000;
        return delay;
    }

    /** Writes what is queued, now, on the active link if there is one. */
    public void kick() {
        kick(false);
    }

    /** As {@link #kick}; with {@code askingAck}, the peer is asked for its ACK once the queue is written. */
    public void kick(boolean askingAck) {
        Link l = active;
        if (l == null) {
            return;
        }
        if (askingAck) {
            l.flushAskingAck();
        } else {
            l.flush();
        }
    }

    /** The live links with this peer, whichever side opened them. */
    public Iterable<Link> links() {
        return links;
    }

    /** Stops sending to this peer: the owner makes a new one for the next send to its name. */
    public void forget() {
        forgotten = true;
    }

    /** Whether {@link #forget} was called. */
    public boolean forgotten() {
        return forgotten;
    }
}
