package io.gma.internal.link;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.TimeUnit;

/**
 * One link's ACK arithmetic, both ways (protocol.md section 4): what it received and has yet to acknowledge,
 * and when an ACK is due; what the peer acknowledged so far, and so how many more each of its ACKs releases.
 * Counts are per link: an ACK says how many counted messages arrived on this link since it opened.
 *
 * <p>An ACK goes out after {@link #ACK_EVERY} counted messages, after {@link #ACK_EVERY_BYTES} of them, or
 * {@link #ACK_WITHIN_NANOS} after the first unacknowledged one, whichever comes first.
 *
 * <p>Threads: the event loop counts what it received and takes the peer's ACKs. An ACK of what was received
 * may also be taken by the {@link StallGuard}'s thread, while a handler holds the loop's thread up
 * ({@link #acknowledgeAll} is the one method both call, under this object's monitor); so the counts are
 * published as they change, with release stores, which cost the loop nothing on x86, and read with
 * acquire loads. {@link #worked()} any thread may ask.
 */
final class AckCounter {
    static final int ACK_EVERY = 64;
    /** Also acknowledge every this many bytes: with large messages, 64 of them could be the whole send queue. */
    static final long ACK_EVERY_BYTES = 256 * 1024;
    static final long ACK_WITHIN_NANOS = TimeUnit.MILLISECONDS.toNanos(20);
    private static final VarHandle RECEIVED;
    private static final VarHandle RECEIVED_BYTES;

    static {
        try {
            MethodHandles.Lookup l = MethodHandles.lookup();
            RECEIVED = l.findVarHandle(AckCounter.class, "received", long.class);
            RECEIVED_BYTES = l.findVarHandle(AckCounter.class, "receivedBytes", long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /** Written by the event loop only, bytes before count (release), so that a reader of a count sees its bytes. */
    private long received;
    private long receivedBytes;
    /** What the last ACK carried: written under the monitor, by either thread. */
    private volatile long ackSent;
    private volatile long ackSentBytes;
    /** When the first message not acknowledged was taken; written before the count that makes it unacknowledged. */
    private volatile long firstUnackedAt;
    private long acknowledgedByPeer;
    private volatile boolean worked;
    /** When the peer's first counted message came (System.nanoTime, never 0), or 0. */
    private volatile long firstMessageAt;
    /** How long a link that brought messages, and had nothing acknowledged, must have lasted to count as worked. */
    static final long WORKED_AFTER_NANOS = TimeUnit.SECONDS.toNanos(1);

    /** One counted message of {@code bytes} was taken. */
    void received(long bytes) {
        if (received == ackSent) {
            firstUnackedAt = System.nanoTime();
        }
        RECEIVED_BYTES.setRelease(this, receivedBytes + bytes);
        RECEIVED.setRelease(this, received + 1);
    }

    /** {@code n} counted messages, {@code bytes} in all, taken later than they came; n is positive. */
    void taken(int n, long bytes) {
        if (received == ackSent) {
            firstUnackedAt = System.nanoTime();
        }
        RECEIVED_BYTES.setRelease(this, receivedBytes + bytes);
        RECEIVED.setRelease(this, received + n);
    }

    /** Whether something taken is not acknowledged yet. */
    boolean unacknowledged() {
        return (long) RECEIVED.getAcquire(this) > ackSent;
    }

    /** Event loop: whether enough messages or bytes wait for an ACK to send one now. */
    boolean due() {
        return received - ackSent >= ACK_EVERY || receivedBytes - ackSentBytes >= ACK_EVERY_BYTES;
    }

    /** Whether the oldest message not acknowledged has waited its time, at {@code now}. */
    boolean dueBy(long now) {
        return (long) RECEIVED.getAcquire(this) > ackSent && now - firstUnackedAt >= ACK_WITHIN_NANOS;
    }

    /** When an ACK is due by time, if something is not acknowledged. */
    long deadline() {
        return firstUnackedAt + ACK_WITHIN_NANOS;
    }

    /**
     * An ACK is sent now: the count it carries; -1 when nothing new is to be acknowledged (the other thread
     * acknowledged it first).
     */
    synchronized long acknowledgeAll() {
        long count = (long) RECEIVED.getAcquire(this);
        if (count <= ackSent) {
            return -1;
        }
        ackSentBytes = (long) RECEIVED_BYTES.getAcquire(this);
        ackSent = count;
        return count;
    }

    /**
     * An ACK from the peer, saying it received {@code count} counted messages on this link.
     *
     * @return how many more than its last ACK; 0 or less when none (an old or repeated count)
     */
    long peerAcknowledged(long count) {
        long delta = count - acknowledgedByPeer;
        if (delta > 0) {
            acknowledgedByPeer = count;
        }
        return delta;
    }

    /** The link works: the peer acknowledged something. Whether this is the first time. */
    boolean firstWork() {
        if (worked) {
            return false;
        }
        worked = true;
        return true;
    }

    /** The first counted message came from the peer, now ({@link #worked}). */
    void messageCame() {
        firstMessageAt = System.nanoTime() | 1; // never 0, which means none
    }

    /**
     * Whether the link worked, whatever ended it: the peer acknowledged something, or it sent messages and the
     * link stayed up {@link #WORKED_AFTER_NANOS} after the first. A peer that only sends to this side (a PC servlet
     * to a consumer) never ACKs; one whose links fail at once after a few messages (a message this side refuses,
     * sent again after each reconnect) must not be reconnected to at once, every time.
     */
    boolean worked() {
        long first = firstMessageAt;
        return worked || first != 0 && System.nanoTime() - first >= WORKED_AFTER_NANOS;
    }
}
