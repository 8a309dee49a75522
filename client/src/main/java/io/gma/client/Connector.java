package io.gma.client;

import io.gma.internal.link.Acceptor;
import io.gma.internal.link.HandshakeAdmission;
import io.gma.internal.link.IoThreads;
import io.gma.internal.link.Link;
import io.gma.internal.link.LinkConfig;
import io.gma.internal.link.LinkException;
import io.gma.internal.link.LinkListener;
import io.gma.internal.link.NameGuard;
import io.gma.internal.link.Peer;
import io.gma.internal.link.Refusal;
import io.gma.registry.api.EndpointInfo;
import io.gma.registry.api.RegistryClient;
import io.gma.registry.api.RegistryException;
import io.gma.registry.api.RegistryGrace;
import io.gma.security.AuthException;
import io.gma.security.Rules;
import io.gma.security.Security;
import io.gma.security.Tls;
import io.gma.wire.ErrorCode;
import io.gma.wire.Message;
import io.gma.wire.Threads;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.BiConsumer;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * An endpoint's links to its peers. It connects to a peer that has messages and no link (at the address the
 * registry gives, or the PC servlet's as configured: the uplink, kept from the start), one attempt at a time, and
 * after a failure schedules the next after the peer's back-off ({@link Peer#failedAttempt}, the link module's
 * {@code Backoff}); it accepts peers' links on the endpoint's socket ({@link Acceptor}); it runs each link, made
 * or accepted, on an event loop; and it decides what a link that opens or closes means for its peer:
 * carry its messages, retry, or give up on a refusal.
 *
 * <p>It makes no listener itself: {@code listeners} gives each link its own, and {@code unreachable} is told of
 * a peer the registry does not know. Connecting runs on the {@code connecting} pool, retries wait in the timer,
 * accepting has its thread, and the link events come on the links' event loops.
 */
final class Connector {
    private static final Logger LOG = LoggerFactory.getLogger(Endpoint.class);
    private final EndpointBuilder<?> config;
    private final LinkConfig linkConfig;
    private final String name;
    private final Security security;
    private final RegistryClient registry;
    private final NameGuard names;
    private final Peers peers;
    private final Peer uplink;
    private final Counters counters;
    private final ScheduledExecutorService timer;
    private final ExecutorService connecting;
    /** Handlers run on a link's thread unless an executor was given, so it must never wait on itself. */
    private final IoThreads ioThreads;
    private final Function<Peer, LinkListener> listeners;
    private final BiConsumer<Peer, EndpointException> unreachable;
    private final RegistryGrace grace;
    private final Map<String, InetSocketAddress> addresses = new ConcurrentHashMap<>();
    /** Every link, open or still in its handshake, so that close reaches them all. */
    private final Set<Link> links = ConcurrentHashMap.newKeySet();

    /**
     * @param listeners the listener of a new link to a peer (null for a link accepted, whose peer is known only
     *     when it opens)
     * @param grace whether the registry's "not registered" is final: just after a restart, the peer may not have
     *     registered again yet, and is tried again after the back-off
     * @param unreachable told, on a connecting thread, of a peer whose name the registry does not know (NO_ROUTE)
     *     for good
     */
    Connector(EndpointBuilder<?> config, LinkConfig linkConfig, RegistryClient registry, RegistryGrace grace,
            Peers peers, Counters counters, ScheduledExecutorService timer, ExecutorService connecting,
            Function<Peer, LinkListener> listeners, BiConsumer<Peer, EndpointException> unreachable) {
        this.config = config;
        this.linkConfig = linkConfig;
        this.name = linkConfig.name();
        this.security = linkConfig.security();
        this.registry = registry;
        this.grace = grace;
        this.names = new NameGuard(security, registry);
        this.peers = peers;
        this.uplink = peers.uplink();
        this.counters = counters;
        this.timer = timer;
        this.connecting = connecting;
        this.ioThreads = new IoThreads("gma-" + config.label + "-link-", config.ioThreads);
        this.listeners = listeners;
        this.unreachable = unreachable;
    }

