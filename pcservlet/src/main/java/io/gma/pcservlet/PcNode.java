package io.gma.pcservlet;

import io.gma.internal.link.LinkCounters;
import io.gma.internal.link.SendQueue;
import io.gma.registry.api.RegistryClient;
import io.gma.registry.api.RegistryException;
import io.gma.registry.api.RegistryGrace;
import io.gma.security.AuthException;
import io.gma.security.Rules;
import io.gma.security.Security;
import io.gma.wire.ErrorCode;
import io.gma.wire.Message;
import io.gma.wire.Name;
import io.gma.wire.Packed;
import io.gma.wire.Threads;
import io.gma.wire.WireCodec;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import okhttp3.OkHttpClient;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One PC servlet's parts, made and wired here, and its life: start, the domain's lease, the janitor, and the
 * drain at the end. Under both the embedded {@link PcServer} and a {@link TunnelServlet} deployed in a
 * container. A message's way through the parts:
 *
 * <pre>
 *   uplink --&gt; UplinkServer --&gt; Router --&gt; Outbound: D's DomainQueue --&gt; Forwarder --POST--&gt; domain D
 *                                      \-&gt; LocalQueues (an endpoint of this domain)
 *   POST or poll --&gt; Inbound --&gt; LocalQueues --&gt; UplinkServer --&gt; uplink
 *                             \-&gt; Relay: a relayed domain's queue --&gt; its long polls
 *                             \-&gt; Outbound (from a relayed domain, to another)
 * </pre>
 *
 * Every queue is bounded. What an uplink sends into a full queue is parked; a POST that does not fit whole is
 * answered 429; so a slow consumer slows its producers, hop by hop, and memory stays bounded. Whoever waits for
 * room is woken by the {@link RoomSignal} when some is freed.
 */
