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
import io.gma.registry.api.RegistryClient;
import io.gma.security.AuthException;
import io.gma.security.Rules;
import io.gma.security.Security;
import io.gma.wire.Command;
import io.gma.wire.Packed;
import io.gma.wire.ErrorCode;
import io.gma.wire.ErrorText;
import io.gma.wire.Message;
import io.gma.wire.Name;
import io.gma.wire.ProtocolException;
import io.gma.wire.Threads;
import io.gma.wire.WireCodec;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The uplink side of a PC servlet (PROTOCOL.md sections 3 and 4): it accepts the TCP uplinks of its domain's
 * endpoints, hands what they send for other domains to a {@link Router}, and delivers to them what comes from
 * other domains, with the ACKs and resends of a direct link.
 *
 * <pre>
 *   endpoint --uplink--&gt; Gateway --Router.route--&gt; the PC servlet's queues per domain, then HTTP
 *   endpoint &lt;--uplink-- Gateway &lt;--deliverAll--- the PC servlet, from POSTs of other domains
 * </pre>
 *
 * Every endpoint has its own bounded queue here, so a slow endpoint fills its own and no other's. When the
 * router has no room, an uplink goes on being read (the endpoint's ACKs, for what is delivered to it, come
 * on it too) but what it carries is parked, unacknowledged, until {@link #resume()}: the endpoint's own send
 * queue fills, and it blocks or fails (throttling end to end). Parked messages are bounded in all; past that
 * bound they are not kept, and the uplink is closed once the router has room, so that its endpoint sends
 * them again. This class is for the pcservlet module; applications use {@link Producer} and {@link Consumer}.
 *
 * <p>With a {@link Builder#security Security}, uplinks speak TLS and must authenticate in HELLO (a token made
 * for this domain, or a client certificate) as an identity that may go by the name HELLO gives (the registry
 * says it registered it: {@link NameGuard}); every message an uplink carries must be from that name, and every
 * command, answers included, needs a {@code send} rule for the uplink's identity and the destination:
 * otherwise it is not routed, and its sender gets ERROR FORBIDDEN for it (unless it is itself an answer).
 */
public final class Gateway implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(Gateway.class);

    /** Where a gateway hands the traffic of its endpoints. */
    public interface Router {
        /**
         * A message an endpoint of this domain sent for another, on its uplink's I/O thread, in the order sent.
         *
         * @return whether it was taken: false when there is no room for it now; the gateway then parks it and
         *     what the uplink sends after it, and offers it again after {@link #resume()}
         */
        boolean route(Message m);

        /** A message queued for an endpoint of this domain that will never reach it. */
        void undeliverable(Message m, ErrorCode code, String reason);
    }

    /**
     * One endpoint's queue at the gateway.
     *
     * @param connected whether its uplink is open now
     * @param messages queued, unwritten or unacknowledged
     * @param bytes of those messages
     */
    public record QueueInfo(String endpoint, boolean connected, long messages, long bytes) {
    }

    private final String domain;
    private final String name;
    private final Router router;
    private final Security security;
    private final NameGuard names;
    private final long maxQueuedBytes;
    private final int maxQueuedMessages;
    private final WireCodec codec;
    private final Counters counters = new Counters();
    private final ServerSocketChannel server;
    /** The process's caps on connections not yet authenticated, which the uplink listener shares. */
    private final HandshakeAdmission admission;
    private final Map<String, Peer> peers = new ConcurrentHashMap<>();
    private final Set<Link> links = ConcurrentHashMap.newKeySet();
    /** Uplinks whose messages are parked, and their state (touched only on each link's I/O thread). */
    private final Map<Link, Parked> paused = new ConcurrentHashMap<>();
    /** Bytes parked on all uplinks together; past maxParkedBytes, messages are not kept (they are resent). */
    private final AtomicLong parkedBytes = new AtomicLong();
    private final long maxParkedBytes;
    private final ScheduledExecutorService retry;
    private final Object delivering = new Object();
    private final IoThreads ioThreads;
    private final LinkConfig linkConfig;
    private volatile boolean closed;
    private volatile boolean held;

    private Gateway(Builder b) throws IOException {
        this.admission = HandshakeAdmission.process(); // first: a bad system property refuses to build
        this.domain = b.domain;
        this.name = Name.pcServlet(b.domain);
        this.router = b.router;
        this.security = b.security;
        this.names = new NameGuard(b.security, b.registry);
        this.maxQueuedBytes = b.maxQueuedBytes;
        this.maxQueuedMessages = b.maxQueuedMessages;
        this.maxParkedBytes = b.maxParkedBytes;
        this.codec = WireCodec.withMaxMessageBytes(b.maxMessageBytes);
        this.server = ServerSocketChannel.open();
        try {
            server.bind(new InetSocketAddress(b.host, b.port));
        } catch (IOException e) {
            server.close();
            throw new IOException("cannot listen for uplinks on " + b.host + ":" + b.port + ": " + e.getMessage(), e);
        }
        this.retry = Executors.newSingleThreadScheduledExecutor(Threads.named("gma-" + name + "-resume"));
        this.ioThreads = new IoThreads("gma-" + name + "-uplink-");
        this.linkConfig = new LinkConfig(name, domain, security, codec, b.pingInterval, counters.link);
    }

    public static Builder builder(String domain, Router router) {
        return new Builder(domain, router);
    }

    public String name() {
        return name;
    }

    public String domain() {
        return domain;
    }

    /** Where endpoints open their uplinks. */
    public InetSocketAddress address() {
        try {
            return (InetSocketAddress) server.getLocalAddress();
        } catch (IOException e) {
            throw new IllegalStateException("the uplink listener is closed", e);
        }
    }

    /**
     * Queues each message for the endpoint of this domain it is addressed to, all of them or none: none when
     * the data of any endpoint's share would overflow its queue (an empty queue takes any share). Answers
     * (REPLY, ERROR) and UNSUBSCRIBE go in the control lane, which data never holds up; one that overflows even
     * that is passed to {@link Router#undeliverable}.
     *
     * @return null when all was queued; else nothing was, and this says which queue had no room
     * @throws IllegalArgumentException if a message is not for an endpoint of this domain
     */
    public String deliverAll(List<Message> messages) {
        for (Message m : messages) {
            if (!Name.domainOf(m.to()).equals(domain) || m.to().equals(name)) {
                throw new IllegalArgumentException(m.to() + " is not an endpoint of domain " + domain);
            }
        }
        Map<String, long[]> shares = dataShares(messages);
        Set<Peer> touched = new java.util.LinkedHashSet<>();
        synchronized (delivering) {
            if (closed) {
                return name + " is closed";
            }
            for (Map.Entry<String, long[]> e : shares.entrySet()) {
                Peer p = peers.get(e.getKey());
                if (lacksRoom(p, e.getValue())) {
                    return "the queue for " + e.getKey() + " holds " + p.queue().messages() + " messages, "
                            + p.queue().bytes() + " bytes (limits " + maxQueuedMessages + ", " + maxQueuedBytes
                            + "); " + e.getValue()[0] + " more, " + e.getValue()[1] + " bytes, came";
                }
            }
            for (Message m : messages) {
                Peer p = peers.computeIfAbsent(m.to(), this::newPeer);
                byte[] packed = codec.encode(m);
                try {
                    if (m.command().isControl()) {
                        p.queue().offerControl(packed);
                    } else {
                        p.queue().addData(packed);
                    }
                    touched.add(p);
                } catch (LinkException ex) {
                    router.undeliverable(m, ex.code(), ex.getMessage());
                }
            }
        }
        for (Peer p : touched) {
            p.kick();
        }
        return null;
    }

    /**
     * The endpoints among these messages' destinations whose queues have no room for their share of data now
     * (advice for a sender, which may hold their messages back and send the others).
     */
    public Set<String> fullFor(List<Message> messages) {
        Set<String> full = new java.util.TreeSet<>();
        dataShares(messages).forEach((endpoint, share) -> {
            if (lacksRoom(peers.get(endpoint), share)) {
                full.add(endpoint);
            }
        });
        return full;
    }

    /** Each destination's data messages and bytes among these (answers are not bounded, so not counted). */
    private static Map<String, long[]> dataShares(List<Message> messages) {
        Map<String, long[]> shares = new HashMap<>();
        for (Message m : messages) {
            if (!m.command().isControl()) {
                long[] share = shares.computeIfAbsent(m.to(), k -> new long[2]);
                share[0]++;
                share[1] += m.encodedLength();
            }
        }
        return shares;
    }

    private static boolean lacksRoom(Peer p, long[] share) {
        return p != null && !p.queue().hasRoom(share[1], (int) share[0]);
    }

    private Peer newPeer(String endpoint) {
        return new Peer(endpoint, new SendQueue(maxQueuedBytes, maxQueuedMessages, counters.link), null);
    }

    /**
     * Takes no more messages from the uplinks, for good: they stay unacknowledged with their endpoints, which
     * send them again to the next run of this PC servlet; what was parked is dropped likewise. ACKs are still
     * read, so delivery to the endpoints goes on (a PC servlet about to close drains its queues meanwhile).
     */
    public void hold() {
        held = true;
        for (Map.Entry<Link, Parked> e : paused.entrySet()) {
            e.getKey().execute(() -> e.getValue().dropAll());
        }
    }

    /** The router has room again: parked messages are routed, in order, on their uplinks' threads. */
    public void resume() {
        for (Map.Entry<Link, Parked> e : paused.entrySet()) {
            schedule(e.getKey(), e.getValue());
        }
    }

    /** Asks the link's I/O thread to offer its parked messages again, unless it is asked already. */
    private void schedule(Link link, Parked p) {
        if (p.scheduled.compareAndSet(false, true)) {
            link.execute(() -> {
                p.scheduled.set(false);
                unpark(link, p);
            });
        }
    }

    /**
     * On the link's I/O thread: routes its parked messages until the router is full again. Once none is left
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
            if (!route(link, p.peer, m)) {
                return; // still no room: the rest waits for the next resume
            }
            p.messages.pollFirst();
            p.bytes -= Parked.cost(m);
            parkedBytes.addAndGet(-Parked.cost(m));
            link.countTaken(1, m.encodedLength());
        }
        paused.remove(link);
        if (p.dropped) {
            link.bye(); // ACK what was taken, and close: the endpoint resends what it had not had acknowledged
        }
    }

    /**
     * On the link's I/O thread: hands {@code m} to the router, unless security refuses it; a refused message
     * is answered with ERROR FORBIDDEN, not routed, and taken (true).
     */
    private boolean route(Link link, Peer p, Message m) {
        if (!security.authenticates()) {
            return router.route(m);
        }
        String refused = null;
        if (!m.from().equals(link.peerName())) {
            refused = "\"" + m.from() + "\" is not the name this uplink said in HELLO, \"" + link.peerName() + "\"";
        } else {
            // every command: an answer or an UNSUBSCRIBE goes only where its sender may send
            try {
                security.authorize(link.identity(), Rules.Verb.SEND, m.to());
            } catch (AuthException e) {
                refused = e.getMessage();
            }
        }
        if (refused == null) {
            return router.route(m);
        }
        LOG.info("{}: refused {} {} from {} to {}: {}", name, m.command(), Long.toUnsignedString(m.sequence()),
                link.peerName(), m.to(), refused);
        if (p != null && m.command() != Command.REPLY && m.command() != Command.ERROR) {
            byte[] error = Packed.make(m.sequence(), Command.ERROR, name, link.peerName(),
                    new ErrorText(ErrorCode.FORBIDDEN, refused).toBytes());
            try {
                p.queue().offerControl(error);
                p.kick();
            } catch (LinkException closing) {
                LOG.debug("{}: could not report FORBIDDEN to {}: {}", name, link.peerName(), closing.getMessage());
            }
        }
        return true;
    }

    /** What one uplink sent while the router was full: kept in order, unacknowledged, within the bound. */
    private final class Parked {
        /** The endpoint whose uplink it is. */
        final Peer peer;
        final ArrayDeque<Message> messages = new ArrayDeque<>();
        /** What its messages cost in memory, as counted against maxParkedBytes. */
        long bytes;
        /** Some were not kept: nothing after them may be taken on this link. */
        boolean dropped;
        /** An unpark task is queued on the link's thread. */
        final java.util.concurrent.atomic.AtomicBoolean scheduled = new java.util.concurrent.atomic.AtomicBoolean();

        Parked(Peer peer) {
            this.peer = peer;
        }

        /** A parked message's memory: its bytes and about 64 for the objects around them. */
        static long cost(Message m) {
            return m.encodedLength() + 64L;
        }

        /**
         * On the link's I/O thread: keeps {@code m} if the bound allows. The first is kept whatever the bound:
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

        /** On the link's I/O thread: lets go of everything; the endpoint resends it to the next run. */
        void dropAll() {
            parkedBytes.addAndGet(-bytes);
            messages.clear();
            bytes = 0;
            dropped = true;
        }
    }

    /** The endpoints' queues, now. */
    public List<QueueInfo> queues() {
        List<QueueInfo> all = new ArrayList<>();
        for (Peer p : peers.values()) {
            all.add(new QueueInfo(p.name(), p.active() != null, p.queue().messages(), p.queue().bytes()));
        }
        return all;
    }

    /** Counters of all uplinks together. */
    public EndpointStats stats() {
        long messages = 0;
        long bytes = 0;
        for (Peer p : peers.values()) {
            messages += p.queue().messages();
            bytes += p.queue().bytes();
        }
        return counters.snapshot(messages, bytes);
    }

    /**
     * Forgets an endpoint that is gone (its lease expired, it unregistered): each message queued for it goes to
     * {@link Router#undeliverable} with {@code code}. Does nothing while its uplink is open.
     */
    public void drop(String endpoint, ErrorCode code, String reason) {
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
        fail(p, new LinkException(code, reason));
    }

    private void fail(Peer p, LinkException why) {
        for (byte[] packed : p.queue().closeKeeping(why)) {
            try {
                router.undeliverable(codec.decode(packed), why.code(), why.getMessage());
            } catch (ProtocolException impossible) {
                LOG.error("{}: a queued message does not decode: {}", name, impossible.getMessage());
            }
        }
    }

    /** Accepts uplinks on a thread of its own until closed; its PC servlet says at start how secure it is. */
    public Gateway start() {
        // a safety net under resume(): parked uplinks try again every 50 ms, whatever the router says
        retry.scheduleWithFixedDelay(() -> {
            if (!paused.isEmpty()) {
                resume();
            }
        }, 50, 50, TimeUnit.MILLISECONDS);
        Threads.start("gma-" + name + "-accept", new Acceptor(server, linkConfig, admission, Uplink::new,
                () -> closed, this::startLink));
        return this;
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

    /** Says BYE on every uplink; what is still queued goes to {@link Router#undeliverable} as SHUTTING_DOWN. */
    @Override
    public void close() {
        synchronized (delivering) {
            if (closed) {
                return;
            }
            closed = true;
        }
        retry.shutdownNow();
        try {
            server.close();
        } catch (IOException ignored) {
            // closing anyway
        }
        for (Link l : links) {
            l.bye();
        }
        LinkException shutdown = new LinkException(ErrorCode.SHUTTING_DOWN, name + " closed");
        for (Peer p : peers.values()) {
            fail(p, shutdown);
        }
        peers.clear();
    }

    /**
     * The gateway's side of one uplink, kept off the public API: the endpoint whose queue it carries, once it
     * opens. Set and read on the uplink's I/O thread.
     */
    private final class Uplink implements LinkListener {
        private Peer peer;

        @Override
        public String helloCredential() {
            throw new IllegalStateException("a gateway only accepts links"); // so never says HELLO
        }

        @Override
        public Refusal refusal(Message hello, String identity) {
            // who may send where is checked per message (route), as an uplink carries messages for any domain
            String from = hello.from();
            if (from.isEmpty() || from.equals(name) || !Name.domainOf(from).equals(domain)) {
                return Refusal.forbidden(name + " takes uplinks from endpoints of domain " + domain + " only, not \""
                        + from + "\"");
            }
            return names.check(identity, from);
        }

        @Override
        public void linkOpened(Link link) {
            Peer p;
            while (true) {
                p = peers.computeIfAbsent(link.peerName(), Gateway.this::newPeer);
                synchronized (p) {
                    if (peers.get(link.peerName()) == p) { // not dropped meanwhile
                        p.attach(link);
                        break;
                    }
                }
            }
            peer = p;
            p.kick();
        }

        @Override
        public void linkWorked(Link link) {
            peer.healthy();
        }

        @Override
        public boolean receive(Message m, Link link) {
            if (held) {
                return false; // the endpoint keeps it, and sends it again to the next run of its PC servlet
            }
            Parked p = paused.get(link);
            if (p != null) {
                p.park(m);
                return false;
            }
            if (route(link, peer, m)) {
                return true;
            }
            p = new Parked(peer); // the first one not taken: it and all after it wait
            p.park(m);
            paused.put(link, p);
            schedule(link, p); // room may have come between the router's answer and now: no wake-up is lost
            return false;
        }

        @Override
        public void saidBye(Link link) {
            // the endpoint closed for good: what is queued for it waits for its lease to end, then fails
        }

        @Override
        public void linkClosed(Link link, LinkException why) {
            links.remove(link);
            Parked parked = paused.remove(link);
            if (parked != null) {
                parked.dropAll(); // unacknowledged: the endpoint sends them again on its next uplink
            }
            Peer p = peer;
            if (p != null) {
                Link next = p.detach(link);
                if (next != null) {
                    next.flush();
                }
            }
        }
    }

    /** Settings of a gateway; the domain and the router are required. */
    public static final class Builder {
        private final String domain;
        private final Router router;
        private Security security = Security.insecure();
        private RegistryClient registry;
        private String host = "127.0.0.1";
        private int port;
        private long maxQueuedBytes = 8L << 20;
        private int maxQueuedMessages = SendQueue.MAX_MESSAGES;
        private Duration pingInterval = Duration.ofSeconds(15);
        private int maxMessageBytes = 16 << 20;
        private long maxParkedBytes = 64L << 20;

        private Builder(String domain, Router router) {
            this.domain = Objects.requireNonNull(domain, "domain");
            this.router = Objects.requireNonNull(router, "router");
        }

        /**
         * TLS on the uplinks, how endpoints authenticate in HELLO, and the {@code send} rules their messages
         * must pass. Default {@link Security#insecure()}: its PC servlet says so at start.
         */
        public Builder security(Security security) {
            this.security = Objects.requireNonNull(security, "security");
            return this;
        }

        /**
         * The registry whose records say which identity may go by which name (with security on: required). Its
         * client shows this PC servlet's credentials.
         */
        public Builder registry(RegistryClient registry) {
            this.registry = Objects.requireNonNull(registry, "registry");
            return this;
        }

        /** The address to listen on; default 127.0.0.1. */
        public Builder host(String host) {
            this.host = Objects.requireNonNull(host, "host");
            return this;
        }

        /** The uplink port; default 0, an ephemeral one. */
        public Builder port(int port) {
            if (port < 0 || port > 65_535) {
                throw new IllegalArgumentException("uplink port " + port + " is outside 0..65535");
            }
            this.port = port;
            return this;
        }

        /** Each endpoint's queue at the gateway, in bytes; default 8 MiB. */
        public Builder maxQueuedBytes(long bytes) {
            if (bytes < 1024) {
                throw new IllegalArgumentException("maxQueuedBytes " + bytes + " is under 1024");
            }
            this.maxQueuedBytes = bytes;
            return this;
        }

        /** Each endpoint's queue at the gateway, in messages; default and most 65,536. */
        public Builder maxQueuedMessages(int messages) {
            if (messages < 1 || messages > SendQueue.MAX_MESSAGES) {
                throw new IllegalArgumentException("maxQueuedMessages " + messages + " is outside 1.."
                        + SendQueue.MAX_MESSAGES);
            }
            this.maxQueuedMessages = messages;
            return this;
        }

        public Builder pingInterval(Duration interval) {
            if (interval.isNegative() || interval.isZero()) {
                throw new IllegalArgumentException("pingInterval " + interval + " is not positive");
            }
            this.pingInterval = interval;
            return this;
        }

        /**
         * What all uplinks together may park, in bytes, while the router is full; default 64 MiB. Past it,
         * messages are not kept, and their uplinks are closed once there is room, for the endpoints to send
         * them again.
         */
        public Builder maxParkedBytes(long bytes) {
            if (bytes < 0) {
                throw new IllegalArgumentException("maxParkedBytes " + bytes + " is negative");
            }
            this.maxParkedBytes = bytes;
            return this;
        }

        public Builder maxMessageBytes(int bytes) {
            this.maxMessageBytes = bytes;
            return this;
        }

        /**
         * Opens the uplink listener; {@link Gateway#start()} accepts.
         *
         * @throws IllegalStateException if security has TLS without a key store
         * @throws IllegalArgumentException if the system property {@code gma.maxUnauthenticated} or
         *     {@code gma.maxUnauthenticatedPerAddress} is not a whole number from 1 to 1,000,000
         */
        public Gateway build() throws IOException {
            if (security.tls() != null && !security.tls().hasKey()) {
                throw new IllegalStateException("security has TLS without a key store: uplinks need the PC"
                        + " servlet's certificate");
            }
            if (security.authenticates() && registry == null) {
                throw new IllegalStateException("with security on, a gateway checks the names its uplinks say in"
                        + " HELLO with the registry: give it registry(...)");
            }
            return new Gateway(this);
        }
    }
}
