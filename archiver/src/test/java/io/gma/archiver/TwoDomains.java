package io.gma.archiver;

import io.gma.client.Consumer;
import io.gma.client.EndpointBuilder;
import io.gma.client.Producer;
import io.gma.pcservlet.PcServer;
import io.gma.registry.Registry;
import java.time.Duration;

/**
 * A registry and the PC servlets of two domains, east and west, joined by the HTTP tunnel; all on loopback and
 * ephemeral ports. Endpoints of either domain, and archivers, made for it.
 */
final class TwoDomains {
    final Registry registry;
    final PcServer east;
    final PcServer west;
    private boolean eastClosed;

    TwoDomains() throws Exception {
        registry = Registry.builder().port(0).build().start();
        east = PcServer.builder("east", registry.url()).registryGrace(Duration.ZERO).start();
        west = PcServer.builder("west", registry.url()).registryGrace(Duration.ZERO).start();
    }

    private PcServer pc(String domain) {
        return domain.equals("east") ? east : west;
    }

    EndpointBuilder<Producer> producer(String domain, String label) {
        return Producer.builder().registry(registry.url()).domain(domain).pcServlet(pc(domain).uplink()).label(label)
                .requestTimeout(Duration.ofSeconds(10));
    }

    EndpointBuilder<Consumer> consumer(String domain, String label) {
        return Consumer.builder().registry(registry.url()).domain(domain).pcServlet(pc(domain).uplink()).label(label)
                .requestTimeout(Duration.ofSeconds(10));
    }

    Archiver.Builder archiver(String domain) {
        return Archiver.builder().registry(registry.url()).domain(domain).pcServlet(pc(domain).uplink());
    }

    /** Cuts east off: its PC servlet stops, so that nothing of west reaches east's endpoints. */
    void cutEast() throws Exception {
        eastClosed = true;
        east.close();
    }

    void close() throws Exception {
        west.close();
        if (!eastClosed) {
            east.close();
        }
        registry.close();
    }
}
