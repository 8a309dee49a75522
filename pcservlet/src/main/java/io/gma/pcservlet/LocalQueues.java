package io.gma.pcservlet;

import io.gma.internal.link.Link;
import io.gma.internal.link.LinkCounters;
import io.gma.internal.link.LinkException;
import io.gma.internal.link.Peer;
import io.gma.internal.link.SendQueue;
import io.gma.wire.ErrorCode;
import io.gma.wire.Message;
import io.gma.wire.Name;
import io.gma.wire.Packed;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The queues of a PC servlet for the endpoints of its own domain: what came from other domains (by POST or
 * poll) or from another endpoint's uplink, until the endpoint acknowledges it on its uplink. One bounded
 * {@link SendQueue} per endpoint, so that a slow endpoint fills its own queue and no other's; a queue outlives
 * the endpoint's uplinks, and goes when the registry forgets the endpoint ({@link #drop}).
 *
 * <p>Messages are queued as they were decoded: their packed bytes go to the endpoint unchanged.
 */
final class LocalQueues {
    /** One endpoint's queue: whether its uplink is open now; messages and bytes queued, unwritten or unacked. */
    record QueueInfo(String endpoint, boolean connected, long messages, long bytes) {
    }

    /** Where a message goes that will never reach its endpoint: its sender is told. */
    interface Undeliverable {
        /**
         * Tells the sender of {@code packed} it failed; the record of the ERROR that tells it, which the message's
         * own record waits for before it goes ({@link Spooling#ackOnceSafe}), or {@link Spooling#NONE}.
         */
        long undeliverable(byte[] packed, ErrorCode code, String reason);
    }

    private final String domain;
    private final String pcName;
    private final long maxQueuedBytes;
    private final int maxQueuedMessages;
    private final LinkCounters counters;
    private final RoomSignal room;
    private final Map<String, Peer> peers = new ConcurrentHashMap<>();
    /** With a spool: each endpoint's queue's records not acknowledged yet. */
    private final Map<Peer, SpooledAcks> spooled = new ConcurrentHashMap<>();
    private final Spooling spooling;
    /** Held while a batch is checked and queued, so that it goes in whole; and by close. */
    private final Object delivering = new Object();
    private boolean closed;

    LocalQueues(String domain, long maxQueuedBytes, int maxQueuedMessages, LinkCounters counters, RoomSignal room,
            Spooling spooling) {
        this.spooling = spooling;
        this.domain = domain;
        this.pcName = Name.pcServlet(domain);
        this.maxQueuedBytes = maxQueuedBytes;
        this.maxQueuedMessages = maxQueuedMessages;
        this.counters = counters;
        this.room = room;
    }

    /**
     * Queues each message for the endpoint of this domain it is addressed to, all of them or none: none when
     * the data of any endpoint's share would overflow its queue (an empty queue takes any share), unless
     * {@code force} (the caller checked the room with {@link #lacking}, or must not wait). Answers (REPLY, ERROR)
     * and UNSUBSCRIBE go in the control lane, which data never holds up; one that overflows even that goes to
     * {@code failed}. A spooled message's record is acknowledged once its endpoint acknowledges it.
     *
     * @throws IllegalArgumentException if a message is not for an endpoint of this domain
     */
    Placement deliverAll(List<Queued> messages, Undeliverable failed, boolean force) {
        for (Queued q : messages) {
            String to = q.to();
            if (!Name.inDomain(to, domain) || to.equals(pcName)) {
                throw new IllegalArgumentException(to + " is not an endpoint of domain " + domain);
            }
        }
        Set<Peer> touched = new LinkedHashSet<>();
        synchronized (delivering) {
            if (closed) {
                return new Placement.Closed(pcName + " is closed");
            }
            Placement.NoRoom lacking = force ? null : lacking(messages);
            if (lacking != null) {
                return lacking;
            }
            for (Queued q : messages) {
                Peer p = peers.computeIfAbsent(q.to(), this::newPeer);
                // as decoded: the queue keeps the array, and nobody changes it
                byte[] packed = Packed.shared(q.message());
                try {
                    queue(p, q, packed);
                    touched.add(p);
                } catch (LinkException ex) {
                    // its sender is told instead, once that is as safe as the message was
                    spooling.ackOnceSafe(q.spoolSeq(), failed.undeliverable(packed, ex.code(), ex.getMessage()));
                }
            }
        }
        for (Peer p : touched) {
            p.kick(spooling.on()); // with a spool the sender waits until each is on disk or with its endpoint
        }
        return Placement.PLACED;
    }

