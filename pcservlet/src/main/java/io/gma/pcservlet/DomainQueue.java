package io.gma.pcservlet;

import io.gma.wire.Message;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.BooleanSupplier;

/**
 * The outbound send queue for one destination domain (protocol.md section 6): messages waiting for a POST,
 * and the batches being posted, oldest first, each staying until the destination accepts or refuses it.
 *
 * <pre>
 *   add -&gt; [ waiting ... ] -&gt; nextBatch -&gt; [ batches in flight ] -&gt; done, the oldest (200, 4xx)
 *                 ^                                                    |
 *                 +------------ goBack: all of them, in order ---------+  (429, 503, 409, failure)
 * </pre>
 *
 * Bounded by bytes and messages of its own, and by a byte total shared by every queue of the PC servlet; the
 * batches in flight count until they are done. When one is kept, it and every batch after it go back to the
 * front, in their order, and are posted again from there (go back N): a retry never overtakes a later message
 * of its sender, and each sender's order holds across domains; the destination takes batches in flight in the
 * order they were made ({@link StreamOrder}).
 *
 * <p>Endpoints the destination said are full ({@code X-Gma-Full} on a 429) are held back until its
 * Retry-After: their messages stay, in order, while batches of the others go. From that 429 until a batch with
 * their messages is done with (accepted), an endpoint's messages may fill a quarter of the queue at most (its
 * share), so that one stuck endpoint does not fill it for the rest: an offer past its share is
 * {@link Offer#ENDPOINT_FULL}, which the router answers for that message alone, while the others flow.
 */
final class DomainQueue {
    /** What became of a message offered. */
    enum Offer {
        TAKEN,
        /** No room now, in the queue or in all queues together: nothing more for the domain fits. */
        FULL,
        /**
         * No room now for its destination endpoint alone: the destination said it is full and its messages here
         * fill their share. Others fit.
         */
        ENDPOINT_FULL,
        /** Retired or drained: it takes nothing more, and a new queue serves the domain. */
        RETIRED
    }

    final String domain;
    private final long maxBytes;
    private final int maxMessages;
    /** Bytes in every queue of this PC servlet together. */
    private final AtomicLong total;
    private final long maxTotal;
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition arrived = lock.newCondition();
    private final ArrayDeque<Queued> waiting = new ArrayDeque<>();
    /** The batches being posted, oldest first. */
    private final ArrayDeque<List<Queued>> inFlight = new ArrayDeque<>();
    private long bytes;
    private int messages;
    /** Drained for good: nothing more is handed out. */
    private boolean closed;
    /** Stopping: batches go without lingering. */
    private boolean hurry;
    /** Empty and idle, taken out of service: its forwarder ends, and a new queue serves the domain. */
    private boolean retired;
    private long lastActive = System.nanoTime();
    /** Endpoints held back, and until when (System.nanoTime). */
    private final Map<String, Long> heldUntil = new HashMap<>();
    /** Data messages and bytes queued (waiting or in flight) per destination endpoint. */
    private final Map<String, long[]> queuedFor = new HashMap<>();
    /**
     * Endpoints held to their share: named full by the destination, and none of their messages accepted since.
     * At most the endpoints with messages here (a 429 names only those of its batch).
     */
    private final Set<String> capped = new HashSet<>();

    DomainQueue(String domain, long maxBytes, int maxMessages, AtomicLong total, long maxTotal) {
        this.domain = domain;
        this.maxBytes = maxBytes;
        this.maxMessages = maxMessages;
        this.total = total;
        this.maxTotal = maxTotal;
    }