final class PcNode implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(PcNode.class);
    private static final long JANITOR_SECONDS = 5;

    private final Settings settings;
    private final String domain;
    private final RegistryClient registry;
    private final Routes routes;
    private final Metrics metrics = new Metrics();
    private final RoomSignal room = new RoomSignal();
    private final TunnelClient tunnel;
    private final BatchCodec codec;
    private final LocalQueues local;
    private final Relay relay;
    private final Outbound outbound;
    private final Router router;
    private final Inbound inbound;
    private final UplinkServer uplinks;
    private final ScheduledExecutorService timer;
    private final Spooling spooling;
    private final RegistryGrace grace;
    /** What the spool held at start, queued again once the node runs. */
    private final List<Spooling.Recovered> recovered = new ArrayList<>();
    private Thread poller;
    private volatile String url;
    private volatile boolean stopping;
    /** Held by the one shutdown that runs; {@link #undelivered} is what it returned, or -1 before it ended. */
    private final Object stopLock = new Object();
    private int undelivered = -1;
    /** start() went through: the node served, and a stop has something to report. */
    private volatile boolean started;

    PcNode(Settings settings) throws IOException {
        this.settings = settings;
        this.domain = settings.domain();
        Security security = settings.security();
        String warning = security.warning("PC servlet of " + domain);
        if (warning != null) {
            LOG.warn(warning);
        }
        RegistryClient.Builder rb = RegistryClient.builder(settings.registry()).security(security);
        if (settings.proxy() != null) {
            rb.okHttpClient(settings.proxy().applyTo(new OkHttpClient.Builder()).build());
        }
        this.registry = rb.build();
        this.grace = new RegistryGrace(registry, settings.registryGrace());
        this.routes = new Routes(domain, settings.via(), registry, grace);
        this.tunnel = new TunnelClient(domain, security, settings.proxy());
        this.codec = new BatchCodec(domain, settings.maxBatchBytes());
        SpoolOptions spool = settings.spool();
        this.spooling = spool == null ? Spooling.inMemory() : Spooling.open(spool.dir(), spool.fsync().spool(),
                spool.maxBytes(), recovered::add, room::freed);
        try {
            LinkCounters uplinkCounters = new LinkCounters();
            this.local = new LocalQueues(domain, settings.maxEndpointBytes(), SendQueue.MAX_MESSAGES,
                    uplinkCounters, room, spooling);
            AtomicLong totalBytes = new AtomicLong();
            this.relay = new Relay(settings, totalBytes, room::freed, spooling);
            this.outbound = new Outbound(settings, totalBytes, this::forwarder);
            this.router = new Router(domain, local, outbound, metrics, spooling);
            this.inbound = new Inbound(settings, routes, local, outbound, relay, router, codec, room, metrics,
                    spooling);
            this.uplinks = new UplinkServer(new UplinkServer.Config(domain, settings.host(), settings.uplinkPort(),
                    security, registry, settings.maxTotalBytes(), WireCodec.DEFAULT_MAX_MESSAGE_BYTES,
                    Duration.ofSeconds(15), settings.maxLinks(), settings.ioThreads()), local, router, room,
                    uplinkCounters, spooling);
        } catch (IOException | RuntimeException e) {
            spooling.close(); // another run may take the directory
            throw e;
        }
        this.timer = Executors.newSingleThreadScheduledExecutor(Threads.named("gma-pc-" + domain + "-timer"));
    }

    /** The forwarder of a new queue: made once the node runs, when every field it is given is set. */
    private Forwarder forwarder(DomainQueue q) {
        return new Forwarder(q, outbound, settings, routes, relay, tunnel, codec, router, room, metrics, spooling);
    }

    /**
     * Starts serving as {@code publicUrl} (null for an outbound-only domain): registers the domain and keeps its
     * lease, accepts uplinks, and polls the via domain if there is one.
     *
     * @throws RegistryException if the registry refuses the domain (taken by another identity: 409)
     */
    void start(String publicUrl) throws RegistryException {
        this.url = publicUrl;
        registerDomain();
        requeue();
        inbound.ready(); // POSTs that came meanwhile were answered 503: nothing new went ahead of the spool's
        uplinks.start();
        long renew = Math.max(1, settings.lease().toMillis() / 3);
        timer.scheduleWithFixedDelay(this::renewDomain, renew, renew, TimeUnit.MILLISECONDS);
        timer.scheduleWithFixedDelay(this::dropVanished, JANITOR_SECONDS, JANITOR_SECONDS, TimeUnit.SECONDS);
        if (settings.via() != null) {
            poller = Threads.start("gma-pc-" + domain + "-poll-" + settings.via(), new Poller(settings, routes,
                    tunnel, codec, inbound, room, metrics, () -> stopping));
        }
        started = true;
        LOG.info("PC servlet of {} at {}, uplinks at {}", domain,
                publicUrl != null ? publicUrl : "no URL (outbound-only, via " + settings.via() + ")",
                uplinks.address());
    }

    /**
     * Queues again what the spool held at start, each message where it was going. One older than maxAge goes
     * back to its sender as ERROR TIMEOUT; one from an uplink is checked against today's {@code send} rules.
     */
    private void requeue() {
        if (recovered.isEmpty()) {
            return;
        }
        Duration maxAge = settings.spool().maxAge();
        long now = System.currentTimeMillis();
        int expired = 0;
        for (Spooling.Recovered r : recovered) {
            Message m = r.message();
            long age = now - r.arrivalMillis();
            if (!maxAge.isZero() && age > maxAge.toMillis()) {
                expired++;
                metrics.expired.increment();
                spooling.ackOnceSafe(r.seq(), router.answer(m, ErrorCode.TIMEOUT, m.command() + " "
                        + Long.toUnsignedString(m.sequence()) + " waited " + age / 1000 + " s in the spool of " + domain
                        + ", longer than maxAge " + maxAge.toSeconds() + " s"));
                continue;
            }
            String refused = r.fromUplink() ? refusedNow(r) : null;
            if (refused != null) {
                spooling.ackOnceSafe(r.seq(), router.answer(m, ErrorCode.FORBIDDEN, refused));
                continue;
            }
            Queued q = new Queued(m, r.seq());
            switch (r.lane()) {
                case LOCAL -> local.deliverAll(List.of(q), router, true);
                case OUTBOUND -> router.forceAll(Name.domainOf(m.to()), List.of(q));
                case RELAY -> relay.addAll(Name.domainOf(m.to()), List.of(q));
                default -> throw new AssertionError(r.lane());
            }
        }
        LOG.info("{}: {} messages read back from the spool in {}, {} of them older than maxAge", domain,
                recovered.size(), spooling.dir(), expired);
        recovered.clear();
    }

    /** Why the rules of today refuse a spooled message of an uplink's; null when they let it go. */
    private String refusedNow(Spooling.Recovered r) {
        if (!settings.security().authenticates()) {
            return null;
        }
        try {
            settings.security().authorize(r.identity(), Rules.Verb.SEND, r.message().to());
            return null;
        } catch (AuthException e) {
            return e.getMessage();
        }
    }

    private void registerDomain() throws RegistryException {
        registry.registerDomain(domain, settings.via() == null ? url : null, settings.via(), settings.lease());
    }

    private void renewDomain() {
        try {
            registerDomain();
            grace.renewal(true);
        } catch (RegistryException e) {
            grace.renewal(false);
            LOG.warn("{}: renewing the domain's registration failed, will retry: {}", domain, e.getMessage());
        }
    }

    /** Endpoints with messages waiting and no uplink, that the registry no longer knows: their messages fail. */
    private void dropVanished() {
        for (LocalQueues.QueueInfo q : local.queues()) {
            if (q.connected()) {
                continue;
            }
            try {
                if (!routes.endpointExists(q.endpoint())) {
                    local.drop(q.endpoint(), ErrorCode.NO_ROUTE, q.endpoint() + " is not registered any more",
                            router);
                }
            } catch (Routes.RouteException e) {
                LOG.debug("{}: cannot check {}: {}", domain, q.endpoint(), e.getMessage());
            }
        }
    }

    // ---------------------------------------------------------------- what the HTTP side and the pages read

    Settings settings() {
        return settings;
    }

    String domain() {
        return domain;
    }

    Security security() {
        return settings.security();
    }

    String url() {
        return url;
    }

    RegistryClient registry() {
        return registry;
    }

    Metrics metrics() {
        return metrics;
    }

    Inbound inbound() {
        return inbound;
    }

    Relay relay() {
        return relay;
    }

    Outbound outbound() {
        return outbound;
    }

    LocalQueues local() {
        return local;
    }

    UplinkServer uplinks() {
        return uplinks;
    }

    boolean isStopping() {
        return stopping;
    }

    Spooling spooling() {
        return spooling;
    }

    // ---------------------------------------------------------------- the end

    /**
     * Drains, then stops: POSTs are answered 503 and the uplinks stop being read (what endpoints have not sent
     * stays with them, for the next run); then the queues are given up to drainTimeout to empty, woken each
     * time room is freed. What is left is logged and counted as dropped.
     *
     * <p>A second call, from another thread too, waits for the first to end and returns what it returned.
     *
     * @return how many messages could not be delivered
     */
    int shutdown() {
        synchronized (stopLock) {
            if (undelivered < 0) {
                try {
                    undelivered = drainAndClose();
                } finally {
                    undelivered = Math.max(undelivered, 0); // one that threw is not run again on closed parts
                }
            }
            return undelivered;
        }
    }

    private int drainAndClose() {
        stopping = true;
        inbound.stop();
        uplinks.hold();
        outbound.hurry();
        try {
            room.await(this::drained, Boolean::booleanValue, System.nanoTime() + settings.drainTimeout().toNanos());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        timer.shutdownNow();
        if (poller != null) {
            poller.interrupt();
        }
        inbound.close(); // no POST is between its check and its queueing now
        inbound.closeCompressors(); // a poll answered after this goes plain
        List<Queued> fromQueues = relay.drain();
        fromQueues.addAll(outbound.close());
        if (spooling.on()) {
            int left = fromQueues.size();
            for (LocalQueues.QueueInfo q : local.queues()) {
                left += (int) q.messages();
            }
            uplinks.close();
            local.close(router); // what the queues held stays in the spool
            tunnel.close();
            spooling.close();
            if (left > 0) {
                LOG.info("{}: stopped; {} messages not delivered yet stay in the spool in {} for the next start",
                        domain, left, spooling.dir());
            } else if (started) {
                LOG.info("{}: stopped; every queue was drained", domain);
            }
            return 0;
        }
        int left = farewell(fromQueues);
        uplinks.close();
        local.close(router);
        tunnel.close();
        return left;
    }

    /**
     * In memory: what the drain left goes back to its senders as ERROR SHUTTING_DOWN, each told on its uplink
     * (given up to a second to write it) or in one last POST to its domain; how many messages were not delivered.
     */
    private int farewell(List<Queued> fromQueues) {
        String why = domain + "'s PC servlet stopped, without a spool, before it could deliver this within its"
                + " drain time of " + settings.drainTimeout().toMillis() + " ms";
        List<byte[]> left = local.takeUndelivered(why);
        fromQueues.forEach(q -> left.add(Packed.shared(q.message())));
        if (left.isEmpty()) {
            if (started) { // else it never served: there was nothing to drain, and saying so misleads
                LOG.info("{}: stopped; every queue was drained", domain);
            }
            return 0;
        }
        metrics.drops.add(left.size());
        int untold = new Farewell(domain, routes, tunnel, local).tell(left, why);
        try {
            room.await(local::connectedDrained, Boolean::booleanValue, System.nanoTime()
                    + TimeUnit.SECONDS.toNanos(1));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        LOG.warn("{}: stopped with {} messages undelivered after draining for {} ms; their senders were told"
                + " (ERROR SHUTTING_DOWN){}", domain, left.size(), settings.drainTimeout().toMillis(), untold == 0
                        ? "" : ", except " + untold + " who could not be reached");
        return left.size();
    }

    private boolean drained() {
        return outbound.isEmpty() && relay.isEmpty() && local.connectedDrained();
    }

    @Override
    public void close() {
        shutdown();
    }
}