    /** Queues one message in its endpoint's queue, noting its record so that the endpoint's ACK acknowledges it. */
    private void queue(Peer p, Queued q, byte[] packed) throws LinkException {
        boolean control = q.control();
        SpooledAcks acks = q.spoolSeq() == Spooling.NONE ? null : spooled.get(p);
        if (acks == null) {
            if (control) {
                p.queue().offerControl(packed);
            } else {
                p.queue().addData(packed);
            }
            return;
        }
        synchronized (acks) { // numbered and noted as one step: an ACK in between finds the note
            acks.add(control, control ? p.queue().addControl(packed) : p.queue().addData(packed), q.spoolSeq());
        }
    }

    /** Which endpoint's queue has no room for its share of data among {@code messages} now, and why; or null. */
    Placement.NoRoom lacking(List<Queued> messages) {
        for (Map.Entry<String, long[]> e : dataShares(messages).entrySet()) {
            Peer p = peers.get(e.getKey());
            if (lacksRoom(p, e.getValue())) {
                return new Placement.NoRoom("the queue for " + e.getKey() + " holds " + p.queue().messages()
                        + " messages, " + p.queue().bytes() + " bytes (limits " + maxQueuedMessages + ", "
                        + maxQueuedBytes + "); " + e.getValue()[0] + " more, " + e.getValue()[1] + " bytes, came");
            }
        }
        return null;
    }

    /** Whether {@code m}'s endpoint's queue has room for it now (answers always have). */
    boolean hasRoomFor(Message m) {
        return m.command().isControl() || !lacksRoom(peers.get(m.to()), new long[] {1, m.encodedLength()});
    }

    /**
     * The endpoints among these messages' destinations whose queues have no room for their share of data now
     * (advice for a sender, which may hold their messages back and send the others).
     */
    Set<String> fullFor(List<Queued> messages) {
        Set<String> full = new TreeSet<>();
        dataShares(messages).forEach((endpoint, share) -> {
            if (lacksRoom(peers.get(endpoint), share)) {
                full.add(endpoint);
            }
        });
        return full;
    }

    /** Each destination's data messages and bytes among these (answers are not bounded, so not counted). */
    private static Map<String, long[]> dataShares(List<Queued> messages) {
        Map<String, long[]> shares = new HashMap<>();
        for (Queued q : messages) {
            if (!q.control()) {
                long[] share = shares.computeIfAbsent(q.to(), k -> new long[2]);
                share[0]++;
                share[1] += q.encodedLength();
            }
        }
        return shares;
    }

    private static boolean lacksRoom(Peer p, long[] share) {
        return p != null && !p.queue().hasRoom(share[1], (int) share[0]);
    }

    private Peer newPeer(String endpoint) {
        if (!spooling.on()) {
            return new Peer(endpoint, new SendQueue(maxQueuedBytes, maxQueuedMessages, counters, room::freed), null);
        }
        SpooledAcks acks = new SpooledAcks(spooling);
        SendQueue queue = new SendQueue(maxQueuedBytes, maxQueuedMessages, counters, () -> {
            acks.acknowledged();
            room.freed();
        });
        acks.queue = queue;
        Peer p = new Peer(endpoint, queue, null);
        spooled.put(p, acks);
        return p;
    }