    /**
     * Queues a message if it fits, or whatever the bounds with {@code force} (the caller checked
     * {@link #hasRoom} for a whole batch, or must not wait, for an ERROR). An empty queue takes any message.
     *
     * @return TAKEN, FULL, ENDPOINT_FULL, or RETIRED when the queue was retired or drained, and took nothing
     */
    Offer offer(Queued m, boolean force) {
        lock.lock();
        try {
            if (retired || closed) {
                return Offer.RETIRED;
            }
            boolean data = !m.control();
            boolean heldNow = data && held(m.to(), System.nanoTime());
            if (!force) {
                Offer fits = fits(m.message());
                if (fits != Offer.TAKEN) {
                    return fits;
                }
            }
            if (data) {
                long[] share = queuedFor.computeIfAbsent(m.to(), k -> new long[2]);
                share[0]++;
                share[1] += m.encodedLength();
            }
            waiting.addLast(m);
            lastActive = System.nanoTime();
            bytes += m.encodedLength();
            messages++;
            total.addAndGet(m.encodedLength());
            if (!heldNow) {
                arrived.signal(); // a held endpoint's message makes no batch: the forwarder need not look
            }
            return Offer.TAKEN;
        } finally {
            lock.unlock();
        }
    }

    /**
     * What {@link #offer} without force would do with {@code m} now: TAKEN (within the bounds, and within its
     * endpoint's share if capped; also when the queue is retired, as the offer then goes to a new queue), FULL
     * or ENDPOINT_FULL.
     */
    Offer wouldTake(Message m) {
        lock.lock();
        try {
            if (retired || closed) {
                return Offer.TAKEN; // the offer goes to a new queue
            }
            return fits(m);
        } finally {
            lock.unlock();
        }
    }

    /**
     * Under the lock: whether {@code m} fits the bounds (an empty queue takes any message), and, its endpoint
     * being capped, that endpoint's share, so that the rest of the domain keeps its room. Control messages have
     * no share: answers to a full endpoint never wait behind its data.
     */
    private Offer fits(Message m) {
        if (messages > 0 && !withinBounds(m.encodedLength(), 1)) {
            return Offer.FULL;
        }
        long[] share = !m.command().isControl() && capped.contains(m.to()) ? queuedFor.get(m.to()) : null;
        return share == null || share[0] + 1 <= maxMessages / 4 && share[1] + m.encodedLength() <= maxBytes / 4
                ? Offer.TAKEN : Offer.ENDPOINT_FULL;
    }

    /**
     * Why {@code endpoint}'s message was refused ({@link Offer#ENDPOINT_FULL}): a sentence that names it, what it
     * holds here, and the limits.
     */
    String describeShare(String endpoint) {
        lock.lock();
        try {
            long[] share = queuedFor.getOrDefault(endpoint, new long[2]);
            return endpoint + " is full: domain " + domain + " said so (429, X-Gma-Full), and the queue for " + domain
                    + " holds " + share[0] + " of its messages, " + share[1] + " bytes, its share until it takes"
                    + " them (a quarter of maxQueuedMessages " + maxMessages + " and of maxQueuedBytes " + maxBytes
                    + ")";
        } finally {
            lock.unlock();
        }
    }

    /** Whether {@code n} more messages of {@code size} bytes in all fit now; an empty queue takes any. */
    boolean hasRoom(long size, int n) {
        lock.lock();
        try {
            return messages == 0 || withinBounds(size, n);
        } finally {
            lock.unlock();
        }
    }

    /** The queue's fill and limits, for an error text. */
    String describe() {
        lock.lock();
        try {
            return "the queue for domain " + domain + " holds " + messages + " messages, " + bytes + " bytes (limits "
                    + maxMessages + ", " + maxBytes + "; all queues " + total.get() + " of " + maxTotal + " bytes)";
        } finally {
            lock.unlock();
        }
    }

    private boolean withinBounds(long size, int n) {
        return bytes + size <= maxBytes && messages + n <= maxMessages && total.get() + size <= maxTotal;
    }

