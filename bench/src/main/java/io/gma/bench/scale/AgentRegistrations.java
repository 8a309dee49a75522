package io.gma.bench.scale;

import io.gma.registry.api.Kind;
import io.gma.registry.api.Registration;
import io.gma.registry.api.RegistryClient;
import io.gma.registry.api.RegistryException;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.function.IntFunction;

/**
 * Registers the swarm's agents with the registry, as each endpoint's {@code build()} would before it opens its
 * uplink: producers under exact labels ({@link UplinkSwarm#label}: {@code agent-00001@east}), with a lease of
 * {@link #LEASE} so that none needs renewing during a run, at the host and port of a listener of its own on
 * 127.0.0.1 (an endpoint registers where it listens for direct links; this one accepts none, and nothing in a
 * run connects to it: the agents' peers are in other domains). A bounded number of calls at
 * once ({@code concurrency} threads, each one call at a time), so that the registry is loaded as K endpoints
 * starting together would load it, not more. Remembers which agents it registered, so that a larger K registers
 * only the new ones, and {@link #close()} unregisters them all.
 */
public final class AgentRegistrations implements AutoCloseable {
    /** The registry's largest lease by default: a run never needs to renew. */
    public static final Duration LEASE = Duration.ofHours(1);

    private final RegistryClient registry;
    private final String domain;
    private final ServerSocketChannel listener;
    private final int port;
    private final int concurrency;
    private final boolean unregisterOnClose;
    private int registered;

    /**
     * Opens the listener the agents register, on an ephemeral port.
     *
     * @param concurrency calls to the registry at once
     * @param unregisterOnClose whether {@link #close()} unregisters the agents (a registry thrown away after, as a
     *     test's, need not be told)
     * @throws IOException if no port can be bound
     */
    public AgentRegistrations(RegistryClient registry, String domain, int concurrency, boolean unregisterOnClose)
            throws IOException {
        this.registry = registry;
        this.domain = domain;
        this.concurrency = concurrency;
        this.unregisterOnClose = unregisterOnClose;
        this.listener = ServerSocketChannel.open();
        try {
            listener.bind(new InetSocketAddress("127.0.0.1", 0));
            this.port = ((InetSocketAddress) listener.getLocalAddress()).getPort();
        } catch (IOException e) {
            listener.close();
            throw e;
        }
    }

    /**
     * Registers agents up to {@code count} (those not registered yet); their names.
     *
     * @throws IOException naming the first registration that failed and the registry's answer
     */
    public synchronized List<String> upTo(int count) throws IOException, InterruptedException {
        if (count > registered) {
            int from = registered;
            all(count - from, i -> {
                String label = UplinkSwarm.label(from + i);
                registry.register(Registration.builder(Kind.PRODUCER, label, domain).port(port).exact(true)
                        .lease(LEASE).attribute("bench", "scale").build());
                return null;
            });
            registered = count;
        }
        return UplinkSwarm.names(domain, 0, count);
    }

    /**
     * Unregisters every agent registered, if asked to at construction (failures ignored: the leases end them), and
     * closes the listener.
     */
    @Override
    public synchronized void close() throws IOException, InterruptedException {
        int n = unregisterOnClose ? registered : 0;
        registered = 0;
        try {
            all(n, i -> {
                try {
                    registry.unregister(UplinkSwarm.label(i) + "@" + domain);
                } catch (RegistryException ignored) {
                    // its lease ends it
                }
                return null;
            });
        } finally {
            listener.close();
        }
    }

    @FunctionalInterface
    private interface Call {
        Void run(int i) throws RegistryException;
    }

    /** Runs call(0..n-1), {@code concurrency} at a time, in chunks so that the first failure stops the rest. */
    private void all(int n, Call call) throws IOException, InterruptedException {
        ExecutorService pool = Executors.newFixedThreadPool(concurrency, r -> {
            Thread t = new Thread(r, "gma-bench-register");
            t.setDaemon(true);
            return t;
        });
        try {
            IntFunction<Future<Void>> submit = i -> pool.submit(() -> call.run(i));
            for (int chunk = 0; chunk < n; chunk += 1000) {
                List<Future<Void>> futures = new ArrayList<>();
                for (int i = chunk; i < Math.min(n, chunk + 1000); i++) {
                    futures.add(submit.apply(i));
                }
                for (Future<Void> f : futures) {
                    try {
                        f.get();
                    } catch (ExecutionException e) {
                        throw new IOException("registering the swarm's agents in domain " + domain + " failed: "
                                + e.getCause().getMessage(), e.getCause());
                    }
                }
            }
        } finally {
            pool.shutdownNow();
        }
    }
}