    /** The endpoint's queue, made if need be, with {@code link} attached to carry it; the queue's peer. */
    Peer attach(String endpoint, Link link) {
        while (true) {
            Peer p = peers.computeIfAbsent(endpoint, this::newPeer);
            synchronized (p) {
                if (peers.get(endpoint) == p) { // not dropped meanwhile
                    p.attach(link);
                    return p;
                }
            }
        }
    }

    /**
     * Forgets an endpoint that is gone (its lease expired, it unregistered): what was queued for it goes to
     * {@code failed} with {@code code}. Does nothing while its uplink is open.
     */
    void drop(String endpoint, ErrorCode code, String reason, Undeliverable failed) {
        Peer p = peers.get(endpoint);
        if (p == null) {
            return;
        }
        synchronized (delivering) {
            synchronized (p) { // the monitor attach holds: no uplink can attach to it while it goes
                if (p.active() != null) {
                    return;
                }
                peers.remove(endpoint, p);
            }
        }
        fail(p, new LinkException(code, reason), failed);
        room.freed();
    }

    /**
     * Stopping without a spool, after the drain: closes the queues that still hold messages and takes those out,
     * to tell their senders ({@link Farewell}); the other queues stay open, so that their uplinks still carry the
     * ERRORs for the endpoints that sent what could not be delivered. Nothing more is delivered here.
     */
    List<byte[]> takeUndelivered(String why) {
        synchronized (delivering) {
            closed = true;
        }
        LinkException shutdown = new LinkException(ErrorCode.SHUTTING_DOWN, why);
        List<byte[]> left = new ArrayList<>();
        for (Peer p : peers.values()) {
            if (p.queue().messages() > 0) {
                left.addAll(p.queue().closeKeeping(shutdown));
                peers.remove(p.name(), p);
            }
        }
        return left;
    }

    /** Queues an answer for {@code endpoint} in its queue's control lane, if it has an open one; whether it did. */
    boolean offerControl(String endpoint, byte[] packed) {
        Peer p = peers.get(endpoint);
        if (p == null) {
            return false;
        }
        try {
            p.queue().offerControl(packed);
            p.kick();
            return true;
        } catch (LinkException closed) {
            return false;
        }
    }

    /**
     * Closes every queue for good. In memory, what they held goes to {@code failed} as SHUTTING_DOWN; spooled,
     * it stays in the spool, for the next start to deliver.
     */
    void close(Undeliverable failed) {
        synchronized (delivering) {
            closed = true;
        }
        LinkException shutdown = new LinkException(ErrorCode.SHUTTING_DOWN, pcName + " closed");
        for (Peer p : peers.values()) {
            if (spooling.on()) {
                p.queue().close(shutdown);
            } else {
                fail(p, shutdown, failed);
            }
        }
        peers.clear();
    }

    /** What {@code p}'s queue held goes to {@code failed}; their records are done with (the senders are told). */
    private void fail(Peer p, LinkException why, Undeliverable failed) {
        long told = Spooling.NONE;
        for (byte[] packed : p.queue().closeKeeping(why)) {
            told = Math.max(told, failed.undeliverable(packed, why.code(), why.getMessage()));
        }
        SpooledAcks acks = spooled.remove(p);
        if (acks != null) {
            spooling.whenSafe(told, acks::ackAll); // once the ERRORs that tell their senders are safe
        }
    }

    /** The endpoints' queues, now. */
    List<QueueInfo> queues() {
        List<QueueInfo> all = new ArrayList<>();
        for (Peer p : peers.values()) {
            all.add(new QueueInfo(p.name(), p.active() != null, p.queue().messages(), p.queue().bytes()));
        }
        return all;
    }

    /** Whether every endpoint whose uplink is open has acknowledged all that was queued for it. */
    boolean connectedDrained() {
        for (Peer p : peers.values()) {
            if (p.active() != null && p.queue().messages() > 0) {
                return false;
            }
        }
        return true;
    }
}
