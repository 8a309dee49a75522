package io.gma.client;

import io.gma.pcservlet.PcServlet;
import io.gma.registry.Registry;
import java.time.Duration;

/**
 * The producer in domain east and the consumer in domain west, each behind its PC servlet, the two joined by
 * the HTTP tunnel; all on loopback and ephemeral ports, with a real registry. Outbound-only domains register
 * no URL: they reach the others, and are reached, through the PC servlet of a third domain, hub, that relays
 * for them.
 */
final class TunnelFixture implements Fixture {
    final Registry registry;
    final PcServlet east;
    final PcServlet west;
    final PcServlet hub;

    /** Which domains sit behind firewalls that allow no inbound connection. */
    enum Firewalls { NONE, EAST, BOTH }

    TunnelFixture(Firewalls firewalls) throws Exception {
        registry = Registry.builder().port(0).build().start();
        hub = firewalls != Firewalls.NONE ? PcServlet.builder("hub", registry.url()).start() : null;
        PcServlet.Builder e = PcServlet.builder("east", registry.url());
        east = (firewalls != Firewalls.NONE ? e.via("hub") : e).start();
        PcServlet.Builder w = PcServlet.builder("west", registry.url());
        west = (firewalls == Firewalls.BOTH ? w.via("hub") : w).start();
    }

    @Override
    public EndpointBuilder<Producer> producer(String label) {
        return Producer.builder().registry(registry.url()).domain("east").pcServlet(east.uplink()).label(label)
                .requestTimeout(Duration.ofSeconds(10));
    }

    @Override
    public EndpointBuilder<Consumer> consumer(String label) {
        return Consumer.builder().registry(registry.url()).domain("west").pcServlet(west.uplink()).label(label)
                .requestTimeout(Duration.ofSeconds(10));
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
