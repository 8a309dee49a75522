package io.gma.client;

import io.gma.registry.api.EndpointInfo;
import io.gma.registry.api.Registration;
import io.gma.registry.api.RegistryClient;
import io.gma.registry.api.RegistryException;
import io.gma.registry.api.RegistryGrace;
import io.gma.wire.ErrorCode;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.Executor;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * An endpoint's registration: registers its label and the port it listens on, renews the lease every third of
 * it, registers the same name again when the lease was lost (so that peers' routes stay valid), and unregisters
 * when the endpoint closes. An exact name held by a registration whose endpoint no longer answers (this
 * endpoint's earlier run, which crashed) is taken over at once when the builder says so
 * ({@link EndpointBuilder#takeOver}): after a {@link HolderProbe} found nobody answering as that name at the
 * address registered, and only from there (the registry replaces the registration at that address alone).
 */
final class LeaseKeeper {
    private static final Logger LOG = LoggerFactory.getLogger(Endpoint.class);
    private final EndpointBuilder<?> config;
    private final RegistryClient registry;
    /** The endpoint's listening socket: its port is what peers are told. */
    private final ServerSocketChannel server;
    /** Registered with the name: the builder's, and what the endpoint adds (its metrics page). */
    private final Map<String, String> attributes;
    private volatile String name;
    /** Runs after the name was registered again (a producer publishes its tables again); null: nothing. */
    private volatile Runnable afterRegisteringAgain;
    /** Closing: a lost lease is not registered again. */
    private volatile boolean closed;
    /** Told of this endpoint's registration and renewals: whether a peer's "not registered" is final. */
    private final RegistryGrace grace;

    LeaseKeeper(EndpointBuilder<?> config, RegistryClient registry, ServerSocketChannel server,
            Map<String, String> attributes) {
        this.config = config;
        this.registry = registry;
        this.server = server;
        this.attributes = new LinkedHashMap<>(attributes);
        this.grace = new RegistryGrace(registry, null);
    }

    /** Whether the registry's "not registered" for a peer is final, or may mean "not registered again yet". */
    RegistryGrace grace() {
        return grace;
    }

    /**
     * Registers the endpoint; its name, {@code <label>-<nonce>@<domain>} or, exact, {@code <label>@<domain>}.
     *
     * @throws EndpointException FORBIDDEN when the exact name is held (409) by an endpoint that is live, or may be,
     *     or by another identity; otherwise as {@link Failures#fromRegistry}
     */
    String register() throws EndpointException {
        try {
            name = registry.register(registration(null).build()).name();
        } catch (RegistryException ex) {
            if (ex.status() != 409 || !config.exact) {
                throw Failures.fromRegistry("register " + wanted(), ex);
            }
            if (!config.takesOver()) {
                throw refuse(ex, null);
            }
            name = takeOver(ex);
        }
        grace.joined();
        return name;
    }

    /** The name asked for: {@code label@domain}, exact or not. */
    private String wanted() {
        return config.label + "@" + config.domain;
    }

    /**
     * The exact name is held: takes it over if the endpoint registered under it no longer answers there, and
     * this identity registered it.
     */
    private String takeOver(RegistryException taken) throws EndpointException {
        String exact = wanted();
        EndpointInfo holder;
        try {
            holder = registry.lookup(exact);
        } catch (RegistryException ex) {
            if (ex.status() != 404) {
                throw refuse(taken, "looking it up failed: " + ex.getMessage());
            }
            // its lease ended between the two calls: an ordinary registration takes it
            try {
                return registry.register(registration(null).build()).name();
            } catch (RegistryException again) {
                throw again.status() == 409 ? refuse(again, null) : Failures.fromRegistry("register " + exact,
                        again);
            }
        }
        String at = holder.host() + ":" + holder.port();
        HolderProbe.Result found = HolderProbe.probe(holder.host(), holder.port(), exact, config.security,
                (InetSocketAddress) localAddress());
        if (found.verdict() != HolderProbe.Verdict.GONE) {
            String what = found.verdict() == HolderProbe.Verdict.ALIVE
                    ? "a second instance does not displace a live one: stop that one first, or give this one another"
                            + " label"
                    : "if that endpoint is gone, its lease ends by " + holder.expiresAt() + ": build again then";
            throw new EndpointException(ErrorCode.FORBIDDEN, "register " + exact + ": the name is held by the"
                    + " endpoint registered at " + at + ", which " + found.detail() + "; takeOver replaces only an"
                    + " endpoint that no longer answers, and " + what, taken);
        }
        try {
            String got = registry.register(registration(null).takeOver(holder.host(), holder.port()).build()).name();
            LOG.info("{}: took the name over from the registration at {}, which {}", got, at, found.detail());
            return got;
        } catch (RegistryException ex) {
            if (ex.status() == 409) {
                throw new EndpointException(ErrorCode.FORBIDDEN, "register " + exact + ": the registry refused to"
                        + " take the name over from " + at + " (409 " + ex.code() + ": " + ex.getMessage() + ")", ex);
            }
            if (ex.status() == 400 && ex.getMessage().contains("takeover")) {
                throw new EndpointException(ErrorCode.FORBIDDEN, "register " + exact + ": the registry at "
                        + config.registry + " does not know takeovers (400 " + ex.code() + ": " + ex.getMessage()
                        + "); it is older than this client: wait until the lease of " + at + " ends by "
                        + holder.expiresAt(), ex);
            }
            throw Failures.fromRegistry("register " + exact, ex);
        }
    }

    /**
     * The exception for an exact name held (the registry's 409), naming the holder when it can be looked up and
     * saying what to do.
     *
     * @param lookup why the holder is not named, or null to look it up here
     */
    private EndpointException refuse(RegistryException taken, String lookup) {
        String exact = wanted();
        EndpointInfo holder = null;
        if (lookup == null) {
            try {
                holder = registry.lookup(exact);
            } catch (RegistryException ex) {
                lookup = "looking it up failed: " + ex.getMessage();
            }
        }
        String where = holder == null ? lookup : "registered at " + holder.host() + ":" + holder.port()
                + ", its lease ending by " + holder.expiresAt();
        return new EndpointException(ErrorCode.FORBIDDEN, "register " + exact + ": the registry answered 409 "
                + taken.code() + " (" + taken.getMessage() + "; " + where + "). If that is this endpoint's earlier"
                + " run, which ended without unregistering (a crash), build with takeOver(true) to take the name"
                + " back at once once it no longer answers, or wait until its lease ends; otherwise give this"
                + " endpoint another label", taken);
    }

    /**
     * Renews the lease every third of it from now on: the timer says when, and the call runs on {@code calls},
     * so that a slow registry delays nothing else the timer does (request timeouts, reconnects).
     */
    void keep(ScheduledExecutorService timer, Executor calls) {
        long renew = Math.max(1, config.lease.toMillis() / 3);
        timer.scheduleWithFixedDelay(() -> calls.execute(this::renew), renew, renew, TimeUnit.MILLISECONDS);
    }

    /** What to do after the name was registered again, on the thread that renews; it must not throw. */
    void afterRegisteringAgain(Runnable r) {
        afterRegisteringAgain = r;
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
     * Registers the name whose lease was lost again, the same name (the nonce it had), so that peers' routes stay
     * valid.
     */
    private String registerAgain(String again) throws EndpointException {
        try {
            return registry.register(registration(again).build()).name();
        } catch (RegistryException ex) {
            throw Failures.fromRegistry("register " + again, ex);
        }
    }

    /** The registration of this endpoint; with {@code again}, of that name, whose lease was lost. */
    private Registration.Builder registration(String again) throws EndpointException {
        Registration.Builder r = Registration.builder(config.kind(), config.label, config.domain).host(config.host)
                .port(((InetSocketAddress) localAddress()).getPort()).exact(config.exact).lease(config.lease);
        if (again != null && !config.exact) {
            // label-nonce@domain: the label is the configured one, so the nonce is what follows it
            r.nonce(again.substring(config.label.length() + 1, again.lastIndexOf('@')));
        }
        attributes.forEach(r::attribute);
        return r;
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
            grace.renewal(true);
        } catch (RegistryException ex) {
            if (ex.status() == 404 && !closed) {
                grace.lost(); // the registry restarted, or forgot: peers register again within their leases too
                try {
                    registerAgain(name);
                    LOG.info("{}: lease was lost; registered again", name);
                    Runnable after = afterRegisteringAgain;
                    if (after != null) {
                        after.run();
                    }
                } catch (EndpointException again) {
                    LOG.warn("{}: lease lost and registering again failed: {}", name, again.getMessage());
                }
            } else {
                grace.renewal(false);
                LOG.warn("{}: lease renewal failed, will retry: {}", name, ex.getMessage());
            }
        }
    }
}
