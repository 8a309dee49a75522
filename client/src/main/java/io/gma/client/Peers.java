package io.gma.client;

import io.gma.internal.link.LinkCounters;
import io.gma.internal.link.Peer;
import io.gma.internal.link.SendQueue;
import io.gma.wire.Envelope;
import io.gma.wire.ErrorCode;
import io.gma.wire.Name;
import java.util.Collection;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The peers an endpoint sends to, by name, each a {@link Peer} with its send queue; the uplink, the peer that is
 * this domain's PC servlet and carries every message for another domain; and whether the endpoint closed, after
 * which nothing is sent. Any thread.
 */
final class Peers {
    private final String name;
    private final EndpointBuilder<?> config;
    private final LinkCounters counters;
    private final Map<String, Peer> peers = new ConcurrentHashMap<>();
    /** The peer {@link #peer} found last, good until it is {@link #forget forgotten}. */
    private volatile Peer lastPeer;
    /** The other domain's name {@link #peer} sent to the uplink last: a stream there needs no look-up. */
    private volatile String lastRemote;
    /** The link to this domain's PC servlet, for every destination in another domain; null without one. */
    private final Peer uplink;
    private volatile boolean closed;

    /** @param name the endpoint's, the sender of every message to these peers */
    Peers(String name, EndpointBuilder<?> config, LinkCounters counters) {
        this.name = name;
        this.config = config;
        this.counters = counters;
        if (config.pcServlet != null) {
            uplink = newPeer(Name.pcServlet(config.domain));
            peers.put(uplink.name(), uplink);
        } else {
            uplink = null;
        }
    }

    /**
     * The peer a message to {@code to} goes to: the one of that name, made on first use, or the uplink for
     * another domain.
     *
     * @throws EndpointException SHUTTING_DOWN once closed; NO_ROUTE for another domain without a PC servlet
     * @throws IllegalArgumentException for no destination, or this endpoint itself
     */
    Peer peer(String to) throws EndpointException {
        if (closed) {
            throw new EndpointException(ErrorCode.SHUTTING_DOWN, name + " is closed");
        }
        Peer last = lastPeer;
        if (last != null && last.name() == to && !last.forgotten()) {
            return last; // a stream sends to one name, usually the same String: no hashing
        }
        if (to != null && to == lastRemote && uplink != null) {
            return uplink; // a stream to another domain: no hashing, no substring
        }
        Peer known = to == null ? null : peers.get(to);
        if (known != null) {
            lastPeer = known;
            return known;
        }
        if (to == null || to.isEmpty() || to.equals(name)) {
            throw new IllegalArgumentException("destination \"" + to + "\" is empty or this endpoint itself");
        }
        String domain = Name.domainOf(to);
        if (!domain.equals(config.domain)) {
            Peer pc = uplink;
            if (pc == null) {
                throw new EndpointException(ErrorCode.NO_ROUTE, to + " is in domain " + domain + "; " + name
                        + " has no PC servlet (EndpointBuilder.pcServlet, --pc on the command line) and reaches only"
                        + " its own domain, " + config.domain);
            }
            lastRemote = to;
            return pc;
        }
        Peer made = named(to);
        lastPeer = made;
        return made;
    }

    /** The peer of that name, made if there is none. */
    Peer named(String peerName) {
        return peers.computeIfAbsent(peerName, this::newPeer);
    }

    /** Stops sending to {@code peer}: the next send to its name makes a new one. */
    void forget(Peer peer) {
        peer.forget();
        peers.remove(peer.name(), peer);
    }

    /** This domain's PC servlet, or null: none was configured. */
    Peer uplink() {
        return uplink;
    }

    /** Every peer now, the uplink too; a live view. */
    Collection<Peer> all() {
        return peers.values();
    }

    /** Whether the endpoint closed: no more sends, connections or retries. */
    boolean closed() {
        return closed;
    }

    /** The endpoint closes: every send from now on fails with SHUTTING_DOWN. */
    void close() {
        closed = true;
    }

    private Peer newPeer(String peerName) {
        return new Peer(peerName, newQueue(), Envelope.of(name, peerName));
    }

    private SendQueue newQueue() {
        return new SendQueue(config.maxQueuedBytes, config.maxQueuedMessages, counters);
    }
}
