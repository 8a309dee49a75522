package io.gma.client;

import io.gma.internal.link.IoThreads;
import io.gma.internal.link.Link;
import io.gma.internal.link.LinkException;
import io.gma.internal.link.Peer;
import io.gma.internal.link.WhenFull;
import io.gma.wire.Command;
import io.gma.wire.Message;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLong;

/**
 * What an endpoint sends: it numbers the messages the endpoint originates, queues each in its peer's send queue
 * (data under the full-queue policy; control messages never bounded and never behind data) and hands it to the
 * peer's live link, or has the {@link Connector} make one. Runs on the sender's thread, without a lock of its
 * own: the send queue's is the one taken.
 */
final class Outbox {
    private final Peers peers;
    private final Connector connector;
    private final AtomicLong sequence = new AtomicLong();
    /** The builder's blockTimeout, read once. */
    private final long blockNanos;
    /** The builder's policy, as the send queues apply it; on a link's I/O thread BLOCK is FAIL. */
    private final WhenFull whenFull;

    Outbox(EndpointBuilder<?> config, Peers peers, Connector connector) {
        this.peers = peers;
        this.connector = connector;
        this.blockNanos = config.blockTimeout.compareTo(Duration.ofNanos(Long.MAX_VALUE)) < 0
                ? config.blockTimeout.toNanos() : Long.MAX_VALUE;
        this.whenFull = switch (config.policy) {
            case BLOCK -> WhenFull.BLOCK;
            case FAIL -> WhenFull.FAIL;
            case DROP_OLDEST -> WhenFull.DROP_OLDEST;
        };
    }

    /** Queues a message for {@code to}: data lane, under the full-queue policy, with a new sequence number. */
    Sent send(String to, Command command, byte[] data) throws EndpointException {
        return send(to, command, data, sequence.incrementAndGet());
    }

    /** As {@link #send(String, Command, byte[])}, numbered {@code seq} (a request's, which awaits it). */
    Sent send(String to, Command command, byte[] data, long seq) throws EndpointException {
        return send(to, command, data, seq, null);
    }

    /**
     * As {@link #send(String, Command, byte[], long)}; with a {@code receipt}, the message asks its destination for
     * one (REPLY_EXPECTED), and its Sent's delivered() is {@code receipt} ({@link Receipts}).
     */
    Pending send(String to, Command command, byte[] data, long seq, CompletableFuture<Void> receipt)
            throws EndpointException {
        Peer peer = peers.peer(to);
        Pending p = receipt == null ? new Pending(peer.queue(), seq) : new Pending.WithReceipt(peer.queue(), seq,
                receipt);
        int flags = receipt == null ? Message.defaultFlags(command) : Message.REPLY_EXPECTED;
        // on a link's I/O thread, waiting would stop the very reads whose ACKs make room: fail at once instead
        WhenFull policy = whenFull == WhenFull.BLOCK && IoThreads.isCurrent() ? WhenFull.FAIL : whenFull;
        long unsent;
        try {
            unsent = peer.queue().offerData(p, peer.envelope(to), command, flags, data, policy, blockNanos, to);
        } catch (LinkException ex) {
            throw Failures.toEndpoint(ex);
        }
        if (unsent >= 0) {
            transmit(peer, unsent);
        }
        return p;
    }

    /** A new sequence number, for a message this endpoint originates. */
    long nextSequence() {
        return sequence.incrementAndGet();
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
