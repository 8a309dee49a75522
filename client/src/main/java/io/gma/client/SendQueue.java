package io.gma.client;

import io.gma.wire.ErrorCode;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
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
 * {@link #linkLost} puts what was in flight back in front, and the next link resends it.
 *
 * <p>Acknowledging: messages in flight are numbered in wire order ({@link Pending#position}); an ACK moves
 * {@code acknowledged} on and frees the oldest entries of the in-flight ring, whose sizes sit in arrays of
 * their own. The messages themselves are not touched (on the ACK's thread, another core, each would be a cache
 * miss) unless someone asked for a future: a message is acknowledged when its position is at or below
 * {@code acknowledged}, and {@link #futureOf} works that out when asked.
 *
 * <p>One lock; no I/O and no future completion under it.
 */
final class SendQueue {
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition room = lock.newCondition();
    private final long maxBytes;
    private final int maxMessages;
    private final Counters counters;
    private final ArrayDeque<Pending> resend = new ArrayDeque<>();
    private final ArrayDeque<Pending> control = new ArrayDeque<>();
    private final ArrayDeque<Pending> data = new ArrayDeque<>();
    /** The in-flight ring: messages, their sizes and lanes, oldest at flightHead. */
    private Pending[] flight = new Pending[256];
    private int[] flightSizes = new int[256];
    private boolean[] flightData = new boolean[256];
    private int flightHead;
    private int flightCount;
    /** Positions handed out to messages written on the current link, and acknowledged by the peer. */
    private long written;
    private long acknowledged;
    /** Futures made for messages not acknowledged or failed yet: while there are none, ACKs touch no message. */
    private int watched;
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

    /** maxQueuedBytes: data queued and not acknowledged, at most. */
    long maxBytes() {
        return maxBytes;
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
            if (dropped != null) {
                dropped = fail(dropped, new EndpointException(ErrorCode.QUEUE_FULL,
                        "dropped under DROP_OLDEST: the send queue for " + peer + " was full"));
            }
        } finally {
            lock.unlock();
        }
        completeFailed(dropped);
        return queued ? unsent : -1;
    }

    /**
     * Under the lock: marks {@code failed} as failed with {@code why}.
     *
     * @return those with a future, for {@link #completeFailed} once the lock is released
     */
    private List<Pending> fail(Iterable<Pending> failed, EndpointException why) {
        List<Pending> watchedOnes = new ArrayList<>();
        for (Pending p : failed) {
            p.failure = why;
            if (p.future != null) {
                watchedOnes.add(p);
                watched--;
            }
        }
        return watchedOnes;
    }

    private static void completeFailed(List<Pending> failed) {
        if (failed != null) {
            for (Pending p : failed) {
                p.future.completeExceptionally(p.failure);
            }
        }
    }

    /**
     * The future of {@code p}, made now if nobody asked before; complete already if {@code p} was acknowledged
     * or failed.
     */
    CompletableFuture<Void> futureOf(Pending p) {
        lock.lock();
        try {
            if (p.future == null) {
                // made complete when it can be: nobody else sees it before it is stored
                if (p.failure != null) {
                    p.future = CompletableFuture.failedFuture(p.failure);
                } else if (p.position != 0 && p.position <= acknowledged) {
                    p.future = CompletableFuture.completedFuture(null);
                } else {
                    p.future = new CompletableFuture<>();
                    watched++;
                }
            }
            return p.future;
        } finally {
            lock.unlock();
        }
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
                addInFlight(p);
                into[count++] = p;
                bytes += p.size;
                unsentBytes -= p.size;
            }
            return count;
        } finally {
            lock.unlock();
        }
    }

    /** Under the lock: {@code p} is written on the carrier; it takes the next position. */
    private void addInFlight(Pending p) {
        if (flightCount == flight.length) {
            growFlight();
        }
        int at = flightHead + flightCount & flight.length - 1;
        flight[at] = p;
        flightSizes[at] = p.size;
        flightData[at] = p.data;
        flightCount++;
        p.position = ++written;
    }

    private void growFlight() {
        int n = flight.length;
        Pending[] f = new Pending[n * 2];
        int[] sizes = new int[n * 2];
        boolean[] lanes = new boolean[n * 2];
        for (int i = 0; i < flightCount; i++) {
            int at = flightHead + i & n - 1;
            f[i] = flight[at];
            sizes[i] = flightSizes[at];
            lanes[i] = flightData[at];
        }
        flight = f;
        flightSizes = sizes;
        flightData = lanes;
        flightHead = 0;
    }

    /**
     * Releases the {@code count} oldest messages in flight on {@code link} and completes the futures asked
     * for them. An ACK from a link that no longer carries the queue releases nothing: its messages were put
     * back.
     */
    void acknowledge(Link link, long count) {
        List<Pending> done = null;
        lock.lock();
        try {
            if (link != carrier) {
                return;
            }
            int n = (int) Math.min(count, flightCount);
            int mask = flight.length - 1;
            for (int i = 0; i < n; i++) {
                int at = flightHead + i & mask;
                int size = flightSizes[at];
                allBytes -= size;
                if (flightData[at]) {
                    dataBytes -= size;
                    dataMessages--;
                }
                if (watched > 0 && flight[at].future != null) {
                    if (done == null) {
                        done = new ArrayList<>();
                    }
                    done.add(flight[at]);
                    watched--;
                }
                flight[at] = null;
            }
            flightHead = flightHead + n & mask;
            flightCount -= n;
            allMessages -= n;
            acknowledged += n;
            if (n > 0) {
                room.signalAll();
            }
        } finally {
            lock.unlock();
        }
        if (done != null) {
            for (Pending p : done) {
                p.future.complete(null);
            }
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
            while (flightCount > 0) {
                int at = flightHead + --flightCount & flight.length - 1;
                Pending p = flight[at];
                flight[at] = null;
                p.position = 0;
                resend.addFirst(p);
                unsentBytes += p.size;
            }
            written = acknowledged;
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

    /**
     * Fails every message with {@code reason} (their futures too, once the lock is released) and refuses new
     * ones.
     *
     * @return the messages failed, oldest first
     */
    List<Pending> close(EndpointException reason) {
        List<Pending> all = new ArrayList<>();
        List<Pending> watchedOnes;
        lock.lock();
        try {
            closedBy = reason;
            for (int i = 0; i < flightCount; i++) {
                int at = flightHead + i & flight.length - 1;
                all.add(flight[at]);
                flight[at] = null;
            }
            flightCount = 0;
            all.addAll(resend);
            all.addAll(control);
            all.addAll(data);
            resend.clear();
            control.clear();
            data.clear();
            dataBytes = 0;
            dataMessages = 0;
            allBytes = 0;
            allMessages = 0;
            unsentBytes = 0;
            watchedOnes = fail(all, reason);
            room.signalAll();
        } finally {
            lock.unlock();
        }
        completeFailed(watchedOnes);
        return all;
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
