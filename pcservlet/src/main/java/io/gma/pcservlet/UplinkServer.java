package io.gma.pcservlet;

import io.gma.internal.link.Acceptor;
import io.gma.internal.link.HandshakeAdmission;
import io.gma.internal.link.IoThreads;
import io.gma.internal.link.Link;
import io.gma.internal.link.LinkConfig;
import io.gma.internal.link.LinkCounters;
import io.gma.internal.link.LinkException;
import io.gma.internal.link.LinkLimit;
import io.gma.internal.link.LinkListener;
import io.gma.internal.link.NameGuard;
import io.gma.internal.link.Peer;
import io.gma.internal.link.Refusal;
import io.gma.registry.api.RegistryClient;
import io.gma.security.AuthException;
import io.gma.security.Rules;
import io.gma.security.Security;
import io.gma.wire.Command;
import io.gma.wire.ErrorCode;
import io.gma.wire.ErrorText;
import io.gma.wire.Message;
import io.gma.wire.Name;
import io.gma.wire.Packed;
import io.gma.wire.Threads;
import io.gma.wire.WireCodec;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The uplink side of a PC servlet (protocol.md sections 3 and 4): it accepts the TCP uplinks of its domain's
 * endpoints, hands what they send to its {@link Upstream} (the {@link Router}), and carries to them what waits
 * in their {@link LocalQueues}, with the ACKs and resends of a direct link.
 *
 * <pre>
 *   endpoint --uplink--&gt; UplinkServer --Upstream.route--&gt; Router: a domain's queue, or an endpoint's here
 *   endpoint &lt;--uplink-- UplinkServer &lt;-- LocalQueues &lt;--- POSTs and polls of other domains
 * </pre>
 *
 * When the router has no room, what an uplink carries is parked, unacknowledged ({@link Parking}), and offered
 * again each time room is freed ({@link RoomSignal}).
 *
 * <p>With a {@link Security} that authenticates, uplinks speak TLS and must authenticate in HELLO (a token made
 * for this domain, or a client certificate) as an identity that may go by the name HELLO gives (the registry
 * says it registered it: {@link NameGuard}); every message an uplink carries must be from that name, and every
 * command, answers included, needs a {@code send} rule for the uplink's identity and the destination:
 * otherwise it is not routed, and its sender gets ERROR FORBIDDEN for it (unless it is itself an answer).
 */