    /**
     * Connects the uplink, if there is one, at once and for good (messages from other domains come over it), and
     * accepts peers' links on {@code server}, on a thread of its own, until the endpoint closes.
     */
    void start(ServerSocketChannel server, HandshakeAdmission admission) {
        if (uplink != null) {
            connect(uplink);
        }
        Threads.start("gma-" + config.label + "-accept", new Acceptor(server, linkConfig, admission,
                () -> listeners.apply(null), peers::closed, this::startLink));
    }

    /** Connects to {@code peer} unless a link or an attempt is there, or its back-off has not passed. */
    void connect(Peer peer) {
        if (peers.closed() || !peer.startConnecting()) {
            return;
        }
        connecting.execute(() -> {
            SocketChannel channel = null;
            try {
                InetSocketAddress address = peer == uplink ? pcServletAddress() : resolve(peer.name());
                channel = SocketChannel.open();
                channel.socket().connect(address, 5_000);
                // the host name as registered (or as given to pcServlet) is what the certificate must name
                Tls tls = security.tls();
                startLink(Link.connect(linkConfig, listeners.apply(peer), channel, tls == null ? null
                        : tls.clientEngine(address.getHostString(), address.getPort()), peer.name()));
            } catch (EndpointException ex) {
                close(channel);
                if (ex.code() == ErrorCode.NO_ROUTE && grace.settled()) {
                    unreachable.accept(peer, ex);
                } else {
                    retry(peer, ex, false);
                }
            } catch (IOException ex) {
                close(channel);
                addresses.remove(peer.name());
                retry(peer, new EndpointException(ErrorCode.INTERNAL, peer == uplink ? String.valueOf(ex.getMessage())
                        : "cannot connect to " + peer.name() + ": " + ex.getMessage(), ex), false);
            }
        });
    }

    /** Runs a new link, made here or accepted, on an event loop; aborts it once closed. */
    private void startLink(Link link) {
        links.add(link);
        if (peers.closed()) {
            links.remove(link);
            link.abort();
            return;
        }
        ioThreads.start(link);
    }

    /** The credential of an outbound link's HELLO: a token for the domain on the uplink, else for the peer. */
    String credential(Peer peer) {
        return security.bearer(peer == uplink ? config.domain : peer.name());
    }

    /**
     * A peer may link to this endpoint when the rules let its identity send to this endpoint's name, and it may
     * go by the name it says in HELLO ({@link NameGuard}).
     */
    Refusal refusal(Message hello, String identity) {
        try {
            security.authorize(identity, Rules.Verb.SEND, name);
        } catch (AuthException e) {
            return Refusal.forbidden(e.getMessage());
        }
        return names.check(identity, hello.from());
    }

    /**
     * A link finished its handshake: it carries the messages of {@code peer}, or of an accepted link's peer (null
     * here), found by the name it said.
     *
     * @return the peer the link carries; {@code peer} as it was when the link's peer has no name (it may send to
     *     this endpoint, but cannot be sent to)
     */
    Peer opened(Peer peer, Link link) {
        String peerName = link.peerName();
        if (peerName == null || peerName.isEmpty()) {
            return peer; // an unregistered peer may send to us; nothing can be sent back by name
        }
        Peer carried = peer != null ? peer : peers.named(peerName);
        carried.attach(link);
        carried.kick();
        return carried;
    }

    /**
     * A link closed: another live link takes over its peer's messages, or this one connects again (at once
     * after a link that worked, after the back-off otherwise), or, refused, gives up.
     */
    void closed(Peer peer, Link link, LinkException why) {
        links.remove(link);
        if (peer == null) {
            return;
        }
        boolean wasOpen = false;
        for (Link l : peer.links()) {
            wasOpen |= l == link;
        }
        Link next = peer.detach(link);
        if (peers.closed()) {
            return;
        }
        LinkException reason = why != null ? why : new LinkException(ErrorCode.INTERNAL, "link closed");
        boolean refused = !wasOpen && link.outbound() && (reason.code() == ErrorCode.FORBIDDEN
                || reason.code() == ErrorCode.UNAUTHORIZED);
        if (peer == uplink && refused) {
            // the PC servlet refuses this endpoint (another domain's, say): a setting to fix, not a failure to retry
            LOG.error("{}: the PC servlet at {} refused the uplink: {}; messages for other domains fail", name,
                    config.pcServlet, reason.getMessage());
            peer.queue().close(reason);
            return;
        }
        if (next != null) {
            next.flush();
        } else if (refused) {
            // a setting to fix (credentials, rules, certificates), not a failure to retry: what is queued fails
            // with the refusal; a later send tries again
            peers.forget(peer);
            peer.queue().close(reason);
        } else if (!wasOpen && link.outbound()) {
            retry(peer, reason, false);
        } else if (!peer.queue().isEmpty() || peer == uplink) {
            counters.reconnects.increment();
            retry(peer, reason, link.worked());
        }
    }

