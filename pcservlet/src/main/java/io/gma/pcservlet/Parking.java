package io.gma.pcservlet;

import io.gma.internal.link.Link;
import io.gma.wire.Message;
import java.util.ArrayDeque;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * What uplinks sent while there was no room for it. When the router cannot take a message, its uplink goes on
 * being read (the endpoint's ACKs, for what is delivered to it, come on it too) but that message and every later
 * one of the uplink are parked here, in order and unacknowledged: the endpoint's own send queue fills, and it
 * blocks or fails (throttling end to end). When room is freed ({@link #resume}), each parked uplink offers its
 * messages again, in order, on its own event loop.
 *
 * <p>Parked messages are bounded in all (maxParkedBytes); past that bound they are not kept, and the uplink is
 * closed once the router took what was kept, so that its endpoint sends the rest again.
 */
final class Parking {
    /**
     * Offers one parked message of an uplink to the router again, on the uplink's event loop: whether it was
     * taken, in which case the taker also sees that it is counted for the uplink's ACK, now or once on disk.
     */
    interface Taker {
        boolean take(Message m);
    }

    private final long maxParkedBytes;
    /** Uplinks whose messages are parked, and their state (touched only on each link's event loop). */
    private final Map<Link, Parked> paused = new ConcurrentHashMap<>();
    /** Bytes parked on all uplinks together. */
    private final AtomicLong parkedBytes = new AtomicLong();
    private volatile boolean held;

    Parking(long maxParkedBytes) {
        this.maxParkedBytes = maxParkedBytes;
    }

    /** Whether {@code link} has messages parked: then every later one of it is parked too. */
    boolean isParked(Link link) {
        return paused.containsKey(link);
    }

    /**
     * On the link's event loop: parks {@code m}, the router having refused it or an earlier message of the
     * same uplink waiting already.
     */
    void park(Link link, Taker taker, Message m) {
        Parked p = paused.get(link);
        if (p != null) {
            p.park(m);
            return;
        }
        p = new Parked(taker); // the first one not taken: it and all after it wait
        p.park(m);
        paused.put(link, p);
        schedule(link, p); // room may have come between the router's answer and now: no wake-up is lost
    }

    /**
     * Takes nothing more, for good: parked messages are dropped (they stay unacknowledged with their
     * endpoints, which send them again to the next run of the PC servlet).
     */
    void hold() {
        held = true;
        for (Map.Entry<Link, Parked> e : paused.entrySet()) {
            e.getKey().execute(() -> e.getValue().dropAll());
        }
    }

    boolean isHeld() {
        return held;
    }

    /** Room was freed: parked messages are offered again, in order, on their uplinks' threads. */
    void resume() {
        if (paused.isEmpty()) {
            return;
        }
        for (Map.Entry<Link, Parked> e : paused.entrySet()) {
            schedule(e.getKey(), e.getValue());
        }
    }

    /** The link closed: what it parked is dropped, unacknowledged, for its endpoint to send again. */
    void linkClosed(Link link) {
        Parked parked = paused.remove(link);
        if (parked != null) {
            parked.dropAll();
        }
    }

    /** Asks the link's event loop to offer its parked messages again, unless it is asked already. */
    private void schedule(Link link, Parked p) {
        if (p.scheduled.compareAndSet(false, true)) {
            link.execute(() -> {
                p.scheduled.set(false);
                unpark(link, p);
            });
        }
    }

    /**
     * On the link's event loop: routes its parked messages until the router is full again. Once none is left
     * the uplink is no longer parked; if some were not kept, it is closed, for its endpoint to send them again.
     */
    private void unpark(Link link, Parked p) {
        if (paused.get(link) != p) {
            return;
        }
        while (!p.messages.isEmpty()) {
            if (held) {
                return; // stopping: what is parked stays unacknowledged, for the next run
            }
            Message m = p.messages.peekFirst();
            if (!p.taker.take(m)) {
                return; // still no room: the rest waits for the next resume
            }
            p.messages.pollFirst();
            p.bytes -= Parked.cost(m);
            parkedBytes.addAndGet(-Parked.cost(m));
        }
        paused.remove(link);
        if (p.dropped) {
            link.bye(); // ACK what was taken, and close: the endpoint resends what it had not had acknowledged
        }
    }

    /** What one uplink sent while the router was full: kept in order, unacknowledged, within the bound. */
    private final class Parked {
        /** Who takes its messages, for its uplink. */
        final Taker taker;
        final ArrayDeque<Message> messages = new ArrayDeque<>();
        /** What its messages cost in memory, as counted against maxParkedBytes. */
        long bytes;
        /** Some were not kept: nothing after them may be taken on this link. */
        boolean dropped;
        /** An unpark task is queued on the link's thread. */
        final AtomicBoolean scheduled = new AtomicBoolean();

        Parked(Taker taker) {
            this.taker = taker;
        }

        /** A parked message's memory: its bytes and about 64 for the objects around them. */
        static long cost(Message m) {
            return m.encodedLength() + 64L;
        }

        /**
         * On the link's event loop: keeps {@code m} if the bound allows. The first is kept whatever the bound:
         * it is what tells when there is room again (without it, the link would be closed at once, and its
         * endpoint would send the same messages again and again).
         */
        void park(Message m) {
            long c = cost(m);
            if (!dropped && (messages.isEmpty() || parkedBytes.addAndGet(c) <= maxParkedBytes)) {
                if (messages.isEmpty()) {
                    parkedBytes.addAndGet(c);
                }
                messages.addLast(m);
                bytes += c;
                return;
            }
            if (!dropped) {
                parkedBytes.addAndGet(-c);
            }
            dropped = true;
        }

        /** On the link's event loop: lets go of everything; the endpoint resends it to the next run. */
        void dropAll() {
            parkedBytes.addAndGet(-bytes);
            messages.clear();
            bytes = 0;
            dropped = true;
        }
    }
}
