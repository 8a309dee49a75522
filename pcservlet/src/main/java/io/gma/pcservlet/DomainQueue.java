package io.gma.pcservlet;

import io.gma.wire.Message;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The outbound send queue for one destination domain (PROTOCOL.md section 6): messages waiting for a POST,
 * and the batch being posted, which stays until the destination accepts or refuses it.
 *
 * <pre>
 *   add -&gt; [ waiting ... ] -&gt; nextBatch -&gt; [ batch in flight ] -&gt; done (200, 4xx)
 *                                                                -&gt; kept  (429, 503, failure)
 * </pre>
 *
 * Bounded by bytes and messages of its own, and by a byte total shared by every queue of the PC servlet; the
 * batch in flight counts until it is done. One batch at a time, so that a retry never overtakes the batch
 * after it: each sender's order holds across domains.
 */
final class DomainQueue {
    final String domain;
    private final long maxBytes;
    private final int maxMessages;
    /** Bytes in every queue of this PC servlet together. */
    private final AtomicLong total;
    private final long maxTotal;
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition arrived = lock.newCondition();
    private final ArrayDeque<Message> waiting = new ArrayDeque<>();
    private List<Message> inFlight = List.of();
    private long bytes;
    private int messages;
    /** Drained for good: nothing more is handed out. */
    private boolean closed;
    /** Stopping: batches go without lingering. */
    private boolean hurry;
    /** Empty and idle, taken out of service: its forwarder ends, and a new queue serves the domain. */
    private boolean retired;
    private long lastActive = System.nanoTime();

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
     * @return whether it was queued; null when the queue was retired, and took nothing
     */
    Boolean offer(Message m, boolean force) {
        lock.lock();
        try {
            if (retired) {
                return null;
            }
            if (!force && messages > 0 && !withinBounds(m.encodedLength(), 1)) {
                return false;
            }
            waiting.addLast(m);
            lastActive = System.nanoTime();
            bytes += m.encodedLength();
            messages++;
            total.addAndGet(m.encodedLength());
            arrived.signal();
            return true;
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
     * Waits for a message, then lingers up to {@code lingerNanos} for more, and returns the next batch: the
     * one in flight again if it was kept, else up to {@code maxBatchBytes} of waiting messages (always at
     * least one). Empty once drained, or when nothing came within {@code idleNanos}.
     */
    List<Message> nextBatch(long maxBatchBytes, long lingerNanos, long idleNanos) throws InterruptedException {
        lock.lock();
        try {
            if (!inFlight.isEmpty()) {
                return inFlight;
            }
            long left = idleNanos;
            while (waiting.isEmpty() && !closed) {
                if (left <= 0) {
                    return List.of();
                }
                left = arrived.awaitNanos(left);
            }
            long lingerLeft = lingerNanos;
            while (!hurry && !closed && waitingBytes() < maxBatchBytes && lingerLeft > 0) {
                lingerLeft = arrived.awaitNanos(lingerLeft);
            }
            if (closed) {
                return List.of();
            }
            List<Message> batch = new ArrayList<>();
            long size = 0;
            while (!waiting.isEmpty()
                    && (batch.isEmpty() || size + waiting.peekFirst().encodedLength() <= maxBatchBytes)) {
                Message m = waiting.pollFirst();
                size += m.encodedLength();
                batch.add(m);
            }
            inFlight = batch;
            return batch;
        } finally {
            lock.unlock();
        }
    }

    private long waitingBytes() {
        return bytes - inFlightBytes();
    }

    private long inFlightBytes() {
        long b = 0;
        for (Message m : inFlight) {
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

    /** The batch in flight is done with (accepted, or refused for good): its room is free. */
    void done() {
        lock.lock();
        try {
            long b = inFlightBytes();
            bytes -= b;
            messages -= inFlight.size();
            total.addAndGet(-b);
            inFlight = List.of();
        } finally {
            lock.unlock();
        }
    }

    /** Closes the queue and takes out everything in it, the batch in flight first. */
    List<Message> drain() {
        lock.lock();
        try {
            closed = true;
            List<Message> all = new ArrayList<>(inFlight);
            all.addAll(waiting);
            waiting.clear();
            inFlight = List.of();
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
            arrived.signalAll();
        } finally {
            lock.unlock();
        }
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
