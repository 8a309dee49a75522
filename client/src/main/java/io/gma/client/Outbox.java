package io.gma.client;

import io.gma.internal.link.IoThreads;
import io.gma.internal.link.Link;
import io.gma.internal.link.LinkException;
import io.gma.internal.link.Peer;
import io.gma.internal.link.WhenFull;
import io.gma.wire.Command;
import io.gma.wire.ErrorCode;
import io.gma.wire.Message;
import java.io.UncheckedIOException;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * What an endpoint sends: it numbers the messages the endpoint originates ({@link SequenceNumbers}), queues each
 * in its peer's send queue (data under the full-queue policy; control messages never bounded and never behind
 * data) and hands it to the peer's live link, or has the {@link Connector} make one. Runs on the sender's thread,
 * without a lock of its own: the send queue's is the one taken.
 *
 * <p>A destination in another domain that this endpoint's PC servlet found full ({@link FullDestinations}) is
 * treated as a full send queue of its own: sends to it wait or fail under the policy, while the uplink carries
 * the rest.
 *
 * <p>With an outbox on disk ({@link OutboxSpool}), a data message is packed first and appended there before it
 * is queued, and its record acknowledged when the peer acknowledges it (or it failed); what the outbox held at
 * start is queued again, in order, before the endpoint sends anything new ({@link #requeue}).
 */
final class Outbox {
    private final Peers peers;
    private final Connector connector;
    private final SequenceNumbers sequence;
    /** The outbox on disk, or null: none. */
    private final OutboxSpool spool;
    private final Counters counters;
    /** The builder's blockTimeout, read once. */
    private final long blockNanos;
    /** The builder's policy, as the send queues apply it; on a link's event loop BLOCK is FAIL. */
    private final WhenFull whenFull;
    /** This domain's PC servlet, or null: the peer whose destinations may be {@link #full}. */
    private final Peer uplink;
    /** Destinations in other domains the PC servlet refused a message for with QUEUE_FULL, for a while. */
    private final FullDestinations full;

    Outbox(EndpointBuilder<?> config, Peers peers, Connector connector, SequenceNumbers sequence, OutboxSpool spool,
            Counters counters) {
        this.peers = peers;
        this.connector = connector;
        this.sequence = sequence;
        this.spool = spool;
        this.counters = counters;
        this.blockNanos = config.blockNanos();
        this.uplink = peers.uplink();
        this.full = new FullDestinations(counters);
        this.whenFull = switch (config.policy) {
            case BLOCK -> WhenFull.BLOCK;
            case FAIL -> WhenFull.FAIL;
            case DROP_OLDEST -> WhenFull.DROP_OLDEST;
        };
    }

    /** Queues a message for {@code to}: data lane, under the full-queue policy, with a new sequence number. */
    Sent send(String to, Command command, byte[] data) throws EndpointException {
        long seq = nextNumber();
        if (spool != null) {
            return send(to, command, data, seq, null);
        }
        // the common case, as short as it was before receipts and the outbox: the hot path of every send (longer,
        // the JIT stopped inlining it, and the direct path's streaming of 64 B lost about 10%)
        Peer peer = peers.peer(to);
        return queue(peer, new Pending(peer.queue(), seq), to, command, Message.defaultFlags(command), data);
    }

    /**
     * As {@link #send(String, Command, byte[])}, numbered {@code seq}: a message whose answer is awaited (a REQUEST,
     * a table command), never kept in the outbox: after a crash nobody awaits its answer, and a table query sent
     * again would subscribe a query of the run before.
     */
    Sent send(String to, Command command, byte[] data, long seq) throws EndpointException {
        Peer peer = peers.peer(to);
        return queue(peer, new Pending(peer.queue(), seq), to, command, Message.defaultFlags(command), data);
    }

    /**
     * As {@link #send(String, Command, byte[], long)}; with a {@code receipt}, the message asks its destination for
     * one (REPLY_EXPECTED), and its Sent's delivered() is {@code receipt} ({@link Receipts}).
     */
    Pending send(String to, Command command, byte[] data, long seq, CompletableFuture<Void> receipt)
            throws EndpointException {
        Peer peer = peers.peer(to);
        int flags = receipt == null ? Message.defaultFlags(command) : Message.REPLY_EXPECTED;
        // a REQUEST is not kept: after a crash nobody awaits its REPLY, and it fails with the process
        if (spool != null && command != Command.REQUEST) {
            return sendKept(peer, new Pending.Kept(peer.queue(), seq, receipt), to, command, flags, data, policy());
        }
        Pending p = receipt == null ? new Pending(peer.queue(), seq) : new Pending.WithReceipt(peer.queue(), seq,
                receipt);
        return queue(peer, p, to, command, flags, data);
    }

    /** Queues {@code p} in its peer's send queue, and has a link take it. */
    private Pending queue(Peer peer, Pending p, String to, Command command, int flags, byte[] data)
            throws EndpointException {
        Object probe = peer == uplink && full.any() ? full.admit(to, policy(), blockNanos) : null;
        long unsent;
        try {
            unsent = peer.queue().offerData(p, peer.envelope(to), command, flags, data, policy(), blockNanos, to);
        } catch (LinkException ex) {
            throw Failures.toEndpoint(ex);
        }
        if (probe != null) {
            watch(p, to, probe);
        }
        if (unsent >= 0) {
            transmit(peer, unsent);
        }
        return p;
    }

    /** {@code p} is the probe of a full destination: its acknowledgement says whether there is room again. */
    private void watch(Pending p, String to, Object probe) {
        p.acknowledged().whenComplete((ok, ex) -> full.probed(to, probe, ex == null));
    }

    /**
     * An ERROR QUEUE_FULL came from {@code destination}, in another domain, on the uplink: its PC servlet found it
     * full, and sends to it wait or fail for a while ({@link FullDestinations}).
     */
    void destinationFull(String destination, String why) {
        full.refused(destination, why);
    }

    /**
     * The uplink's PC servlet refused the message numbered {@code sequence} (its ERROR comes before the ACK that
     * passes the message): the ACK fails the message's future with {@code why} rather than completing it.
     */
    void refusedByUplink(long sequence, EndpointException why) {
        if (uplink != null) {
            uplink.queue().refused(sequence, new LinkException(why.code(), why.getMessage()));
        }
    }

    /** The full-queue policy here: on a link's event loop, waiting would stop the very reads whose ACKs make room. */
    private WhenFull policy() {
        return whenFull == WhenFull.BLOCK && IoThreads.isCurrent() ? WhenFull.FAIL : whenFull;
    }

    /**
     * Appends the packed message to the outbox, then queues the same bytes: a message whose send returned is on
     * its way to the disk (at the operating system already), and one whose send threw is not sent after a
     * restart. The queue's room is waited for (or refused, under FAIL) before the append, so a full queue costs
     * the disk nothing; room taken by another sender in between makes the offer throw after the append, and
     * then the record's mark is written before the throw ({@link OutboxSpool#dropped}).
     */
    private Pending sendKept(Peer peer, Pending.Kept p, String to, Command command, int flags, byte[] data,
            WhenFull policy) throws EndpointException {
        Object probe = peer == uplink && full.any() ? full.admit(to, policy, blockNanos) : null;
        byte[] packed = peer.envelope(to).pack(p.sequence(), command, flags, data);
        try {
            // a message the queue refuses is refused before it is on disk: nothing to take back
            peer.queue().awaitRoom(packed.length, policy, blockNanos, to);
        } catch (LinkException ex) {
            throw Failures.toEndpoint(ex);
        }
        long record = spool.append(packed, policy == WhenFull.BLOCK, blockNanos, counters);
        long unsent;
        try {
            unsent = peer.queue().offerPacked(p, packed, policy, blockNanos, to);
        } catch (LinkException ex) {
            spool.dropped(record);
            throw Failures.toEndpoint(ex);
        }
        if (probe != null) {
            watch(p, to, probe);
        }
        spool.track(p, record, null);
        transmit(peer, unsent);
        return p;
    }

    /**
     * Queues again, oldest first, what the outbox held at start, with its bytes as they were (so its sequence
     * numbers), past the queues' bounds (they held it before): before the endpoint is handed to its user, so
     * before any new send. A message to a destination now unreachable (another domain without a PC servlet)
     * fails, and is dropped from the outbox with a warning.
     */
    void requeue(List<OutboxSpool.Recovered> recovered) {
        for (OutboxSpool.Recovered r : recovered) {
            String to = r.message().to();
            Peer peer;
            try {
                peer = peers.peer(to);
            } catch (EndpointException | IllegalArgumentException ex) {
                spool.track(Pending.refused(new EndpointException(ErrorCode.NO_ROUTE, ex.getMessage(), ex)),
                        r.record(), to);
                continue;
            }
            Pending p = new Pending(peer.queue(), r.message().sequence());
            try {
                transmit(peer, peer.queue().addData(r.packed(), p));
            } catch (LinkException ex) {
                spool.track(Pending.refused(Failures.toEndpoint(ex)), r.record(), to);
                continue;
            }
            spool.track(p, r.record(), to);
        }
    }

    /** A new sequence number, for a message this endpoint originates. */
    long nextSequence() {
        return sequence.next();
    }

    /** A new sequence number for a send, whose failure to reserve one is the send's. */
    private long nextNumber() throws EndpointException {
        try {
            return sequence.next();
        } catch (UncheckedIOException ex) {
            throw new EndpointException(ErrorCode.INTERNAL, ex.getMessage(), ex.getCause());
        }
    }

    /** Queues a control message (REPLY, ERROR, UNSUBSCRIBE): never bounded, never behind data. */
    void sendControl(String to, Command command, long seq, byte[] data) throws EndpointException {
        Peer peer = peers.peer(to);
        try {
            transmit(peer, peer.queue().offerControl(peer.envelope(to).pack(seq, command, data)));
        } catch (LinkException ex) {
            throw Failures.toEndpoint(ex);
        }
    }

    /** Sends on the live link ({@code unsent} bytes wait to be written), or starts connecting. */
    private void transmit(Peer peer, long unsent) {
        Link link = peer.active();
        if (link != null) {
            link.send(unsent);
        } else {
            connector.connect(peer);
        }
    }
}
