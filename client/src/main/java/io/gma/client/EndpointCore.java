package io.gma.client;

import io.gma.internal.link.HandshakeAdmission;
import io.gma.internal.link.LinkConfig;
import io.gma.internal.link.LinkLimit;
import io.gma.internal.link.LinkListener;
import io.gma.internal.link.Peer;
import io.gma.internal.spool.SpoolStats;
import io.gma.registry.api.QueryResult;
import io.gma.registry.api.RegistryClient;
import io.gma.registry.api.RegistryException;
import io.gma.wire.Command;
import io.gma.wire.ErrorCode;
import io.gma.wire.Threads;
import io.gma.wire.WireCodec;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.function.Predicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The one endpoint implementation under {@link Producer} and {@link Consumer}, as in jGMA; their {@link Endpoint}
 * is its public face. It starts an endpoint (listening socket, registration), wires its parts, hands each call to
 * the part that does it, and closes them in order:
 *
 * <ul>
 *   <li>{@link LeaseKeeper}: registration, its renewal, registering again after a lost lease;
 *   <li>{@link Peers}: the peers sent to, each with its send queue, and the uplink;
 *   <li>{@link Connector}: their links, made, accepted, retried, and what a link that opens or closes means;
 *   <li>{@link Outbox}: sending, into a peer's queue and onto its link, through the {@link OutboxSpool} on disk
 *       when the endpoint has one;
 *   <li>{@link Requests}: the replies awaited, and who may answer;
 *   <li>{@link Receipts}: with receipts on, the messages sent that ask for one, and the receipts awaited;
 *   <li>{@link Subscribers}: a producer's subscribers, and publishing to them;
 *   <li>{@link Inbox}: receiving, checking, deduplicating and delivering, each link through its
 *       {@link PeerLink}.
 * </ul>
 *
 * <p>They depend on each other one way, in that order (a part uses only parts listed above it), but for the two
 * the connector is given: the listener of each link, {@link #listenerFor}, and what to do about a peer the
 * registry does not know, {@link #unreachable}.
 */
final class EndpointCore implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(Endpoint.class);
    /**
     * Data of this many bytes or more is read into an array of its own ({@link WireCodec#withDataApartFrom}),
     * which {@link Incoming#data()} hands over: what a link reads straight into a message's array
     * (LinkReader), and below it a copy costs less than the second array.
     */
    static final int DATA_APART_BYTES = 64 * 1024;
    private final EndpointBuilder<?> config;
    private final String name;
    private final RegistryClient registry;
    private final ServerSocketChannel server;
    private final Counters counters = new Counters();
    /** Lease renewal, request timeouts, reconnect back-off. */
    private final ScheduledThreadPoolExecutor timer;
    /** Connection attempts, and the lease's calls to the registry. */
    private final ExecutorService connecting;
    private final LeaseKeeper lease;
    private final Peers peers;
    private final Connector connector;
    private final Outbox outbox;
    private final Requests requests;
    private final Receipts receipts;
    private final Subscribers subscribers;
    private final TablePublisher tables;
    private final TableMediator mediator;
    private final HistoryQueries history;
    private final Inbox inbox;
    /** The outbox on disk, or null: none. */
    private final OutboxSpool spool;
    /** {@code GET /metrics}, or null: none. */
    private final MetricsServer metrics;

    private EndpointCore(EndpointBuilder<?> config, String name, RegistryClient registry, WireCodec codec,
            ServerSocketChannel server, LeaseKeeper lease, OutboxSpool spool, MetricsServer metrics) {
        this.config = config;
        this.name = name;
        this.registry = registry;
        this.server = server;
        this.lease = lease;
        this.spool = spool;
        this.metrics = metrics;
        String prefix = "gma-" + config.label;
        this.timer = new ScheduledThreadPoolExecutor(1, Threads.named(prefix + "-timer"));
        timer.setRemoveOnCancelPolicy(true);
        this.connecting = Executors.newCachedThreadPool(Threads.numbered(prefix + "-connect-"));
        this.peers = new Peers(name, config, counters.link);
        LinkConfig links = new LinkConfig(name, name, config.security, codec, config.pingInterval, counters.link,
                new LinkLimit(config.maxLinks));
        this.connector = new Connector(config, links, registry, lease.grace(), peers, counters, timer, connecting,
                this::listenerFor, this::unreachable);
        SequenceNumbers numbers = spool != null ? spool.sequence()
                : config.exact ? SequenceNumbers.fromClock() : SequenceNumbers.fromOne();
        if (spool != null) {
            spool.tellOn(connecting);
        }
        this.outbox = new Outbox(config, peers, connector, numbers, spool, counters);
        this.requests = new Requests(name, outbox, peers.uplink(), counters, timer);
        this.receipts = new Receipts(name, config, outbox, peers.uplink(), counters, timer);
        this.subscribers = new Subscribers(receipts);
        this.tables = new TablePublisher(name, registry, receipts, outbox, config.maxMessageBytes,
                config.outbox != null, timer, connecting);
        Publishers publishers = new Publishers(name, registry);
        this.history = new HistoryQueries(name, publishers, requests, config.requestTimeout);
        this.mediator = new TableMediator(name, publishers, history, requests, outbox, config.requestTimeout, timer,
                connecting, config.executor);
        this.inbox = new Inbox(name, config, peers.uplink(), outbox, requests, receipts, subscribers, tables, mediator,
                counters);
        lease.afterRegisteringAgain(() -> {
            try {
                tables.republish();
            } catch (EndpointException ex) {
                LOG.warn("{}: registered again, but publishing its tables again failed: {}", name, ex.getMessage());
            }
        });
    }

    static EndpointCore start(EndpointBuilder<?> config) throws EndpointException {
        HandshakeAdmission admission = HandshakeAdmission.process(); // first: a bad system property refuses to start
        // large data is read into an array of its own, the one a handler or a request's caller gets
        WireCodec codec = WireCodec.withMaxMessageBytes(config.maxMessageBytes).withDataApartFrom(DATA_APART_BYTES);
        RegistryClient registry = RegistryClient.builder(config.registry).security(config.security).build();
        // before the registry hears of this endpoint: a directory another process has refuses the start
        OutboxSpool spool = config.outbox == null ? null : OutboxSpool.open(config.outbox, config.maxOutboxBytes,
                config.outboxForceOnSend, config.label + "@" + config.domain);
        try {
            return start(config, admission, codec, registry, spool);
        } catch (EndpointException | RuntimeException ex) {
            if (spool != null) {
                spool.close();
            }
            throw ex;
        }
    }

    private static EndpointCore start(EndpointBuilder<?> config, HandshakeAdmission admission, WireCodec codec,
            RegistryClient registry, OutboxSpool spool) throws EndpointException {
        ServerSocketChannel server;
        try {
            server = ServerSocketChannel.open();
            server.bind(new InetSocketAddress(config.host, 0));
        } catch (IOException ex) {
            throw new EndpointException(ErrorCode.INTERNAL, "cannot listen on " + config.host + ": " + ex.getMessage(),
                    ex);
        }
        MetricsServer metrics = null;
        Map<String, String> attributes = new LinkedHashMap<>(config.attributes);
        if (config.metrics != null) {
            try {
                metrics = MetricsServer.bind(config.metrics, config.host, config.security, config.label);
            } catch (EndpointException ex) {
                close(server);
                throw ex;
            }
            attributes.put(EndpointBuilder.METRICS_ATTRIBUTE, metrics.url()); // where a query finds the page
        }
        LeaseKeeper lease = new LeaseKeeper(config, registry, server, attributes);
        String name;
        try {
            name = lease.register();
        } catch (EndpointException | RuntimeException ex) {
            close(server);
            if (metrics != null) {
                metrics.close();
            }
            throw ex;
        }
        String warning = config.security.warning("endpoint " + name);
        if (warning != null) {
            LOG.warn(warning);
        }
        EndpointCore e = new EndpointCore(config, name, registry, codec, server, lease, spool, metrics);
        e.connector.start(server, admission);
        if (metrics != null) {
            metrics.serve(name, e::stats);
        }
        if (spool != null) {
            // what the outbox held goes out first: nothing new can be sent before this returns
            e.outbox.requeue(spool.takeRecovered());
        }
        // the renewal's HTTP call runs on the connecting pool, so a slow registry delays no request timeout
        lease.keep(e.timer, e.connecting);
        return e;
    }

    /** The listener of a new link to {@code peer}; null: an accepted link, whose peer is known when it opens. */
    private LinkListener listenerFor(Peer peer) {
        return new PeerLink(peer, connector, inbox.reader());
    }

    /** The registry says the peer is gone: what was queued for it fails, and it stops being a subscriber. */
    private void unreachable(Peer peer, EndpointException why) {
        peers.forget(peer);
        subscribers.remove(peer.name());
        tables.dropConsumer(peer.name());
        peer.queue().close(Failures.toLink(why));
        requests.failTo(peer.name(), why);
        receipts.failTo(peer.name(), why);
    }

    String name() {
        return name;
    }

    /** Where {@code GET /metrics} is served, or null: nowhere. */
    String metricsUrl() {
        return metrics == null ? null : metrics.url();
    }

    // ---------------------------------------------------------------- sending

    /** Queues a message for {@code to}: data lane, under the full-queue policy; a receipt asked if they are. */
    Sent send(String to, Command command, byte[] data) throws EndpointException {
        return receipts.on() ? receipts.send(to, command, data) : outbox.send(to, command, data);
    }

    /** Queues a control message (REPLY, ERROR, UNSUBSCRIBE): never bounded, never behind data. */
    void sendControl(String to, Command command, long seq, byte[] data) throws EndpointException {
        outbox.sendControl(to, command, seq, data);
    }

    /** A new sequence number, for a message this endpoint originates. */
    long nextSequence() {
        return outbox.nextSequence();
    }

    CompletableFuture<byte[]> requestAsync(String to, byte[] data, Duration timeout) {
        return requests.requestAsync(to, data, timeout);
    }

    /** Sends {@code command} and awaits its REPLY or ERROR, as a REQUEST (the table commands). */
    CompletableFuture<byte[]> requestAsync(String to, Command command, byte[] data, Duration timeout) {
        return requests.requestAsync(to, command, data, timeout);
    }

    byte[] request(String to, byte[] data, Duration timeout) throws EndpointException {
        return requests.request(to, data, timeout);
    }

    Duration requestTimeout() {
        return config.requestTimeout;
    }

    // ---------------------------------------------------------------- subscribers

    /** Sends DATA to every subscriber whose filter the predicate accepts; one slow subscriber fails alone. */
    List<Sent> publish(byte[] data, Predicate<String> filter) {
        return subscribers.publish(data, filter);
    }

    void addSubscriber(String consumer, String filter) {
        subscribers.add(consumer, filter);
    }

    void removeSubscriber(String consumer) {
        subscribers.remove(consumer);
    }

    Map<String, String> subscribers() {
        return subscribers.snapshot();
    }

    // ---------------------------------------------------------------- monitoring tables

    TablePublisher tables() {
        return tables;
    }

    TableMediator mediator() {
        return mediator;
    }

    HistoryQueries history() {
        return history;
    }

    // ---------------------------------------------------------------- the rest

    QueryResult query(String sql) throws EndpointException {
        try {
            return registry.query(sql);
        } catch (RegistryException ex) {
            throw Failures.fromRegistry("query", ex);
        }
    }

    EndpointStats stats() {
        long queuedMessages = 0;
        long queuedBytes = 0;
        for (Peer p : peers.all()) {
            queuedMessages += p.queue().messages();
            queuedBytes += p.queue().bytes();
        }
        long[] kept = new long[4];
        if (spool != null) {
            SpoolStats s = spool.stats();
            kept = new long[] {s.liveRecords(), s.diskBytes(), spool.recovered(s), spool.damaged(s)};
        }
        return counters.snapshot(queuedMessages, queuedBytes, receipts.awaitedNow(), kept);
    }

    /**
     * Cuts every link at once, without BYE, as a network failure would: for tests of resending. Queued and
     * unacknowledged messages stay and go out again on the next link.
     */
    void severLinks() {
        connector.severLinks();
    }

    /** Whether this endpoint remembers the numbers of {@code sender}'s messages, as until it hears its BYE. */
    boolean remembers(String sender) {
        return inbox.remembers(sender);
    }

    /** Requests (and table commands) whose answers are awaited now. */
    int requestsAwaited() {
        return requests.awaited();
    }

    /** Tasks waiting in the timer: lease renewal, back-offs, and requests not answered yet. */
    int timerTasks() {
        return timer.getQueue().size();
    }

    /** Unregisters, says BYE on every link, fails what is still queued with SHUTTING_DOWN. */
    @Override
    public void close() {
        if (peers.closed()) {
            return;
        }
        tables.flushAll(); // the rows that wait for others go before the queues drain
        peers.close();
        if (metrics != null) {
            metrics.close();
        }
        lease.close();
        if (spool != null) {
            spool.closing(); // what fails from here on stays in the outbox
        }
        EndpointException shutdown = new EndpointException(ErrorCode.SHUTTING_DOWN, name + " closed" + (spool == null
                ? "" : "; what its outbox " + spool.dir() + " holds goes out when it starts again with it"));
        connector.sayBye(spool != null);
        for (Peer p : peers.all()) {
            p.queue().close(Failures.toLink(shutdown));
        }
        mediator.close();
        requests.failAll(shutdown);
        receipts.failAll(shutdown);
        close(server);
        timer.shutdownNow();
        connecting.shutdownNow();
        if (spool != null) {
            spool.close(); // after the queues: the acknowledgements that came are written first
        }
    }

    private static void close(ServerSocketChannel server) {
        try {
            server.close();
        } catch (IOException ignored) {
            // closing anyway
        }
    }
}
