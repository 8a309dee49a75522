package io.gma.registry.api;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * Whether the registry's "not registered" is final, or may only mean "not registered again yet". A registry
 * restarted in memory forgets every registration; so does one that could not be reached for longer than the
 * leases. Endpoints and PC servlets register again within a third of their lease, so until a lease has passed
 * since the registry began serving (its {@code uptimeSeconds}), and since its caller last reached it again after
 * failing to or found its own registration forgotten, a name or domain it does not know is unknown for now:
 * messages for it wait, within their bounds, rather than fail with NO_ROUTE (docs/registry.md, "A restart").
 *
 * <p>An endpoint says when it {@link #joined}: a registry that has served since before then has not restarted
 * in the endpoint's life, and its "not registered" is final at once (a name mistyped fails fast). A PC servlet
 * does not: one started just after the registry gives the others their lease to register again.
 *
 * <p>The registry's health is read again when a "not registered" is about to count and the last reading is
 * more than a second old, so a restart is seen at the first answer that could be wrong, not at the next renewal.
 * Safe for use by many threads.
 */
public final class RegistryGrace {
    private static final long READING_TTL_NANOS = TimeUnit.SECONDS.toNanos(1);
    /** The grace when the registry does not say its default lease (one older than this client). */
    private static final Duration FALLBACK = Duration.ofSeconds(30);
    /** {@code uptimeSeconds} is in whole seconds: a start up to this long after joining is the same start. */
    private static final long UPTIME_SLACK_NANOS = TimeUnit.MILLISECONDS.toNanos(1100);
    /** No point in time: the registry is older than its health's fields, or nothing happened. */
    private static final long NEVER = Long.MIN_VALUE;

    private final RegistryClient registry;
    /** The grace given, or null: the registry's default lease. */
    private final Duration configured;
    /** From when on (System.nanoTime) a "not registered" is final. */
    private volatile long settledAt;
    private volatile long readAt;
    private volatile boolean read;
    /** When the caller first registered ({@link #joined}), or NEVER. */
    private volatile long joinedAt = NEVER;
    /** A renewal failed: the registry was unreachable, and the leases may have passed meanwhile. */
    private volatile boolean cutOff;
    /** When the caller reached the registry again, or found its registration forgotten; or NEVER. */
    private volatile long restoredAt = NEVER;

    /**
     * @param configured how long after a restart "not registered" is not final; null: the registry's default
     *     lease (30 s from a registry that does not say it); zero: final at once, always
     */
    public RegistryGrace(RegistryClient registry, Duration configured) {
        this.registry = registry;
        this.configured = configured;
    }

    /** The caller registered for the first time: a registry serving since before now has not restarted since. */
    public void joined() {
        joinedAt = System.nanoTime();
        read = false;
    }

    /** A renewal of the caller's registration reached the registry, or did not. */
    public void renewal(boolean ok) {
        if (!ok) {
            cutOff = true;
        } else if (cutOff) {
            cutOff = false;
            restored();
        }
    }

    /** The registry no longer knew the caller's registration (it restarted, or the lease passed): from now on. */
    public void lost() {
        restored();
    }

    private void restored() {
        restoredAt = System.nanoTime();
        read = false; // read again: the registry may have restarted meanwhile too
    }

    /** Whether a "not registered" is final now. */
    public boolean settled() {
        if (configured != null && configured.isZero()) {
            return true;
        }
        long now = System.nanoTime();
        if (!read || now - readAt > READING_TTL_NANOS) {
            readHealth(now);
        }
        return System.nanoTime() - settledAt >= 0;
    }

    /** How long until a "not registered" is final, in whole seconds (at least 1 while not). */
    public long secondsLeft() {
        long left = settledAt - System.nanoTime();
        return left <= 0 ? 0 : Math.max(1, TimeUnit.NANOSECONDS.toSeconds(left));
    }

    private synchronized void readHealth(long now) {
        if (read && now - readAt <= READING_TTL_NANOS) {
            return; // another caller read it meanwhile
        }
        long since;
        long grace;
        try {
            RegistryClient.Health h = registry.health();
            grace = (configured != null ? configured : h.defaultLease().isZero() ? FALLBACK : h.defaultLease())
                    .toNanos();
            since = h.uptime().isZero() && h.defaultLease().isZero() ? NEVER : now - h.uptime().toNanos();
            long joined = joinedAt;
            if (since != NEVER && joined != NEVER && since - joined <= UPTIME_SLACK_NANOS) {
                since = NEVER; // serving since before the caller joined: no restart in its life
            }
        } catch (RegistryException e) {
            // it answered "not registered" a moment ago, and now nothing: no answer of it counts until it does
            since = now;
            grace = (configured != null ? configured : FALLBACK).toNanos();
        }
        long restored = restoredAt;
        if (restored != NEVER && (since == NEVER || restored - since > 0)) {
            since = restored;
        }
        settledAt = since == NEVER ? now - 1 : since + grace;
        readAt = now;
        read = true;
    }
}
