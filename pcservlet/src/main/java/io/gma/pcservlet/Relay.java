package io.gma.pcservlet;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;

/**
 * What waits for the outbound-only domains that this PC servlet relays for (they registered with {@code via}
 * this domain): one bounded queue each, taken by their long polls (protocol.md section 6).
 *
 * <pre>
 *   GET /gma/v1/messages?domain=D&amp;wait=30&amp;ack=17
 *     batch 17 is dropped (D has it), then:
 *     a batch not acknowledged yet   -&gt; 200 with it again, X-Gma-Batch: its id
 *     else messages within the wait   -&gt; 200 with a new batch, X-Gma-Batch: a new id
 *     else                            -&gt; 204
 * </pre>
 *
 * A batch stays in its queue, counted against the bounds, until a later poll names it in {@code ack}.
 */
final class Relay {
    /** A batch handed to a poll, and its id. */
    record Batch(long id, List<Queued> messages) {
    }

    private final Settings settings;
    private final AtomicLong total;
    private final Map<String, DomainQueue> queues = new ConcurrentHashMap<>();
    private final Map<String, Long> handedOut = new ConcurrentHashMap<>();
    private final Map<String, ReentrantLock> turns = new ConcurrentHashMap<>();
    /** Batch ids start at a random point, so that an ack meant for an earlier run of this relay drops nothing. */
    private final AtomicLong nextId = new AtomicLong(ThreadLocalRandom.current().nextLong(1L << 40));
    private final Runnable roomFreed;
    private final Spooling spooling;

    Relay(Settings settings, AtomicLong total, Runnable roomFreed, Spooling spooling) {
        this.spooling = spooling;
        this.settings = settings;
        this.total = total;
        this.roomFreed = roomFreed;
    }

    DomainQueue queue(String domain) {
        return queues.computeIfAbsent(domain, d -> new DomainQueue(d, settings.maxQueuedBytes(),
                settings.maxQueuedMessages(), total, settings.maxTotalBytes()));
    }

    /** Queues messages for a relayed domain, whatever the bounds (the caller checked them, or must not wait). */
    void addAll(String domain, List<Queued> messages) {
        DomainQueue q = queue(domain);
        messages.forEach(m -> q.offer(m, true)); // relay queues are never retired
    }

    /** The least {@code max} a poll may ask for (bytes of a batch): a PC servlet's smallest maxBatchBytes. */
    static final long MIN_POLL_BYTES = 1024;

    /**
     * A poll from {@code domain}: drops the batch it acknowledges, then answers the batch to (re)deliver,
     * waiting up to {@code waitNanos} for one; null when none came. The batch holds at most {@code maxBytes}
     * (the poller's maxBatchBytes, which may be less than this side's) but for its last message; one handed out
     * larger and not acknowledged is made again to fit.
     */
    Batch poll(String domain, long ack, long waitNanos, long maxBytes) throws InterruptedException {
        DomainQueue q = queue(domain);
        // one poll of a domain at a time, so that a batch and its id stay together; another waits its turn
        // only as long as it asked to wait, then gets nothing (a restarted poller is not stuck behind its own)
        ReentrantLock turn = turns.computeIfAbsent(domain, d -> new ReentrantLock());
        long start = System.nanoTime();
        if (!turn.tryLock(waitNanos, TimeUnit.NANOSECONDS)) {
            return null;
        }
        try {
            Long out = handedOut.get(domain);
            if (out != null && out == ack) {
                handedOut.remove(domain);
                spooling.ackAll(q.done());
                roomFreed.run();
            }
            // the batch handed out and not acknowledged goes again, under its id; else the next one
            long limit = Math.min(settings.maxBatchBytes(), maxBytes);
            List<Queued> batch = q.oldestInFlight();
            if (batch != null && batch.size() > 1 && DomainQueue.bytesOf(batch) > limit) {
                q.giveBackNewest(); // the poller reads less than this (it says so, or restarted with a lower limit)
                batch = null;
            }
            if (batch == null) {
                batch = q.nextBatch(limit, 0, Math.max(0, waitNanos - (System.nanoTime() - start)), () -> false);
            }
            if (batch.isEmpty()) {
                return null;
            }
            return new Batch(handedOut.computeIfAbsent(domain, d -> nextId.incrementAndGet()), batch);
        } finally {
            turn.unlock();
        }
    }

    Map<String, DomainQueue> queues() {
        return queues;
    }

    /** Whether every relay queue is empty (each relayed domain acknowledged all it was handed). */
    boolean isEmpty() {
        return DomainQueue.allEmpty(queues.values());
    }

    /** Empties every queue for good, polls waiting returning at once; what was in them. */
    List<Queued> drain() {
        List<Queued> left = new ArrayList<>();
        for (DomainQueue q : queues.values()) {
            left.addAll(q.drain());
        }
        return left;
    }
}
