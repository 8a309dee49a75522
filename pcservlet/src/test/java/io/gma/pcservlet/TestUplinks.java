package io.gma.pcservlet;

import io.gma.internal.link.LinkCounters;
import io.gma.internal.link.SendQueue;
import io.gma.registry.api.RegistryClient;
import io.gma.security.Security;

/**
 * An uplink server alone, with its queues, for tests: what a PC servlet's node builds around it, minus the
 * router (the test gives the upstream) and the HTTP side.
 */
final class TestUplinks implements AutoCloseable {
    final RoomSignal room = new RoomSignal();
    final LocalQueues local;
    final UplinkServer server;
    private final UplinkServer.Upstream upstream;

    private TestUplinks(UplinkServer.Config config, long maxQueuedBytes, UplinkServer.Upstream upstream)
            throws Exception {
        LinkCounters counters = new LinkCounters();
        this.upstream = upstream;
        this.local = new LocalQueues(config.domain(), maxQueuedBytes, SendQueue.MAX_MESSAGES, counters, room,
                Spooling.inMemory());
        this.server = new UplinkServer(config, local, upstream, room, counters, Spooling.inMemory()).start();
    }

    /** Without security. */
    static TestUplinks start(String domain, UplinkServer.Upstream upstream) throws Exception {
        return new TestUplinks(UplinkServer.Config.of(domain, Security.insecure(), null), 8L << 20, upstream);
    }

    /** Without security, each endpoint's queue bounded to {@code maxQueuedBytes}. */
    static TestUplinks start(String domain, UplinkServer.Upstream upstream, long maxQueuedBytes) throws Exception {
        return new TestUplinks(UplinkServer.Config.of(domain, Security.insecure(), null), maxQueuedBytes, upstream);
    }

    /** With {@code security}, checking names with the registry at {@code registryUrl}. */
    static TestUplinks start(String domain, UplinkServer.Upstream upstream, Security security, String registryUrl)
            throws Exception {
        return start(domain, upstream, security, RegistryClient.builder(registryUrl).security(security).build());
    }

    /** With {@code security}, checking names with {@code registry}, whatever its own security. */
    static TestUplinks start(String domain, UplinkServer.Upstream upstream, Security security,
            RegistryClient registry) throws Exception {
        return new TestUplinks(UplinkServer.Config.of(domain, security, registry), 8L << 20, upstream);
    }

    /** With what all uplinks may park bounded to {@code maxParkedBytes}. */
    static TestUplinks parkingAtMost(String domain, UplinkServer.Upstream upstream, long maxParkedBytes)
            throws Exception {
        UplinkServer.Config c = UplinkServer.Config.of(domain, Security.insecure(), null);
        return new TestUplinks(new UplinkServer.Config(c.domain(), c.host(), c.port(), c.security(), c.registry(),
                maxParkedBytes, c.maxMessageBytes(), c.pingInterval(), c.maxLinks(), c.ioThreads()), 8L << 20,
                upstream);
    }

    /** Without security, with at most {@code maxLinks} uplinks open at once. */
    static TestUplinks withMaxLinks(String domain, UplinkServer.Upstream upstream, int maxLinks) throws Exception {
        UplinkServer.Config c = UplinkServer.Config.of(domain, Security.insecure(), null);
        return new TestUplinks(new UplinkServer.Config(c.domain(), c.host(), c.port(), c.security(), c.registry(),
                c.maxParkedBytes(), c.maxMessageBytes(), c.pingInterval(), maxLinks, c.ioThreads()), 8L << 20,
                upstream);
    }

    /** The uplink address as {@code EndpointBuilder.pcServlet} takes it. */
    String uplink() {
        return "127.0.0.1:" + server.address().getPort();
    }

    int port() {
        return server.address().getPort();
    }

    /** Delivers to the endpoints' queues as the node does, what cannot go to the upstream. */
    Placement deliverAll(java.util.List<io.gma.wire.Message> messages) {
        return local.deliverAll(messages.stream().map(Queued::inMemory).toList(), upstream, false);
    }

    @Override
    public void close() {
        server.close();
        local.close(upstream);
    }
}
