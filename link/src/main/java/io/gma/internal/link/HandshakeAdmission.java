package io.gma.internal.link;

import java.net.InetAddress;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Caps the connections accepted and not yet authenticated: in the whole process (every listener of every
 * endpoint and gateway in this JVM) and per source address. A connection counts from accept until its link
 * opens (HELLO authenticated, WELCOME sent) or closes. Over a cap, the listener closes the socket at once,
 * before a link or any buffer is made for it; the refusals are logged at most once per {@link #LOG_EVERY_NANOS},
 * with their number since the last line.
 *
 * <p>The caps come from the system properties {@value #MAX_PROPERTY} (default {@value #DEFAULT_MAX}) and
 * {@value #MAX_PER_ADDRESS_PROPERTY} (default {@value #DEFAULT_MAX_PER_ADDRESS}), read once, by the first
 * endpoint or gateway of the process ({@link #process()}).
 *
 * <p>Threads: accept threads admit, links' event loops (and closing threads) release; lock-free, with one
 * {@link ConcurrentHashMap} entry per address that has connections pending.
 */
public final class HandshakeAdmission {
    private static final Logger LOG = LoggerFactory.getLogger(HandshakeAdmission.class);
    static final String MAX_PROPERTY = "gma.maxUnauthenticated";
    static final String MAX_PER_ADDRESS_PROPERTY = "gma.maxUnauthenticatedPerAddress";
    static final int DEFAULT_MAX = 256;
    static final int DEFAULT_MAX_PER_ADDRESS = 64;
    /** The largest cap a property may set. */
    static final int MOST = 1_000_000;
    static final long LOG_EVERY_NANOS = TimeUnit.SECONDS.toNanos(10);

    private static HandshakeAdmission process;

    private final int max;
    private final int maxPerAddress;
    private final LongSupplier clock;
    private final AtomicInteger pending = new AtomicInteger();
    private final Map<InetAddress, Integer> perAddress = new ConcurrentHashMap<>();
    /** Refusals since the last log line, and when that line was written (clock time; MIN_VALUE: never). */
    private final AtomicLong unlogged = new AtomicLong();
    private final AtomicLong loggedAt = new AtomicLong(Long.MIN_VALUE);
    private final AtomicLong logLines = new AtomicLong();

    HandshakeAdmission(int max, int maxPerAddress, LongSupplier clock) {
        this.max = max;
        this.maxPerAddress = maxPerAddress;
        this.clock = clock;
    }

    /**
     * The process's admission, its caps read from the system properties on the first call.
     *
     * @throws IllegalArgumentException if a property is not a whole number from 1 to 1,000,000 (every call
     *     throws until it is fixed; nothing is remembered)
     */
    public static synchronized HandshakeAdmission process() {
        if (process == null) {
            process = new HandshakeAdmission(property(MAX_PROPERTY, DEFAULT_MAX),
                    property(MAX_PER_ADDRESS_PROPERTY, DEFAULT_MAX_PER_ADDRESS), System::nanoTime);
        }
        return process;
    }

    /** A cap from a system property, or its default when the property is not set. */
    static int property(String name, int byDefault) {
        String value = System.getProperty(name);
        if (value == null) {
            return byDefault;
        }
        int n;
        try {
            n = Integer.parseInt(value.strip());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("system property " + name + " is \"" + value + "\": not a whole"
                    + " number (1.." + MOST + ", default " + byDefault + ")");
        }
        if (n < 1 || n > MOST) {
            throw new IllegalArgumentException("system property " + name + " is " + n + ", outside 1.." + MOST
                    + " (default " + byDefault + ")");
        }
        return n;
    }

    /** A connection admitted: it counts against the caps until {@link #release()}d, once. */
    final class Ticket {
        private final InetAddress address;
        private final AtomicBoolean released = new AtomicBoolean();

        private Ticket(InetAddress address) {
            this.address = address;
        }

        /** The link opened or closed: it no longer counts. Any thread; the second call does nothing. */
        void release() {
            if (released.compareAndSet(false, true)) {
                perAddress.computeIfPresent(address, (a, n) -> n <= 1 ? null : n - 1);
                pending.decrementAndGet();
            }
        }
    }

    /**
     * Admits a connection from {@code address}, or refuses it when either cap is reached; a refusal is logged
     * at most once per {@link #LOG_EVERY_NANOS} for all listeners together, naming {@code listener}.
     *
     * @return the ticket to release when the link opens or closes; null: close the socket at once
     */
    Ticket admit(InetAddress address, String listener) {
        for (int n = pending.get();; n = pending.get()) {
            if (n >= max) {
                refused(listener, address, n + " connections not yet authenticated are pending in this process ("
                        + MAX_PROPERTY + " " + max + ")");
                return null;
            }
            if (pending.compareAndSet(n, n + 1)) {
                break;
            }
        }
        boolean[] room = new boolean[1];
        perAddress.compute(address, (a, n) -> {
            int now = n == null ? 0 : n;
            room[0] = now < maxPerAddress;
            return room[0] ? now + 1 : n;
        });
        if (!room[0]) {
            pending.decrementAndGet();
            refused(listener, address, maxPerAddress + " connections not yet authenticated are pending from "
                    + address.getHostAddress() + " (" + MAX_PER_ADDRESS_PROPERTY + " " + maxPerAddress + ")");
            return null;
        }
        return new Ticket(address);
    }

    private void refused(String listener, InetAddress address, String why) {
        unlogged.incrementAndGet();
        long now = clock.getAsLong();
        long last = loggedAt.get();
        if (last != Long.MIN_VALUE && now - last < LOG_EVERY_NANOS || !loggedAt.compareAndSet(last, now)) {
            return;
        }
        long count = unlogged.getAndSet(0);
        logLines.incrementAndGet();
        LOG.warn("{}: closed a connection from {} at once: {}; connections refused over the caps since the last"
                + " such line: {} (logged at most once per {} s)", listener, address.getHostAddress(), why, count,
                TimeUnit.NANOSECONDS.toSeconds(LOG_EVERY_NANOS));
    }

    /** Connections admitted and not yet released. */
    public int pending() {
        return pending.get();
    }

    /** Connections admitted and not yet released from {@code address}. */
    public int pending(InetAddress address) {
        return perAddress.getOrDefault(address, 0);
    }

    /** Lines logged about refusals. */
    long logLines() {
        return logLines.get();
    }

    /** The cap on connections not yet authenticated in the whole process. */
    public int max() {
        return max;
    }

    /** The cap on connections not yet authenticated from one address. */
    public int maxPerAddress() {
        return maxPerAddress;
    }
}
