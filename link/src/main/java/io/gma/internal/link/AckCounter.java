package io.gma.internal.link;

import java.util.concurrent.TimeUnit;

/**
 * One link's ACK arithmetic, both ways (protocol.md section 4): what it received and has yet to acknowledge,
 * and when an ACK is due; what the peer acknowledged so far, and so how many more each of its ACKs releases.
 * Counts are per link: an ACK says how many counted messages arrived on this link since it opened.
 *
 * <p>An ACK goes out after {@link #ACK_EVERY} counted messages, after {@link #ACK_EVERY_BYTES} of them, or
 * {@link #ACK_WITHIN_NANOS} after the first unacknowledged one, whichever comes first. I/O thread only, but
 * {@link #worked()}, which any thread may ask.
 */
final class AckCounter {
    static final int ACK_EVERY = 64;
    /** Also acknowledge every this many bytes: with large messages, 64 of them could be the whole send queue. */
    static final long ACK_EVERY_BYTES = 256 * 1024;
    static final long ACK_WITHIN_NANOS = TimeUnit.MILLISECONDS.toNanos(20);

    private long received;
    private long receivedBytes;
    private long ackSent;
    private long ackSentBytes;
    private long firstUnackedAt;
    private long acknowledgedByPeer;
    private volatile boolean worked;

    /** One counted message of {@code bytes} was taken. */
    void received(long bytes) {
        if (received == ackSent) {
            firstUnackedAt = System.nanoTime();
        }
        received++;
        receivedBytes += bytes;
    }

    /** {@code n} counted messages, {@code bytes} in all, taken later than they came; n is positive. */
    void taken(int n, long bytes) {
        if (received == ackSent) {
            firstUnackedAt = System.nanoTime();
        }
        received += n;
        receivedBytes += bytes;
    }

    /** Whether something taken is not acknowledged yet. */
    boolean unacknowledged() {
        return received > ackSent;
    }

    /** Whether enough messages or bytes wait for an ACK to send one now. */
    boolean due() {
        return received - ackSent >= ACK_EVERY || receivedBytes - ackSentBytes >= ACK_EVERY_BYTES;
    }

    /** Whether the oldest message not acknowledged has waited its time, at {@code now}. */
    boolean dueBy(long now) {
        return received > ackSent && now - firstUnackedAt >= ACK_WITHIN_NANOS;
    }

    /** When an ACK is due by time, if something is not acknowledged. */
    long deadline() {
        return firstUnackedAt + ACK_WITHIN_NANOS;
    }

    /** An ACK is sent now: the count it carries. */
    long acknowledgeAll() {
        ackSent = received;
        ackSentBytes = receivedBytes;
        return received;
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

    /** Whether the peer acknowledged anything on this link: it worked, whatever ended it. */
    boolean worked() {
        return worked;
    }
}
