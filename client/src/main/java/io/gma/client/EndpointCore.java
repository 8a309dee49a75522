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
import io.gma.internal.link.SendQueue;
import io.gma.internal.link.WhenFull;
import io.gma.registry.api.EndpointInfo;
import io.gma.registry.api.QueryResult;
import io.gma.registry.api.Registration;
import io.gma.registry.api.RegistryClient;
import io.gma.registry.api.RegistryException;
import io.gma.security.AuthException;
import io.gma.security.Rules;
import io.gma.security.Security;
import io.gma.security.Tls;
import io.gma.wire.Command;
import io.gma.wire.Envelope;
import io.gma.wire.ErrorCode;
import io.gma.wire.ErrorText;
import io.gma.wire.Message;
import io.gma.wire.Name;
import io.gma.wire.Threads;
import io.gma.wire.WireCodec;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Predicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The one endpoint implementation under {@link Producer} and {@link Consumer}, as in jGMA: registration and
 * its lease, the listening socket, the peers and their links, sequence numbers, replies awaited,
 * subscriptions, and delivery to the application.
 */
final class EndpointCore implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(Endpoint.class);
    private final EndpointBuilder<?> config;
    /** The builder's blockTimeout, read once. */
    private final long blockNanos;
    /** The builder's policy, as the send queues apply it; on a link's I/O thread BLOCK is FAIL. */
    private final WhenFull whenFull;
    private final Security security;
    private final WireCodec codec;
    private final RegistryClient registry;
    private final NameGuard names;
    private final Counters counters = new Counters();
    private final Dedup dedup = new Dedup();
    private final AtomicLong sequence = new AtomicLong();
    private final Map<String, Peer> peers = new ConcurrentHashMap<>();
    /** The peer {@link #peer} found last, good until it is {@link #forget forgotten}. */
    private volatile Peer lastPeer;
    private final Map<String, InetSocketAddress> addresses = new ConcurrentHashMap<>();
    private final Map<Long, Awaited> awaited = new ConcurrentHashMap<>();
    /** Producer side: subscriber name to its filter text (empty when none). */
    private final Map<String, String> subscribers = new ConcurrentHashMap<>();
    private final ScheduledExecutorService timer;
    private final ExecutorService connector;
    /** Handlers run on a link's thread unless an executor was given, so it must never wait on itself. */
    private final IoThreads ioThreads;
    /** Every link, open or still in its handshake, so that close reaches them all. */
    private final java.util.Set<Link> links = ConcurrentHashMap.newKeySet();
    private final ServerSocketChannel server;
    /** The process's caps on connections not yet authenticated, which this endpoint's listener shares. */
    private final HandshakeAdmission admission;
    private volatile String name;
    /** What every link of this endpoint shares; made once the name is registered, before any link. */
    private volatile LinkConfig linkConfig;
    /** The link to this domain's PC servlet, for every destination in another domain; null without one. */
    private volatile Peer uplink;
    private volatile boolean closed;

    /** A request waiting for its REPLY or ERROR. */
    private record Awaited(String to, CompletableFuture<byte[]> reply) {
    }

    /** What {@link #answered} gives for an answer from another than the request's destination. */
    private static final Awaited REFUSED = new Awaited("", new CompletableFuture<>());

    private EndpointCore(EndpointBuilder<?> config) throws IOException {
        this.admission = HandshakeAdmission.process(); // first: a bad system property refuses to start
        this.config = config;
        this.blockNanos = config.blockTimeout.compareTo(Duration.ofNanos(Long.MAX_VALUE)) < 0
                ? config.blockTimeout.toNanos() : Long.MAX_VALUE;
        this.whenFull = switch (config.policy) {
            case BLOCK -> WhenFull.BLOCK;
            case FAIL -> WhenFull.FAIL;
            case DROP_OLDEST -> WhenFull.DROP_OLDEST;
        };
        this.security = config.security;
        this.codec = WireCodec.withMaxMessageBytes(config.maxMessageBytes);
        this.registry = RegistryClient.builder(config.registry).security(security).build();
        this.names = new NameGuard(security, registry);
        String prefix = "gma-" + config.label;
        ScheduledThreadPoolExecutor timerPool = new ScheduledThreadPoolExecutor(1, Threads.named(prefix + "-timer"));
        timerPool.setRemoveOnCancelPolicy(true);
        this.timer = timerPool;
        this.connector = Executors.newCachedThreadPool(Threads.numbered(prefix + "-connect-"));
        this.ioThreads = new IoThreads(prefix + "-link-");
        this.server = ServerSocketChannel.open();
        server.bind(new InetSocketAddress(config.host, 0));
    }

    static EndpointCore start(EndpointBuilder<?> config) throws EndpointException {
        EndpointCore e;
        try {
            e = new EndpointCore(config);
        } catch (IOException ex) {
            throw new EndpointException(ErrorCode.INTERNAL, "cannot listen on " + config.host + ": " + ex.getMessage(),
                    ex);
        }
        try {
            e.name = e.register(null);
        } catch (EndpointException ex) {
            e.shutdown();
            throw ex;
        }
        String warning = config.security.warning("endpoint " + e.name);
        if (warning != null) {
            LOG.warn(warning);
        }
        e.linkConfig = new LinkConfig(e.name, e.name, e.security, e.codec, config.pingInterval, e.counters.link);
        if (config.pcServlet != null) {
            e.uplink = new Peer(Name.pcServlet(config.domain), e.newQueue(), Envelope.of(e.name,
                    Name.pcServlet(config.domain)));
            e.peers.put(e.uplink.name(), e.uplink);
            e.connect(e.uplink); // at once, and for good: messages from other domains come over it
        }
        Threads.start("gma-" + config.label + "-accept", new Acceptor(e.server, e.linkConfig, e.admission,
                () -> e.new PeerLink(null), () -> e.closed, e::startLink));
        long renew = Math.max(1, config.lease.toMillis() / 3);
        // the renewal's HTTP call runs on the connector pool, so a slow registry delays no request timeout
        e.timer.scheduleWithFixedDelay(() -> e.connector.execute(e::renewLease), renew, renew, TimeUnit.MILLISECONDS);
        return e;
    }

    // ---------------------------------------------------------------- registration

    /**
     * Registers the endpoint's label; with {@code again}, its name whose lease was lost, the same name (the
     * nonce it had), so that peers' routes stay valid.
     */
    private String register(String again) throws EndpointException {
        Registration.Builder r = Registration.builder(config.kind(), config.label, config.domain).host(config.host)
                .port(((InetSocketAddress) localAddress()).getPort()).exact(config.exact).lease(config.lease);
        if (again != null && !config.exact) {
            // label-nonce@domain: the label is the configured one, so the nonce is what follows it
            r.nonce(again.substring(config.label.length() + 1, again.lastIndexOf('@')));
        }
        config.attributes.forEach(r::attribute);
        try {
            return registry.register(r.build()).name();
        } catch (RegistryException ex) {
            throw registryFailure("register " + (again != null ? again : config.label + "@" + config.domain), ex);
        }
    }

    private java.net.SocketAddress localAddress() throws EndpointException {
        try {
            return server.getLocalAddress();
        } catch (IOException ex) {
            throw new EndpointException(ErrorCode.INTERNAL, "no local address: " + ex.getMessage(), ex);
        }
    }

    /** Renews the lease; a lost one registers the same name again, so peers' routes stay valid. */
    private void renewLease() {
        try {
            registry.renew(name);
        } catch (RegistryException ex) {
            if (ex.status() == 404 && !closed) {
                try {
                    register(name);
                    LOG.info("{}: lease was lost; registered again", name);
                } catch (EndpointException again) {
                    LOG.warn("{}: lease lost and registering again failed: {}", name, again.getMessage());
                }
            } else {
                LOG.warn("{}: lease renewal failed, will retry: {}", name, ex.getMessage());
            }
        }
    }

    private static EndpointException registryFailure(String what, RegistryException ex) {
        ErrorCode code = switch (ex.status()) {
            case 401 -> ErrorCode.UNAUTHORIZED;
            case 403 -> ErrorCode.FORBIDDEN;
            case 404 -> ErrorCode.NO_ROUTE;
            case 0 -> ErrorCode.TIMEOUT;
            default -> ErrorCode.INTERNAL;
        };
        return new EndpointException(code, what + ": " + ex.getMessage(), ex);
    }

    QueryResult query(String sql) throws EndpointException {
        try {
            return registry.query(sql);
        } catch (RegistryException ex) {
            throw registryFailure("query", ex);
        }
    }

    // ---------------------------------------------------------------- sending

    /** Queues a message for {@code to}: data lane, under the full-queue policy. */
    Sent send(String to, Command command, byte[] data) throws EndpointException {
        return send(to, command, data, sequence.incrementAndGet());
    }

    private Sent send(String to, Command command, byte[] data, long seq) throws EndpointException {
        Peer peer = peer(to);
        Pending p = new Pending(peer.queue(), seq);
        // on a link's I/O thread, waiting would stop the very reads whose ACKs make room: fail at once instead
        WhenFull policy = whenFull == WhenFull.BLOCK && IoThreads.isCurrent() ? WhenFull.FAIL : whenFull;
        long unsent;
        try {
            unsent = peer.queue().offerData(p, peer.envelope(to), command, data, policy, blockNanos, to);
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

    /**
     * Cuts every link at once, without BYE, as a network failure would: for tests of resending. Queued and
     * unacknowledged messages stay and go out again on the next link.
     */
    void severLinks() {
        for (Peer p : peers.values()) {
            for (Link l : p.links()) {
                l.fail(new LinkException(ErrorCode.INTERNAL, "link cut"));
            }
        }
    }

    /** Queues a control message (REPLY, ERROR, UNSUBSCRIBE): never bounded, never behind data. */
    void sendControl(String to, Command command, long seq, byte[] data) throws EndpointException {
        Peer peer = peer(to);
        try {
            transmit(peer, peer.queue().offerControl(peer.envelope(to).pack(seq, command, data)));
        } catch (LinkException ex) {
            throw Failures.toEndpoint(ex);
        }
    }

    CompletableFuture<byte[]> requestAsync(String to, byte[] data, Duration timeout) {
        long seq = sequence.incrementAndGet();
        CompletableFuture<byte[]> reply = new CompletableFuture<>();
        awaited.put(seq, new Awaited(to, reply));
        reply.whenComplete((r, ex) -> awaited.remove(seq));
        try {
            send(to, Command.REQUEST, data, seq).acknowledged().whenComplete((ok, ex) -> {
                if (ex != null) {
                    reply.completeExceptionally(ex);
                }
            });
        } catch (EndpointException ex) {
            reply.completeExceptionally(ex);
            return reply;
        }
        ScheduledFuture<?> expiry = timer.schedule(() -> reply.completeExceptionally(new EndpointException(
                ErrorCode.TIMEOUT, "no reply from " + to + " to request " + Long.toUnsignedString(seq) + " within "
                + timeout.toMillis() + " ms")), timeout.toNanos(), TimeUnit.NANOSECONDS);
        // answered requests must not wait in the timer's queue, holding their replies, until they would expire
        reply.whenComplete((r, ex) -> expiry.cancel(false));
        return reply;
    }

    byte[] request(String to, byte[] data, Duration timeout) throws EndpointException {
        if (IoThreads.isCurrent()) {
            throw new IllegalStateException("request() would block this link's I/O thread, which must read the"
                    + " reply: call requestAsync() from a message handler");
        }
        try {
            return requestAsync(to, data, timeout).get();
        } catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            throw new EndpointException(ErrorCode.TIMEOUT, "interrupted waiting for " + to, ex);
        } catch (java.util.concurrent.ExecutionException ex) {
            if (ex.getCause() instanceof EndpointException) {
                throw (EndpointException) ex.getCause();
            }
            throw new EndpointException(ErrorCode.INTERNAL, "request to " + to + " failed: " + ex.getCause(), ex);
        }
    }

    /** Sends DATA to every subscriber whose filter the predicate accepts; one slow subscriber fails alone. */
    List<Sent> publish(byte[] data, Predicate<String> filter) {
        List<Sent> sent = new ArrayList<>();
        for (Map.Entry<String, String> s : subscribers.entrySet()) {
            if (!filter.test(s.getValue())) {
                continue;
            }
            try {
                sent.add(send(s.getKey(), Command.DATA, data));
            } catch (EndpointException ex) {
                sent.add(Pending.refused(ex));
            }
        }
        return sent;
    }

    void addSubscriber(String consumer, String filter) {
        subscribers.put(consumer, filter == null ? "" : filter);
    }

    void removeSubscriber(String consumer) {
        subscribers.remove(consumer);
    }

    Map<String, String> subscribers() {
        return Map.copyOf(subscribers);
    }

    private Peer peer(String to) throws EndpointException {
        if (closed) {
            throw new EndpointException(ErrorCode.SHUTTING_DOWN, name + " is closed");
        }
        Peer last = lastPeer;
        if (last != null && last.name() == to && !last.forgotten()) {
            return last; // a stream sends to one name, usually the same String: no hashing
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
                        + " has no PC servlet (see pcServlet) and reaches only its own domain, " + config.domain);
            }
            return pc;
        }
        Peer made = peers.computeIfAbsent(to, this::newPeer);
        lastPeer = made;
        return made;
    }

    /** Stops sending to {@code peer}: the next send to its name makes a new one. */
    private void forget(Peer peer) {
        peer.forget();
        peers.remove(peer.name(), peer);
    }

    private Peer newPeer(String peerName) {
        return new Peer(peerName, newQueue(), Envelope.of(name, peerName));
    }

    private SendQueue newQueue() {
        return new SendQueue(config.maxQueuedBytes, config.maxQueuedMessages, counters.link);
    }

    /** Sends on the live link ({@code unsent} bytes wait to be written), or starts connecting. */
    private void transmit(Peer peer, long unsent) {
        Link link = peer.active();
        if (link != null) {
            link.send(unsent);
        } else {
            connect(peer);
        }
    }

    // ---------------------------------------------------------------- links

    private void connect(Peer peer) {
        if (closed || !peer.startConnecting()) {
            return;
        }
        connector.execute(() -> {
            SocketChannel channel = null;
            try {
                InetSocketAddress address = peer == uplink ? pcServletAddress() : resolve(peer.name());
                channel = SocketChannel.open();
                channel.socket().connect(address, 5_000);
                // the host name as registered (or as given to pcServlet) is what the certificate must name
                Tls tls = security.tls();
                startLink(Link.connect(linkConfig, new PeerLink(peer), channel, tls == null ? null
                        : tls.clientEngine(address.getHostString(), address.getPort()), peer.name()));
            } catch (EndpointException ex) {
                close(channel);
                if (ex.code() == ErrorCode.NO_ROUTE) {
                    unreachable(peer, ex);
                } else {
                    retry(peer, ex, false);
                }
            } catch (IOException ex) {
                close(channel);
                addresses.remove(peer.name());
                retry(peer, new EndpointException(ErrorCode.INTERNAL, "cannot connect to " + peer.name() + ": "
                        + ex.getMessage(), ex), false);
            }
        });
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
        LOG.debug("{}: {}; next attempt in {} ms", name, why.getMessage(), delay);
        if (closed) {
            return;
        }
        if (delay == 0) {
            connect(peer);
        } else {
            timer.schedule(() -> connect(peer), delay, TimeUnit.MILLISECONDS);
        }
    }

    /** The registry says the peer is gone: what was queued for it fails, and it stops being a subscriber. */
    private void unreachable(Peer peer, EndpointException why) {
        forget(peer);
        subscribers.remove(peer.name());
        peer.queue().close(Failures.toLink(why));
        awaited.values().removeIf(a -> a.to().equals(peer.name()) && a.reply().completeExceptionally(why));
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
            throw registryFailure("look up " + peerName, ex);
        }
    }

    private void startLink(Link link) {
        links.add(link);
        if (closed) {
            links.remove(link);
            link.abort();
            return;
        }
        ioThreads.start(link);
    }

    /**
     * This endpoint's side of one link: the peer whose messages it carries (given when this side connects, found
     * when an accepted link opens; none for a peer that has no name), and what receiving remembers from one
     * message to the next. Set before the link's thread starts or on it, and read on it.
     */
    private final class PeerLink implements LinkListener {
        private Peer peer;
        /** The sender of the last message taken from this link, and its dedup record. */
        private String lastSender;
        private Dedup.Seen lastSeen;
        /** The last destination taken from this link, and the name of this endpoint's that it matched. */
        private String lastTo;
        private String lastToWasOwn;

        PeerLink(Peer peer) {
            this.peer = peer;
        }

        /** Tokens name their audience: the domain for the uplink (its PC servlet), else the peer endpoint's name. */
        @Override
        public String helloCredential() {
            return security.bearer(peer == uplink ? config.domain : peer.name());
        }

        @Override
        public Refusal refusal(Message hello, String identity) {
            return EndpointCore.this.refusal(hello, identity);
        }

        @Override
        public void linkOpened(Link link) {
            EndpointCore.this.linkOpened(this, link);
        }

        @Override
        public void linkWorked(Link link) {
            peer.healthy();
        }

        @Override
        public boolean receive(Message m, Link link) {
            return EndpointCore.this.receive(this, m, link);
        }

        @Override
        public void saidBye(Link link) {
            EndpointCore.this.saidBye(link.peerName());
        }

        @Override
        public void linkClosed(Link link, LinkException why) {
            EndpointCore.this.linkClosed(this, link, why);
        }
    }

    /** A link finished its handshake: it carries its peer's messages. */
    private void linkOpened(PeerLink side, Link link) {
        String peerName = link.peerName();
        if (peerName == null || peerName.isEmpty()) {
            return; // an unregistered peer may send to us; nothing can be sent back by name
        }
        Peer peer = side.peer != null ? side.peer : peers.computeIfAbsent(peerName, this::newPeer);
        side.peer = peer;
        peer.attach(link);
        peer.kick();
    }

    private void linkClosed(PeerLink side, Link link, LinkException why) {
        links.remove(link);
        Peer peer = side.peer;
        if (peer == null) {
            return;
        }
        boolean wasOpen = false;
        for (Link l : peer.links()) {
            wasOpen |= l == link;
        }
        Link next = peer.detach(link);
        if (closed) {
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
            forget(peer);
            peer.queue().close(reason);
        } else if (!wasOpen && link.outbound()) {
            retry(peer, reason, false);
        } else if (!peer.queue().isEmpty() || peer == uplink) {
            counters.reconnects.increment();
            retry(peer, reason, link.worked());
        }
    }

    // ---------------------------------------------------------------- receiving

    /** A counted message arrived on a link (its I/O thread). */
    private boolean receive(PeerLink side, Message m, Link link) {
        if (security.authenticates() && side.peer != uplink && !m.from().equals(link.peerName())) {
            impostor(m, link);
            return true;
        }
        take(m, side);
        return true; // an endpoint takes everything; dedup drops what it had
    }

    /** A message on a direct link whose sender is not the peer that authenticated: refused, not delivered. */
    private void impostor(Message m, Link link) {
        String sentence = "\"" + m.from() + "\" is not the name this link's peer said in HELLO, \""
                + link.peerName() + "\"";
        LOG.info("{}: refused {} {}: {}", name, m.command(), Long.toUnsignedString(m.sequence()), sentence);
        if (link.peerName() == null || link.peerName().isEmpty() || m.command() == Command.REPLY
                || m.command() == Command.ERROR) {
            return; // nobody to tell, or an answer, which is never answered
        }
        try {
            sendControl(link.peerName(), Command.ERROR, m.sequence(),
                    new ErrorText(ErrorCode.FORBIDDEN, sentence).toBytes());
        } catch (EndpointException | IllegalArgumentException ex) {
            LOG.debug("{}: could not report FORBIDDEN to {}: {}", name, link.peerName(), ex.getMessage());
        }
    }

    private void take(Message m, PeerLink side) {
        Command c = m.command();
        boolean answer = c == Command.REPLY || c == Command.ERROR;
        String own = name;
        if (m.to() != side.lastTo || side.lastToWasOwn != own) {
            // a stream repeats the String decoded once: a compare, not equals, unless this endpoint was renamed
            if (!m.to().equals(own)) {
                if (!answer) {
                    error(m, ErrorCode.NO_ROUTE, "this is " + own + ", not " + m.to() + "; an endpoint does not"
                            + " route");
                }
                return;
            }
            side.lastTo = m.to();
            side.lastToWasOwn = own;
        }
        if (!answer) {
            // one sender's messages are delivered one at a time, in order, even while an old link still
            // delivers what it had read and a new one delivers what was resent
            Dedup.Seen seen = side.lastSeen;
            if (seen == null || side.lastSender != m.from() || seen.forgotten) {
                // a link's messages come from one sender, decoded to one String: a compare, not a look-up
                seen = dedup.of(m.from());
                side.lastSender = m.from();
                side.lastSeen = seen;
            }
            synchronized (seen) {
                if (!seen.add(m.sequence())) {
                    counters.duplicates.increment();
                    return;
                }
                dispatch(m);
            }
            return;
        }
        if (c == Command.REPLY) {
            // taking the request from the map makes its answer exactly-once: a resent REPLY finds nothing
            Awaited a = answered(m, side.peer);
            if (a != null && a != REFUSED) {
                a.reply().complete(m.data());
            }
        } else if (c == Command.ERROR) {
            Awaited a = answered(m, side.peer);
            if (a == REFUSED) {
                return;
            }
            String text = m.dataAsString();
            EndpointException error = remoteError(m.from(), text);
            if (error.code() == ErrorCode.NO_ROUTE && subscribers.remove(m.from()) != null) {
                // a PC servlet found no way to a subscriber in another domain: it vanished
                LOG.info("{}: dropped subscriber {}: {}", name, m.from(), text);
            }
            if (a != null) {
                a.reply().completeExceptionally(error);
            } else {
                LOG.warn("{}: {} reported an error on message {}: {}", name, m.from(),
                        Long.toUnsignedString(m.sequence()), text);
            }
        }
    }

    /**
     * The request {@code m} (a REPLY or ERROR) answers, taken from those awaited: only when it comes from the
     * endpoint the request went to (PC servlets that cannot deliver it answer in that endpoint's name), or is an
     * ERROR from this endpoint's own PC servlet, on its uplink (it refused to carry the request), so that nobody
     * else can answer for it. Null for an answer to nothing awaited (a resent one, counted as a duplicate),
     * {@link #REFUSED} for one from another (logged, counted).
     */
    private Awaited answered(Message m, Peer from) {
        Awaited a = awaited.get(m.sequence());
        if (a == null) {
            if (m.command() == Command.REPLY) {
                counters.duplicates.increment();
            }
            return null;
        }
        boolean fromOwnPcServlet = m.command() == Command.ERROR && from == uplink && uplink != null
                && m.from().equals(uplink.name());
        if (!a.to().equals(m.from()) && !fromOwnPcServlet) {
            counters.refusedAnswers.increment();
            LOG.info("{}: refused {} {} from {}: request {} went to {}, and only it answers it", name, m.command(),
                    Long.toUnsignedString(m.sequence()), m.from(), Long.toUnsignedString(m.sequence()), a.to());
            return REFUSED;
        }
        return awaited.remove(m.sequence(), a) ? a : null;
    }

    /** A sender's own message, delivered for the first time. */
    private void dispatch(Message m) {
        if (m.command() == Command.SUBSCRIBE) {
            subscribers.put(m.from(), m.dataAsString());
        } else if (m.command() == Command.UNSUBSCRIBE) {
            subscribers.remove(m.from());
        } else {
            deliver(m);
        }
    }

    /**
     * A peer said BYE, which an endpoint says only when it closes for good: it fails what it has not had
     * acknowledged instead of resending it, so its dedup window can go, and a later run under the same exact
     * name starts afresh.
     */
    private void saidBye(String peerName) {
        if (peerName != null) {
            dedup.forget(peerName);
        }
    }

    private static EndpointException remoteError(String from, String text) {
        // an error code this version does not know: reported as INTERNAL, with the peer's text
        return new EndpointException(ErrorText.parse(text).code(), from + " answered ERROR " + text);
    }

    private void deliver(Message m) {
        MessageHandler handler = config.handler;
        if (handler == null) {
            if (m.replyExpected()) {
                error(m, ErrorCode.INTERNAL, name + " has no message handler");
            }
            return;
        }
        if (config.executor == null) {
            handle(handler, m); // on the I/O thread, without a task object per message
            return;
        }
        try {
            config.executor.execute(() -> handle(handler, m));
        } catch (RejectedExecutionException ex) {
            LOG.warn("{}: the handler executor refused {} from {}", name, m.command(), m.from());
            if (m.replyExpected()) {
                error(m, ErrorCode.QUEUE_FULL, "the handler executor of " + name + " refused the message");
            }
        }
    }

    private void handle(MessageHandler handler, Message m) {
        try {
            handler.onMessage(new Delivery(this, m));
        } catch (Exception | LinkageError | AssertionError | StackOverflowError ex) {
            // the handler's failure is this message's, not the link's: the link goes on
            LOG.warn("{}: handler failed on {} from {}: {}", name, m.command(), m.from(), ex.toString());
            if (m.replyExpected()) {
                error(m, ErrorCode.INTERNAL, "the handler of " + name + " failed: " + ex);
            }
        }
    }

    private void error(Message m, ErrorCode code, String sentence) {
        try {
            sendControl(m.from(), Command.ERROR, m.sequence(), new ErrorText(code, sentence).toBytes());
        } catch (EndpointException | IllegalArgumentException ex) {
            LOG.debug("{}: could not report {} to {}: {}", name, code, m.from(), ex.getMessage());
        }
    }

    // ---------------------------------------------------------------- the rest

    String name() {
        return name;
    }

    /** Tasks waiting in the timer: lease renewal, back-offs, and requests not answered yet. */
    int timerTasks() {
        return ((ScheduledThreadPoolExecutor) timer).getQueue().size();
    }

    Duration requestTimeout() {
        return config.requestTimeout;
    }

    /**
     * A peer may link to this endpoint when the rules let its identity send to this endpoint's name, and it may
     * go by the name it says in HELLO ({@link NameGuard}).
     */
    private Refusal refusal(Message hello, String identity) {
        try {
            security.authorize(identity, Rules.Verb.SEND, name);
        } catch (AuthException e) {
            return Refusal.forbidden(e.getMessage());
        }
        return names.check(identity, hello.from());
    }

    EndpointStats stats() {
        long queuedMessages = 0;
        long queuedBytes = 0;
        for (Peer p : peers.values()) {
            queuedMessages += p.queue().messages();
            queuedBytes += p.queue().bytes();
        }
        return counters.snapshot(queuedMessages, queuedBytes);
    }

    /** Unregisters, says BYE on every link, fails what is still queued with SHUTTING_DOWN. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        try {
            registry.unregister(name);
        } catch (RegistryException ex) {
            LOG.debug("{}: unregister failed: {}", name, ex.getMessage());
        }
        EndpointException shutdown = new EndpointException(ErrorCode.SHUTTING_DOWN, name + " closed");
        for (Link l : links) {
            l.bye();
        }
        for (Peer p : peers.values()) {
            p.queue().close(Failures.toLink(shutdown));
        }
        awaited.values().forEach(a -> a.reply().completeExceptionally(shutdown));
        shutdown();
    }

    private void shutdown() {
        closed = true;
        try {
            server.close();
        } catch (IOException ignored) {
            // closing anyway
        }
        timer.shutdownNow();
        connector.shutdownNow();
    }
}