    /**
     * Waits for a message, then lingers up to {@code lingerNanos} for more, and returns the next batch, now in
     * flight after the others: up to {@code maxBatchBytes} of waiting messages (always at least one). Empty once
     * drained, when nothing came within {@code idleNanos}, or as soon as {@code news} holds (checked at each
     * {@link #wake}).
     */
    List<Queued> nextBatch(long maxBatchBytes, long lingerNanos, long idleNanos, BooleanSupplier news)
            throws InterruptedException {
        lock.lock();
        try {
            long left = idleNanos;
            long now = System.nanoTime();
            long wait;
            while ((wait = untilSendable(now)) != 0 && !closed) {
                if (left <= 0 || news.getAsBoolean()) {
                    return List.of();
                }
                long slept = Math.min(left, wait);
                arrived.awaitNanos(slept);
                long after = System.nanoTime();
                left -= after - now;
                now = after;
            }
            long lingerLeft = lingerNanos;
            while (!hurry && !closed && waitingBytes() < maxBatchBytes && lingerLeft > 0 && !news.getAsBoolean()) {
                lingerLeft = arrived.awaitNanos(lingerLeft);
            }
            if (closed) {
                return List.of();
            }
            now = System.nanoTime();
            List<Queued> batch = new ArrayList<>();
            long size = 0;
            for (Iterator<Queued> it = waiting.iterator(); it.hasNext();) {
                Queued m = it.next();
                if (!m.control() && held(m.to(), now)) {
                    continue; // stays, in its place; answers to it are never held back
                }
                if (!batch.isEmpty() && size + m.encodedLength() > maxBatchBytes) {
                    break;
                }
                it.remove();
                size += m.encodedLength();
                batch.add(m);
            }
            inFlight.addLast(batch);
            return batch;
        } finally {
            lock.unlock();
        }
    }

    /**
     * How long until a waiting message may go (0: one may now; an endpoint held back delays its own), or
     * Long.MAX_VALUE when none waits.
     */
    long sendableIn() {
        lock.lock();
        try {
            return untilSendable(System.nanoTime());
        } finally {
            lock.unlock();
        }
    }

    /** The oldest batch in flight, or null when none is. */
    List<Queued> oldestInFlight() {
        lock.lock();
        try {
            return inFlight.peekFirst();
        } finally {
            lock.unlock();
        }
    }

    /** Wakes {@link #nextBatch} to look at its {@code news}. */
    void wake() {
        lock.lock();
        try {
            arrived.signalAll();
        } finally {
            lock.unlock();
        }
    }

    /** Under the lock: every batch in flight back to the front of the waiting messages, in their order. */
    private void allBack() {
        for (Iterator<List<Queued>> newest = inFlight.descendingIterator(); newest.hasNext();) {
            List<Queued> batch = newest.next();
            for (int i = batch.size() - 1; i >= 0; i--) {
                waiting.addFirst(batch.get(i));
            }
        }
        inFlight.clear();
    }

    /** The oldest batch in flight was kept (429, 503, 409, no answer): it and all after it wait again (go back N). */
    void goBack() {
        lock.lock();
        try {
            allBack();
            arrived.signalAll();
        } finally {
            lock.unlock();
        }
    }

    /** The newest batch in flight was not posted: it goes back to the front of the waiting messages. */
    void giveBackNewest() {
        lock.lock();
        try {
            List<Queued> batch = inFlight.pollLast();
            if (batch == null) {
                return; // drained meanwhile
            }
            for (int i = batch.size() - 1; i >= 0; i--) {
                waiting.addFirst(batch.get(i));
            }
            arrived.signalAll();
        } finally {
            lock.unlock();
        }
    }

    /**
     * Under the lock: 0 when a waiting message is for an endpoint not held back; else how long to wait for
     * one (until the first hold ends, or a long while when nothing waits).
     */
    private long untilSendable(long now) {
        long first = Long.MAX_VALUE;
        for (Queued m : waiting) {
            Long until = m.control() ? null : heldUntil.get(m.to());
            if (until == null || until - now <= 0) {
                return 0;
            }
            first = Math.min(first, until - now);
        }
        return first;
    }

    /** Under the lock: whether {@code endpoint} is held back now (an expired hold is forgotten). */
    private boolean held(String endpoint, long now) {
        Long until = heldUntil.get(endpoint);
        if (until == null) {
            return false;
        }
        if (until - now <= 0) {
            heldUntil.remove(endpoint);
            return false;
        }
        return true;
    }

