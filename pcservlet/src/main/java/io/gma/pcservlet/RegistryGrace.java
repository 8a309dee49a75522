package io.gma.pcservlet;

import io.gma.registry.api.RegistryClient;
import io.gma.registry.api.RegistryException;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * Whether the registry's "not registered" is final, or may only mean "not registered again yet". A registry
 * restarted in memory forgets every registration; so does one that could not be reached for longer than the
 * leases. Endpoints and PC servlets register again within a third of their lease, so until a lease has passed
 * since the registry began serving (its {@code uptimeSeconds}), and since this PC servlet last reached it again
 * after failing to, a name or domain it does not know is unknown for now: messages for it wait, within their
 * bounds, rather than fail with NO_ROUTE (docs/pcservlet.md, "The registry restarted").
 *
 * <p>The registry's health is read again when a "not registered" is about to count and the last reading is
 * more than a second old, so a restart is seen at the first answer that could be wrong, not at the next renewal.
 */
final class RegistryGrace {
    private static final long READING_TTL_NANOS = TimeUnit.SECONDS.toNanos(1);
    /** The grace when the registry does not say its default lease (one older than this PC servlet). */
    private static final Duration FALLBACK = Duration.ofSeconds(30);

    private final RegistryClient registry;
    /** The grace given, or null: the registry's default lease. */
    private final Duration configured;
    /** From when on (System.nanoTime) a "not registered" is final. */
    private volatile long settledAt;
    private volatile long readAt;
    private volatile boolean read;
    /** A renewal of the domain failed: the registry was unreachable, and the leases may have passed meanwhile. */
    private volatile boolean cutOff;
    private volatile long restoredAt;
    private volatile boolean restored;

    RegistryGrace(RegistryClient registry, Duration configured) {
        this.registry = registry;
        this.configured = configured;
    }

    /** A renewal of the domain's registration succeeded or failed. */
    void renewal(boolean ok) {
        if (!ok) {
            cutOff = true;
        } else if (cutOff) {
            cutOff = false;
            restoredAt = System.nanoTime();
            restored = true;
            read = false; // read again: the registry may have restarted meanwhile too
        }
    }

    /** Whether a "not registered" is final now. */
    boolean settled() {
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
    long secondsLeft() {
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
            since = h.uptime().isZero() && h.defaultLease().isZero() ? Long.MIN_VALUE : now - h.uptime().toNanos();
        } catch (RegistryException e) {
            // it answered "not registered" a moment ago, and now nothing: no answer of it counts until it does
            since = now;
            grace = (configured != null ? configured : FALLBACK).toNanos();
        }
        if (restored && (since == Long.MIN_VALUE || restoredAt - since > 0)) {
            since = restoredAt;
        }
        settledAt = since == Long.MIN_VALUE ? now - 1 : since + grace;
        readAt = now;
        read = true;
    }
}