    /**
     * Cuts every link at once, without BYE, as a network failure would: for tests of resending. Queued and
     * unacknowledged messages stay and go out again on the next link.
     */
    void severLinks() {
        for (Peer p : peers.all()) {
            for (Link l : p.links()) {
                l.fail(new LinkException(ErrorCode.INTERNAL, "link cut"));
            }
        }
    }

    /**
     * Says BYE on every link, open or in its handshake; with {@code keepNumbers}, not on the links of a peer that
     * has messages not acknowledged: they stay in the outbox and go out again after a restart, so the peer must
     * keep remembering this endpoint's numbers (a BYE would make it forget them) to drop those it had.
     */
    void sayBye(boolean keepNumbers) {
        Set<Link> quiet = new HashSet<>();
        if (keepNumbers) {
            for (Peer p : peers.all()) {
                if (!p.queue().isEmpty()) {
                    p.links().forEach(quiet::add);
                }
            }
        }
        for (Link l : links) {
            if (quiet.contains(l)) {
                l.closeWithoutBye();
            } else {
                l.bye();
            }
        }
        ioThreads.close(); // once the goodbyes are over
    }

    private static void close(SocketChannel channel) {
        if (channel != null) {
            try {
                channel.close();
            } catch (IOException ignored) {
                // it failed already
            }
        }
    }

    /** Schedules the one next attempt: at once after a link that worked, after the back-off otherwise. */
    private void retry(Peer peer, IOException why, boolean linkWorked) {
        long delay = peer.failedAttempt(linkWorked);
        if (peer == uplink && why instanceof LinkException full && full.code() == ErrorCode.QUEUE_FULL) {
            // the PC servlet has its --max-links open (or this endpoint its maxLinks): it runs, with no room now
            LOG.warn("{}: no room for the uplink to the PC servlet at {} ({}); trying again in {} ms", name,
                    config.pcServlet.getHostString() + ":" + config.pcServlet.getPort(), why.getMessage(), delay);
        } else if (peer == uplink && !linkWorked) {
            // without its uplink the endpoint reaches no other domain: the operator must hear of it, each try
            LOG.warn("{}: cannot reach the PC servlet at {} ({}): is gma pc running there, and is that its"
                    + " --uplink-port? Trying again in {} ms", name, config.pcServlet.getHostString() + ":"
                    + config.pcServlet.getPort(), why.getMessage(), delay);
        } else {
            LOG.debug("{}: {}; next attempt in {} ms", name, why.getMessage(), delay);
        }
        if (peers.closed()) {
            return;
        }
        if (delay == 0) {
            connect(peer);
        } else {
            timer.schedule(() -> connect(peer), delay, TimeUnit.MILLISECONDS);
        }
    }

    private InetSocketAddress pcServletAddress() throws EndpointException {
        InetSocketAddress a = new InetSocketAddress(config.pcServlet.getHostString(), config.pcServlet.getPort());
        if (a.isUnresolved()) {
            throw new EndpointException(ErrorCode.INTERNAL, "PC servlet host " + a.getHostString() + " is unknown");
        }
        return a;
    }

    private InetSocketAddress resolve(String peerName) throws EndpointException {
        InetSocketAddress known = addresses.get(peerName);
        if (known != null) {
            return known;
        }
        try {
            EndpointInfo info = registry.lookup(peerName);
            InetSocketAddress address = new InetSocketAddress(info.host(), info.port());
            addresses.put(peerName, address);
            return address;
        } catch (RegistryException ex) {
            throw Failures.fromRegistry("look up " + peerName, ex);
        }
    }
}