    /**
     * The destination is full for these endpoints: they are held back for {@code nanos}, and the batches in
     * flight go back to the front, in their order, for the next batches to be made of the others.
     */
    void holdBack(Collection<String> endpoints, long nanos) {
        lock.lock();
        try {
            long now = System.nanoTime();
            heldUntil.values().removeIf(t -> t - now <= 0);
            long until = now + nanos;
            for (String e : endpoints) {
                heldUntil.put(e, until);
                capped.add(e);
            }
            allBack();
            arrived.signalAll();
        } finally {
            lock.unlock();
        }
    }

    private long waitingBytes() {
        return bytes - inFlightBytes();
    }

    private long inFlightBytes() {
        long b = 0;
        for (List<Queued> batch : inFlight) {
            b += bytesOf(batch);
        }
        return b;
    }

    /** The bytes of {@code batch}'s messages, encoded. */
    static long bytesOf(List<Queued> batch) {
        long b = 0;
        for (Queued m : batch) {
            b += m.encodedLength();
        }
        return b;
    }

    /**
     * Takes the queue out of service if it is empty and has been idle {@code idleNanos}: nothing can be added
     * to it afterwards (the caller makes a new one).
     */
    boolean retireIfIdle(long idleNanos) {
        lock.lock();
        try {
            if (messages == 0 && System.nanoTime() - lastActive > idleNanos) {
                retired = true;
            }
            return retired;
        } finally {
            lock.unlock();
        }
    }

    /** The oldest batch in flight is done with (accepted, or refused for good): its room is free; the batch. */
    List<Queued> done() {
        lock.lock();
        try {
            List<Queued> finished = inFlight.pollFirst();
            if (finished == null) {
                return List.of(); // drained meanwhile: what was in flight went with it
            }
            long b = bytesOf(finished);
            bytes -= b;
            messages -= finished.size();
            total.addAndGet(-b);
            for (Queued m : finished) {
                if (!m.control()) {
                    capped.remove(m.to()); // the destination took (or refused for good) its messages: room again
                }
                long[] share = m.control() ? null : queuedFor.get(m.to());
                if (share != null && --share[0] <= 0) {
                    queuedFor.remove(m.to());
                } else if (share != null) {
                    share[1] -= m.encodedLength();
                }
            }
            return finished;
        } finally {
            lock.unlock();
        }
    }

    /** Closes the queue and takes out everything in it, the batch in flight first. */
    List<Queued> drain() {
        lock.lock();
        try {
            closed = true;
            List<Queued> all = new ArrayList<>();
            inFlight.forEach(all::addAll);
            all.addAll(waiting);
            waiting.clear();
            inFlight.clear();
            queuedFor.clear();
            capped.clear();
            total.addAndGet(-bytes);
            bytes = 0;
            messages = 0;
            arrived.signalAll();
            return all;
        } finally {
            lock.unlock();
        }
    }

    /** The PC servlet is stopping: batches go at once, without lingering for more. */
    void hurry() {
        lock.lock();
        try {
            hurry = true;
            heldUntil.clear(); // stopping: what was held goes now, within the drain
            capped.clear();
            arrived.signalAll();
        } finally {
            lock.unlock();
        }
    }

    /** Whether every one of {@code queues} is empty. */
    static boolean allEmpty(Iterable<DomainQueue> queues) {
        for (DomainQueue q : queues) {
            if (!q.isEmpty()) {
                return false;
            }
        }
        return true;
    }

    boolean isEmpty() {
        lock.lock();
        try {
            return messages == 0;
        } finally {
            lock.unlock();
        }
    }

    long bytes() {
        lock.lock();
        try {
            return bytes;
        } finally {
            lock.unlock();
        }
    }

    int messages() {
        lock.lock();
        try {
            return messages;
        } finally {
            lock.unlock();
        }
    }
}
