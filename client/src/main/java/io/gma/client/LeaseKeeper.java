package io.gma.client;

import io.gma.registry.api.Registration;
import io.gma.registry.api.RegistryClient;
import io.gma.registry.api.RegistryException;
import io.gma.wire.ErrorCode;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.util.concurrent.Executor;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * An endpoint's registration: registers its label and the port it listens on, renews the lease every third of
 * it, registers the same name again when the lease was lost (so that peers' routes stay valid), and unregisters
 * when the endpoint closes.
 */
final class LeaseKeeper {
    private static final Logger LOG = LoggerFactory.getLogger(Endpoint.class);
    private final EndpointBuilder<?> config;
    private final RegistryClient registry;
    /** The endpoint's listening socket: its port is what peers are told. */
    private final ServerSocketChannel server;
    private volatile String name;
    /** Closing: a lost lease is not registered again. */
    private volatile boolean closed;

    LeaseKeeper(EndpointBuilder<?> config, RegistryClient registry, ServerSocketChannel server) {
        this.config = config;
        this.registry = registry;
        this.server = server;
    }

    /** Registers the endpoint; its name, {@code <label>-<nonce>@<domain>} or, exact, {@code <label>@<domain>}. */
    String register() throws EndpointException {
        name = register(null);
        return name;
    }

    /**
     * Renews the lease every third of it from now on: the timer says when, and the call runs on {@code calls},
     * so that a slow registry delays nothing else the timer does (request timeouts, reconnects).
     */
    void keep(ScheduledExecutorService timer, Executor calls) {
        long renew = Math.max(1, config.lease.toMillis() / 3);
        timer.scheduleWithFixedDelay(() -> calls.execute(this::renew), renew, renew, TimeUnit.MILLISECONDS);
    }

    /** Stops registering again, and unregisters; a failure is logged (the lease runs out). */
    void close() {
        closed = true;
        try {
            registry.unregister(name);
        } catch (RegistryException ex) {
            LOG.debug("{}: unregister failed: {}", name, ex.getMessage());
        }
    }

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
            throw Failures.fromRegistry("register " + (again != null ? again : config.label + "@" + config.domain),
                    ex);
        }
    }

    private SocketAddress localAddress() throws EndpointException {
        try {
            return server.getLocalAddress();
        } catch (IOException ex) {
            throw new EndpointException(ErrorCode.INTERNAL, "no local address: " + ex.getMessage(), ex);
        }
    }

    /** Renews the lease; a lost one registers the same name again, so peers' routes stay valid. */
    private void renew() {
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
}
