package io.gma.client;

import io.gma.pcservlet.PcServer;
import io.gma.registry.Registry;
import io.gma.security.Keys;
import io.gma.security.Security;
import io.gma.security.Tls;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

/**
 * The producer in domain east and the consumer in domain west, each behind its PC servlet, the two joined by
 * the HTTP tunnel; all on loopback and ephemeral ports, with a real registry. Outbound-only domains register
 * no URL: they reach the others, and are reached, through the PC servlet of a third domain, hub, that relays
 * for them.
 */
final class TunnelFixture implements Fixture {
    final Registry registry;
    final PcServer east;
    final PcServer west;
    final PcServer hub;

    /** Which domains sit behind firewalls that allow no inbound connection. */
    enum Firewalls { NONE, EAST, BOTH }

    /** Where the keys are when every hop is secure (see {@link #secure}), else null. */
    private final Path keys;

    TunnelFixture(Firewalls firewalls) throws Exception {
        this(firewalls, null);
    }

    /**
     * @param keys a directory made by {@link #makeKeys}, for TLS and signed tokens on every hop; null: insecure
     */
    TunnelFixture(Firewalls firewalls, Path keys) throws Exception {
        this.keys = keys;
        registry = Registry.builder().port(0).security(security("registry")).build().start();
        hub = firewalls != Firewalls.NONE ? pc("hub").start() : null;
        PcServer.Builder e = pc("east");
        east = (firewalls != Firewalls.NONE ? e.via("hub") : e).start();
        PcServer.Builder w = pc("west");
        west = (firewalls == Firewalls.BOTH ? w.via("hub") : w).start();
    }

    /**
     * Makes the keys of a secure fixture in {@code dir}: certificates for the producer and consumer, a signing key
     * each for them and for every PC servlet (named after its domain), one trust file, and {@link #RULES}.
     */
    static Path makeKeys(Path dir) throws IOException {
        Keys.make(dir, List.of("localhost", "127.0.0.1"), List.of("producer", "consumer"));
        Keys.addIdentities(dir, List.of("east", "west", "hub"));
        Files.writeString(dir.resolve("rules"), RULES);
        return dir;
    }

    /** What the identities of a secure fixture may do: the endpoints, and each PC servlet as its domain. */
    static final String RULES = """
            register  producer,consumer   *
            domain    east                east
            domain    west                west
            domain    hub                 hub
            send      *                   *
            post      east                east
            post      west                west
            post      hub                 hub
            query     *                   endpoints,domains
            """;

    private Security security(String identity) throws IOException {
        return keys == null ? Security.insecure()
                : Security.fromDirectory(keys, identity, Tls.ClientAuth.WANT).build();
    }

    /**
     * A PC servlet of this fixture: the registry here never restarts, so its "not registered" is final at once
     * (the contract's vanished subscriber is dropped on the NO_ROUTE that follows).
     */
    private PcServer.Builder pc(String domain) throws IOException {
        return PcServer.builder(domain, registry.url()).security(security(domain)).registryGrace(Duration.ZERO);
    }

    @Override
    public EndpointBuilder<Producer> producer(String label) {
        return secured(Producer.builder(), "producer").registry(registry.url()).domain("east")
                .pcServlet(east.uplink()).label(label).requestTimeout(Duration.ofSeconds(10));
    }

    @Override
    public EndpointBuilder<Consumer> consumer(String label) {
        return secured(Consumer.builder(), "consumer").registry(registry.url()).domain("west")
                .pcServlet(west.uplink()).label(label).requestTimeout(Duration.ofSeconds(10));
    }

    private <T> EndpointBuilder<T> secured(EndpointBuilder<T> b, String identity) {
        try {
            return b.security(security(identity));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    public boolean acknowledgedByDestination() {
        return false;
    }

    @Override
    public void close() throws Exception {
        west.close();
        east.close();
        if (hub != null) {
            hub.close();
        }
        registry.close();
    }
}