final class UplinkServer implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(UplinkServer.class);

    /** Where the uplink server hands what its endpoints send. */
    interface Upstream extends LocalQueues.Undeliverable {
        /**
         * A message an endpoint of this domain sent, on its uplink's event loop, in the order sent, by the identity
         * the uplink proved to be.
         *
         * @return {@link Routed#NO_ROOM} when there is no room for it now (it is then parked, with what the uplink
         *     sends after it, and offered again once room is freed); else taken, and spooled or not
         */
        Routed route(Message m, String identity);
    }

    /** What became of a message an uplink carried. */
    sealed interface Routed {
        /** Not taken: no room now. */
        Routed NO_ROOM = new NoRoom();
        /** Taken, and not spooled: its endpoint may be told at once. */
        Routed TAKEN = new Taken();

        /** Not taken: no room now. */
        record NoRoom() implements Routed {
        }

        /** Taken, and not spooled (in memory, or answered with an ERROR). */
        record Taken() implements Routed {
        }

        /** Taken, and appended to the spool as record {@code seq}: its endpoint is told once it is on disk. */
        record Spooled(long seq) implements Routed {
        }

        /**
         * Refused, and taken (the uplink's ACK goes past it, so that the sender's other messages flow): {@code
         * error}, a packed ERROR that answers it, is written to the sender before that ACK, so its endpoint fails
         * the message's future rather than taking the ACK for it (docs/pcservlet.md).
         */
        record Refused(byte[] error) implements Routed {
        }

        /** The record a message taken was spooled as, or {@link Spooling#NONE}. */
        static long spooledAs(Routed r) {
            return r instanceof Spooled s ? s.seq() : Spooling.NONE;
        }
    }

    /**
     * What an uplink server is told.
     *
     * @param domain the domain whose endpoints it takes uplinks from
     * @param host and port: where it listens (port 0: an ephemeral one)
     * @param security TLS on the uplinks, how endpoints authenticate, and the {@code send} rules
     * @param registry the registry whose records say which identity may go by which name (null: without
     *     security only)
     * @param maxParkedBytes what all uplinks together may park while the router is full
     * @param maxMessageBytes the largest message an uplink may carry
     * @param pingInterval how often an idle uplink is pinged
     * @param maxLinks the most uplinks open at once ({@link LinkLimit})
     * @param ioThreads how many event loops serve the uplinks ({@link IoThreads})
     */
    record Config(String domain, String host, int port, Security security, RegistryClient registry,
            long maxParkedBytes, int maxMessageBytes, Duration pingInterval, int maxLinks, int ioThreads) {
        Config {
            if (security.tls() != null && !security.tls().hasKey()) {
                throw new IllegalStateException("security has TLS without a key store: uplinks need the PC"
                        + " servlet's certificate");
            }
            if (security.authenticates() && registry == null) {
                throw new IllegalStateException("with security on, a PC servlet checks the names its uplinks say"
                        + " in HELLO with the registry: give it the registry");
            }
        }

        /** Defaults but for the domain and security: for tests. */
        static Config of(String domain, Security security, RegistryClient registry) {
            return new Config(domain, "127.0.0.1", 0, security, registry, 64L << 20,
                    WireCodec.DEFAULT_MAX_MESSAGE_BYTES, Duration.ofSeconds(15), LinkLimit.DEFAULT_MAX,
                    IoThreads.defaultLoops());
        }
    }

    private final String domain;
    private final String name;
    private final Upstream upstream;
    private final LocalQueues local;
    private final Security security;
    private final NameGuard names;
    private final LinkCounters counters;
    private final ServerSocketChannel server;
    /** The process's caps on connections not yet authenticated, which the uplink listener shares. */
    private final HandshakeAdmission admission;
    private final Set<Link> links = ConcurrentHashMap.newKeySet();
    private final Parking parking;
    private final Spooling spooling;
    private final RoomSignal room;
    private final IoThreads ioThreads;
    private final LinkConfig linkConfig;
    private volatile boolean closed;

    /**
     * Opens the uplink listener; {@link #start()} accepts.
     *
     * @param counters where the uplinks and {@code local}'s queues count (the same for both)
     * @throws IOException if the port cannot be bound (the sentence names host and port)
     * @throws IllegalArgumentException if the system property {@code gma.maxUnauthenticated} or
     *     {@code gma.maxUnauthenticatedPerAddress} is not a whole number from 1 to 1,000,000
     */
    UplinkServer(Config config, LocalQueues local, Upstream upstream, RoomSignal room, LinkCounters counters,
            Spooling spooling) throws IOException {
        this.spooling = spooling;
        this.admission = HandshakeAdmission.process(); // first: a bad system property refuses to build
        this.domain = config.domain();
        this.name = Name.pcServlet(domain);
        this.upstream = upstream;
        this.local = local;
        this.security = config.security();
        this.names = new NameGuard(security, config.registry());
        this.counters = counters;
        this.parking = new Parking(config.maxParkedBytes());
        this.room = room;
        this.server = ServerSocketChannel.open();
        try {
            server.bind(new InetSocketAddress(config.host(), config.port()));
        } catch (IOException e) {
            server.close();
            throw new IOException("cannot listen for uplinks on " + config.host() + ":" + config.port() + " ("
                    + e.getMessage() + "): another process has it; stop that one, or give --uplink-port"
                    + " (PcServer.Builder.uplinkPort) another port (0 takes any free one)", e);
        }
        this.ioThreads = new IoThreads("gma-" + name + "-uplink-", config.ioThreads());
        this.linkConfig = new LinkConfig(name, domain, security, WireCodec.withMaxMessageBytes(
                config.maxMessageBytes()), config.pingInterval(), counters, new LinkLimit(config.maxLinks()));
        room.onFreed(parking::resume);
    }

    String name() {
        return name;
    }

    /** Where endpoints open their uplinks. */
    InetSocketAddress address() {
        try {
            return (InetSocketAddress) server.getLocalAddress();
        } catch (IOException e) {
            throw new IllegalStateException("the uplink listener is closed", e);
        }
    }

    /** Counters of all uplinks together, and of the queues they carry. */
    LinkCounters counters() {
        return counters;
    }

    /** Accepts uplinks on a thread of its own until closed. */
    UplinkServer start() {
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

    /**
     * Takes no more messages from the uplinks, for good: they stay unacknowledged with their endpoints, which
     * send them again to the next run of this PC servlet; what was parked is dropped likewise. ACKs are still
     * read, so delivery to the endpoints goes on (a PC servlet about to close drains its queues meanwhile).
     */
    void hold() {
        parking.hold();
    }

    /**
     * On the link's event loop: hands {@code m} to the upstream, unless security refuses it; a refused message
     * is answered with ERROR FORBIDDEN, not routed, and taken.
     */
    private Routed route(Link link, Peer p, Message m) {
        if (!security.authenticates()) {
            return upstream.route(m, null);
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
            return upstream.route(m, link.identity());
        }
        LOG.info("{}: refused {} {} from {} to {}: {}", name, m.command(), Long.toUnsignedString(m.sequence()),
                link.peerName(), m.to(), refused);
        if (m.command() == Command.REPLY || m.command() == Command.ERROR) {
            return Routed.TAKEN; // an answer is never answered
        }
        return new Routed.Refused(Packed.make(m.sequence(), Command.ERROR, name, link.peerName(),
                new ErrorText(ErrorCode.FORBIDDEN, refused).toBytes()));
    }

    /** Stops accepting and says BYE on every uplink; the queues are {@link LocalQueues#close closed} apart. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        try {
            server.close();
        } catch (IOException ignored) {
            // closing anyway
        }
        for (Link l : links) {
            l.bye();
        }
        ioThreads.close(); // once the goodbyes are over
    }

    /** The server's side of one uplink: the endpoint whose queue it carries, once it opens. */
    private final class Uplink implements LinkListener {
        /** Set on the uplink's event loop as it opens, and read there. */
        private Peer peer;
        private Link link;
        /** What its endpoint was not told it got yet (with a spool: until on disk). */
        private PendingAcks pending;
        private final Parking.Taker taker = this::take;

        @Override
        public String helloCredential() {
            throw new IllegalStateException("an uplink server only accepts links"); // so never says HELLO
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
            this.link = link;
            this.pending = new PendingAcks(link, spooling);
            peer = local.attach(link.peerName(), link);
            peer.kick();
        }

        @Override
        public void linkWorked(Link link) {
            peer.healthy();
        }

        @Override
        public boolean receive(Message m, Link link) {
            if (parking.isHeld()) {
                return false; // the endpoint keeps it, and sends it again to the next run of its PC servlet
            }
            if (parking.isParked(link)) {
                parking.park(link, taker, m);
                return false;
            }
            Routed r = answered(route(link, peer, m));
            if (r == Routed.NO_ROOM) {
                parking.park(link, taker, m);
                return false;
            }
            if (r == Routed.TAKEN && pending.isEmpty()) {
                return true; // counted now: without a spool, always
            }
            pending.taken(Routed.spooledAs(r), m.encodedLength());
            return false;
        }

        /** A refusal's ERROR goes to the sender now, ahead of the ACK that passes the message: then it is taken. */
        private Routed answered(Routed r) {
            if (r instanceof Routed.Refused refused) {
                link.answerNow(refused.error());
                return Routed.TAKEN;
            }
            return r;
        }

        /** Parking's taker: a parked message offered again; counted now, or once on disk. */
        private boolean take(Message m) {
            Routed r = answered(route(link, peer, m));
            if (r == Routed.NO_ROOM) {
                return false;
            }
            pending.taken(Routed.spooledAs(r), m.encodedLength());
            return true;
        }

        @Override
        public void saidBye(Link link) {
            // the endpoint closed for good: what is queued for it waits for its lease to end, then fails
        }

        @Override
        public void linkClosed(Link link, LinkException why) {
            links.remove(link);
            parking.linkClosed(link);
            Peer p = peer;
            if (p != null) {
                Link next = p.detach(link);
                if (next != null) {
                    next.flush();
                }
            }
            room.freed(); // a queue without its uplink no longer holds up a drain
        }
    }
}
