package io.gma.pcservlet;

import io.gma.registry.api.DomainInfo;
import io.gma.registry.api.RegistryClient;
import io.gma.registry.api.RegistryException;
import io.gma.registry.api.RegistryGrace;
import io.gma.wire.ErrorCode;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * Where a domain's traffic goes, and whether an endpoint exists, as the registry says, remembered for a few
 * seconds (protocol.md section 3: clients cache resolutions and drop them when a connection fails).
 *
 * <pre>
 *   destination domain D, registered with   this PC servlet posts to
 *   url U                                    U
 *   via V (V has url W)                      W, which relays to D
 *   via this domain                          nobody: D polls us (the relay)
 *   this PC servlet is outbound-only (via V) V's url, for every destination
 * </pre>
 */
final class Routes {
    private static final long TTL_NANOS = TimeUnit.SECONDS.toNanos(5);
    private static final long MISSING_TTL_NANOS = TimeUnit.SECONDS.toNanos(1);
    private static final int MAX_CACHED = 10_000;

    /**
     * Where to post: the URL of the PC servlet that takes the messages, and its domain (the audience of the
     * token shown there: the destination's, or that of the domain relaying for it); or here, to the relay.
     */
    record Target(String url, String domain, boolean relayedHere) {
    }

    /** A look-up failed: NO_ROUTE when the registry says there is no such thing, else a passing failure. */
    static final class RouteException extends Exception {
        private static final long serialVersionUID = 1L;
        final ErrorCode code;

        RouteException(ErrorCode code, String message) {
            super(message);
            this.code = code;
        }
    }

    private record Cached<T>(T value, RouteException failure, long until) {
    }

    private final String domain;
    private final String via;
    private final RegistryClient registry;
    private final RegistryGrace grace;
    private final Map<String, Cached<DomainInfo>> domains = new ConcurrentHashMap<>();
    private final Map<String, Cached<Boolean>> endpoints = new ConcurrentHashMap<>();

    Routes(String domain, String via, RegistryClient registry, RegistryGrace grace) {
        this.domain = domain;
        this.via = via;
        this.registry = registry;
        this.grace = grace;
    }

    /** Where messages for {@code destination} are posted. */
    Target target(String destination) throws RouteException {
        if (via != null) {
            return new Target(urlOf(via, "the via domain of " + domain), via, false);
        }
        DomainInfo d = domain(destination);
        if (d.url() != null) {
            return new Target(d.url(), destination, false);
        }
        if (domain.equals(d.via())) {
            return new Target(null, domain, true);
        }
        return new Target(urlOf(d.via(), "the via domain of " + destination), d.via(), false);
    }

    private String urlOf(String name, String role) throws RouteException {
        DomainInfo d = domain(name);
        if (d.url() == null) {
            throw new RouteException(ErrorCode.NO_ROUTE, "domain " + name + ", " + role + ", has no URL: it is"
                    + " outbound-only itself (via " + d.via() + ")");
        }
        return d.url();
    }

    /**
     * Whether {@code d} is an outbound-only domain that this PC servlet relays for; false for a domain the
     * registry does not know.
     *
     * @throws RouteException INTERNAL when the registry cannot say now
     */
    boolean relaysFor(String d) throws RouteException {
        try {
            return domain.equals(domain(d).via());
        } catch (RouteException e) {
            if (e.code == ErrorCode.NO_ROUTE) {
                return false;
            }
            throw e;
        }
    }

    DomainInfo domain(String name) throws RouteException {
        long now = System.nanoTime();
        Cached<DomainInfo> c = domains.get(name);
        if (c == null || now - c.until() > 0) {
            try {
                c = new Cached<>(registry.lookupDomain(name), null, now + TTL_NANOS);
            } catch (RegistryException e) {
                c = new Cached<>(null, failure("domain " + name, e), now + MISSING_TTL_NANOS);
            }
            if (domains.size() >= MAX_CACHED) {
                domains.clear(); // names from remote input: bounded, whatever they send
            }
            domains.put(name, c);
        }
        if (c.failure() != null) {
            throw c.failure().code == ErrorCode.NO_ROUTE ? unknownForNow(c.failure()) : c.failure();
        }
        return c.value();
    }

    /**
     * A "not registered" as it counts now: final, or (the registry restarted or was cut off less than a lease
     * ago) a passing failure, so that what waits for the name is kept and retried.
     */
    private RouteException unknownForNow(RouteException notRegistered) {
        if (grace.settled()) {
            return notRegistered;
        }
        return new RouteException(ErrorCode.INTERNAL, notRegistered.getMessage() + " (yet: the registry restarted"
                + " or was unreachable less than a lease ago, so it may not have been registered again; kept, and"
                + " final in " + grace.secondsLeft() + " s)");
    }

    /**
     * Whether {@code name} is a live endpoint in the registry (answers cached a few seconds).
     *
     * @throws RouteException INTERNAL when the registry cannot say now, or its "no" may not be final yet
     */
    boolean endpointExists(String name) throws RouteException {
        long now = System.nanoTime();
        Cached<Boolean> c = endpoints.get(name);
        if (c == null || now - c.until() > 0) {
            try {
                registry.lookup(name);
                c = new Cached<>(true, null, now + TTL_NANOS);
            } catch (RegistryException e) {
                RouteException f = failure("endpoint " + name, e);
                c = f.code == ErrorCode.NO_ROUTE ? new Cached<>(false, null, now + MISSING_TTL_NANOS)
                        : new Cached<>(null, f, now + MISSING_TTL_NANOS);
            }
            if (endpoints.size() >= MAX_CACHED) {
                endpoints.clear();
            }
            endpoints.put(name, c);
        }
        if (c.failure() != null) {
            throw c.failure();
        }
        if (!c.value()) {
            RouteException f = unknownForNow(new RouteException(ErrorCode.NO_ROUTE, "endpoint " + name
                    + " is not registered"));
            if (f.code != ErrorCode.NO_ROUTE) {
                throw f;
            }
        }
        return c.value();
    }

    /** A post to {@code d} failed: look it up again next time, its URL may have changed. */
    void forget(String d) {
        domains.remove(d);
        if (via != null) {
            domains.remove(via);
        }
    }

    private static RouteException failure(String what, RegistryException e) {
        return e.status() == 404 ? new RouteException(ErrorCode.NO_ROUTE, what + " is not registered")
                : new RouteException(ErrorCode.INTERNAL, "the registry could not look up " + what + ": "
                        + e.getMessage());
    }
}
