package io.gma.client;

import io.gma.wire.ErrorCode;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The messages for one peer that it has not acknowledged yet, in three lanes:
 *
 * <pre>
 *   resend  : written on a link that was lost, not acknowledged; written first, in their wire order
 *   control : REPLY, ERROR, UNSUBSCRIBE; never bounded, so they never wait behind data
 *   data    : DATA, REQUEST, SUBSCRIBE, application commands; bounded by maxQueuedBytes and maxQueuedMessages
 *   inFlight: written on the current link, waiting for its ACK, in wire order
 * </pre>
 *
 * The bounds count data from the moment it is queued until it is acknowledged, so a slow peer fills the
 * queue and the producer blocks or fails (PROTOCOL.md section 4). The queue outlives links: when one is lost,
 * {@link #linkLost()} puts what was in flight back in front, and the next link resends it.
 *
 * <p>One lock; no I/O and no future completion under it (completions are returned to the caller).
 */
final class SendQueue {
    private static final Pending[] NONE = {};
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition room = lock.newCondition();
    private final long maxBytes;
    private final int maxMessages;
    private final Counters counters;
    private final ArrayDeque<Pending> resend = new ArrayDeque<>();
    private final ArrayDeque<Pending> control = new ArrayDeque<>();
    private final ArrayDeque<Pending> data = new ArrayDeque<>();
    private final ArrayDeque<Pending> inFlight = new ArrayDeque<>();
    private long dataBytes;
    private int dataMessages;
    private long allBytes;
    /** Bytes queued and not yet taken by a link (resend, control and data lanes). */
    private long unsentBytes;
    private int allMessages;
    private EndpointException closedBy;
    /** The link messages go out on; only it may take messages in flight or acknowledge them. */
    private Link carrier;

    SendQueue(long maxBytes, int maxMessages, Counters counters) {
        this.maxBytes = maxBytes;
        this.maxMessages = maxMessages;
        this.counters = counters;
    }

    /**
     * Queues a data message under the policy.
     *
     * @return the bytes queued and not yet taken by a link, this message's included; or -1 when DROP_OLDEST
     *     found nothing unsent to drop, everything queued being in flight already, and dropped this message
     *     instead (counted, its future failed with QUEUE_FULL)
     * @throws EndpointException QUEUE_FULL (at once, after blockNanos, or larger than the whole queue), or
     *     the reason the queue was closed
     */
    long offerData(Pending p, FullQueuePolicy policy, long blockNanos, String peer) throws EndpointException {
        int size = p.size;
        if (size > maxBytes) {
            counters.rejected.increment();
            throw new EndpointException(ErrorCode.QUEUE_FULL, "message of " + size + " bytes exceeds maxQueuedBytes "
                    + maxBytes);
        }
        List<Pending> dropped = null;
        boolean queued;
        long unsent;
        lock.lock();
        try {
            checkOpen();
            if (!fits(size)) {
                switch (policy) {
                    case FAIL -> throw full(peer);
                    case DROP_OLDEST -> dropped = dropOldestFor(size);
                    default -> waitForRoom(size, blockNanos, peer);
                }
            }
            queued = fits(size);
            if (queued) {
                data.addLast(p);
                dataBytes += size;
                dataMessages++;
                allBytes += size;
                allMessages++;
                unsentBytes += size;
            } else {
                counters.drops.increment();
                dropped.add(p);
            }
            unsent = unsentBytes;
        } finally {
            lock.unlock();
        }
        for (Pending d : dropped == null ? List.<Pending>of() : dropped) {
            d.completeExceptionally(new EndpointException(ErrorCode.QUEUE_FULL,
                    "dropped under DROP_OLDEST: the send queue for " + peer + " was full"));
        }
        return queued ? unsent : -1;
    }

    /**
     * Whether {@code messages} data messages of {@code bytes} in all would be queued now without waiting; an
     * empty data lane takes any amount, so that a batch larger than the whole queue is not refused forever.
     */
    boolean hasRoom(long bytes, int messages) {
        lock.lock();
        try {
            return dataMessages == 0 || dataBytes + bytes <= maxBytes && dataMessages + messages <= maxMessages;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Queues a data message without applying the bounds, for a caller that checked {@link #hasRoom} for a
     * whole batch: the batch goes in whole, overshooting by at most itself.
     *
     * @throws EndpointException the reason the queue was closed
     */
    void addData(Pending p) throws EndpointException {
        lock.lock();
        try {
            checkOpen();
            data.addLast(p);
            dataBytes += p.size;
            dataMessages++;
            allBytes += p.size;
            allMessages++;
            unsentBytes += p.size;
        } finally {
            lock.unlock();
        }
    }

    private boolean fits(int size) {
        return dataBytes + size <= maxBytes && dataMessages < maxMessages;
    }

    private EndpointException full(String peer) {
        counters.rejected.increment();
        return new EndpointException(ErrorCode.QUEUE_FULL, "send queue for " + peer + " is full: " + dataMessages
                + " messages, " + dataBytes + " bytes (maxQueuedMessages " + maxMessages + ", maxQueuedBytes "
                + maxBytes + ")");
    }

    /** Drops unsent data from the front until the message fits or none is left; what is in flight stays. */
    private List<Pending> dropOldestFor(int size) {
        List<Pending> dropped = new ArrayList<>();
        while (!fits(size)) {
            Pending oldest = data.pollFirst();
            if (oldest == null) {
                return dropped;
            }
            dataBytes -= oldest.size;
            dataMessages--;
            allBytes -= oldest.size;
            allMessages--;
            unsentBytes -= oldest.size;
            counters.drops.increment();
            dropped.add(oldest);
        }
        return dropped;
    }

    private void waitForRoom(int size, long blockNanos, String peer) throws EndpointException {
        counters.waits.increment();
        long left = blockNanos;
        try {
            while (!fits(size)) {
                if (left <= 0) {
                    throw full(peer);
                }
                left = room.awaitNanos(left);
                checkOpen();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new EndpointException(ErrorCode.QUEUE_FULL, "interrupted while waiting for room to " + peer, e);
        }
    }

    /**
     * Queues a control message: it never waits, and goes out before data. Bounded all the same, at twice
     * maxQueuedBytes (always room for one), so a peer that floods requests and never reads cannot make its
     * replies fill memory.
     *
     * @return the bytes queued and not yet taken by a link, this message's included
     * @throws EndpointException QUEUE_FULL past that bound
     */
    long offerControl(Pending p) throws EndpointException {
        lock.lock();
        try {
            checkOpen();
            long controlBytes = allBytes - dataBytes;
            if (controlBytes > 0 && controlBytes + p.size > 2 * maxBytes) {
                counters.rejected.increment();
                throw new EndpointException(ErrorCode.QUEUE_FULL, "control messages for this peer passed "
                        + 2 * maxBytes + " bytes: it is not reading");
            }
            control.addLast(p);
            allBytes += p.size;
            allMessages++;
            unsentBytes += p.size;
            return unsentBytes;
        } finally {
            lock.unlock();
        }
    }

    private void checkOpen() throws EndpointException {
        if (closedBy != null) {
            throw closedBy;
        }
    }

    /** {@code link} carries this queue's messages from now on (it had nothing in flight before). */
    void carriedBy(Link link) {
        lock.lock();
        try {
            carrier = link;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Moves the next messages to write on {@code link} in flight, up to {@code into.length} of them and about
     * {@code maxBytes}: lost-link resends first, then control, then data. None when there is none, or when
     * {@code link} no longer carries this queue: a writer that raced with the link's loss then takes nothing,
     * rather than strand messages in flight on a dead link.
     *
     * @return how many were put in {@code into}
     */
    int next(Link link, Pending[] into, int maxBytes) {
        int count = 0;
        int bytes = 0;
        lock.lock();
        try {
            if (link != carrier) {
                return 0;
            }
            while (count < into.length && bytes < maxBytes) {
                Pending p = resend.pollFirst();
                if (p == null) {
                    p = control.pollFirst();
                }
                if (p == null) {
                    p = data.pollFirst();
                }
                if (p == null) {
                    break;
                }
                inFlight.addLast(p);
                into[count++] = p;
                bytes += p.size;
                unsentBytes -= p.size;
            }
            return count;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Releases the {@code count} oldest messages in flight on {@code link}; the caller completes their futures.
     * An ACK from a link that no longer carries the queue releases nothing: its messages were put back.
     */
    Pending[] acknowledge(Link link, long count) {
        lock.lock();
        try {
            if (link != carrier) {
                return NONE;
            }
            Pending[] done = new Pending[(int) Math.min(count, inFlight.size())];
            for (int i = 0; i < done.length; i++) {
                Pending p = inFlight.pollFirst();
                done[i] = p;
                allBytes -= p.size;
                allMessages--;
                if (p.data) {
                    dataBytes -= p.size;
                    dataMessages--;
                }
            }
            if (done.length > 0) {
                room.signalAll();
            }
            return done;
        } finally {
            lock.unlock();
        }
    }

    /**
     * {@code link} is gone. If it carried the messages, what it had in flight is resent first, in its order,
     * by {@code next}, which carries the queue from now on (null: none yet).
     */
    void linkLost(Link link, Link next) {
        lock.lock();
        try {
            if (carrier != link) {
                return;
            }
            while (!inFlight.isEmpty()) {
                Pending p = inFlight.pollLast();
                resend.addFirst(p);
                unsentBytes += p.size;
            }
            carrier = next;
        } finally {
            lock.unlock();
        }
    }

    boolean isEmpty() {
        lock.lock();
        try {
            return allMessages == 0;
        } finally {
            lock.unlock();
        }
    }

    /** Fails every message with {@code reason} and refuses new ones; the caller completes the futures. */
    List<Pending> close(EndpointException reason) {
        lock.lock();
        try {
            closedBy = reason;
            List<Pending> all = new ArrayList<>(inFlight);
            all.addAll(resend);
            all.addAll(control);
            all.addAll(data);
            inFlight.clear();
            resend.clear();
            control.clear();
            data.clear();
            dataBytes = 0;
            dataMessages = 0;
            allBytes = 0;
            allMessages = 0;
            unsentBytes = 0;
            room.signalAll();
            return all;
        } finally {
            lock.unlock();
        }
    }

    long bytes() {
        lock.lock();
        try {
            return allBytes;
        } finally {
            lock.unlock();
        }
    }

    int messages() {
        lock.lock();
        try {
            return allMessages;
        } finally {
            lock.unlock();
        }
    }
}
