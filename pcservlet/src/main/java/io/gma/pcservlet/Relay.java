package io.gma.pcservlet;

import io.gma.wire.Threads;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

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
 *
 * <p>No thread waits with a poll: a poll that cannot be answered at once is kept with its domain's
 * ({@link Polls}), and one thread of the relay, the watcher, answers it when messages come for its domain or
 * its wait is over; the answer is written by the servlet on a container thread.
 */
final class Relay {
    private static final Logger LOG = LoggerFactory.getLogger(Relay.class);
    /** A batch handed to a poll, and its id. */
    record Batch(long id, List<Queued> messages) {
    }

    /** How many polls of one domain may wait at once; past that a poll is refused (503). */
    static final int MAX_WAITING_POLLS = 8;

    private final Settings settings;
    private final AtomicLong total;
    private final Map<String, DomainQueue> queues = new ConcurrentHashMap<>();
    private final Map<String, Polls> polls = new ConcurrentHashMap<>();
    /** Batch ids start at a random point, so that an ack meant for an earlier run of this relay drops nothing. */
    private final AtomicLong nextId = new AtomicLong(ThreadLocalRandom.current().nextLong(1L << 40));
    private final Runnable roomFreed;
    private final Spooling spooling;
    /** Wakes the watcher: a poll waits, or a waiting poll's queue got messages. */
    private final ReentrantLock newsLock = new ReentrantLock();
    private final Condition news = newsLock.newCondition();
    /** Guarded by newsLock: how many times there was news, so that the watcher misses none. */
    private long newsCount;
    /** Guarded by newsLock: drained; every poll is answered at once. */
    private boolean drained;
    /** Guarded by newsLock: the thread that answers waiting polls, started with the first. */
    private Thread watcher;

    /**
     * One domain's polls, oldest first. The first has the turn (so that a batch and its id stay together): it
     * takes the next batch; the others wait behind it, each only as long as it asked to wait (a restarted poller
     * is not stuck behind its own). Guarded by its monitor.
     */
    private static final class Polls {
        final ArrayDeque<Poll> waiting = new ArrayDeque<>();
        /** The id of the batch handed out and not acknowledged yet, or null. */
        Long handedOut;
        /** Whether the first poll took its turn: its ack was applied. */
        boolean turnTaken;
        /**
         * When its polls must be looked at again at the latest (System.nanoTime; Long.MAX_VALUE: none waits),
         * read without the monitor by {@link #addAll} and the watcher.
         */
        volatile long nextLook = Long.MAX_VALUE;

        boolean anyWaits() {
            return nextLook != Long.MAX_VALUE;
        }
        /** Messages came for a waiting poll: the watcher looks at once. */
        volatile boolean arrived;
    }

    /** A poll: its ack, when it gives up (System.nanoTime), the most bytes it reads, and what answers it. */
    private record Poll(long ack, long deadline, long maxBytes, Consumer<Batch> answer) {
    }

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
        Polls p = polls.get(domain);
        if (p != null && p.anyWaits()) {
            p.arrived = true;
            tell();
        }
    }

    /** The least {@code max} a poll may ask for (bytes of a batch): a PC servlet's smallest maxBatchBytes. */
    static final long MIN_POLL_BYTES = 1024;

    /**
     * A poll from {@code domain}: drops the batch it acknowledges, then is answered the batch to (re)deliver, as
     * soon as there is one within {@code waitNanos}, or null when none came. The batch holds at most
     * {@code maxBytes} (the poller's maxBatchBytes, which may be less than this side's) but for its last message;
     * one handed out larger and not acknowledged is made again to fit.
     *
     * <p>No thread waits: {@code answer} is called once, at once on this thread or later on the relay's, and must
     * not block (a container thread writes the answer).
     *
     * @return null; or, when {@link #MAX_WAITING_POLLS} of the domain wait already, why this one is refused (it
     *     is not answered)
     */
    String poll(String domain, long ack, long waitNanos, long maxBytes, Consumer<Batch> answer) {
        Polls p = polls.computeIfAbsent(domain, d -> new Polls());
        List<Runnable> answers = new ArrayList<>(1);
        synchronized (p) {
            if (p.waiting.size() >= MAX_WAITING_POLLS) {
                return MAX_WAITING_POLLS + " polls of domain " + domain + " wait already (the most a domain may"
                        + " have): one poller a domain is enough";
            }
            p.waiting.addLast(new Poll(ack, System.nanoTime() + waitNanos, maxBytes, answer));
            serve(domain, p, System.nanoTime(), answers);
        }
        answers.forEach(Runnable::run);
        if (p.anyWaits()) {
            tell();
        }
        return null;
    }

    /**
     * Under {@code p}'s monitor: answers (through {@code answers}, run after the monitor is left) the first polls
     * with batches while there are any, and the polls past their time with nothing; when the rest must be
     * looked at again, at the latest (System.nanoTime; Long.MAX_VALUE when none waits).
     */
    private long serve(String domain, Polls p, long now, List<Runnable> answers) {
        boolean draining = isDrained();
        DomainQueue q = queue(domain);
        long next = Long.MAX_VALUE;
        while (!p.waiting.isEmpty()) {
            Poll first = p.waiting.peekFirst();
            if (!p.turnTaken) {
                p.turnTaken = true;
                if (p.handedOut != null && p.handedOut == first.ack()) {
                    p.handedOut = null;
                    spooling.ackAll(q.done());
                    roomFreed.run();
                }
            }
            List<Queued> batch = nextBatch(q, first.maxBytes());
            Batch b = null;
            if (!batch.isEmpty()) {
                if (p.handedOut == null) {
                    p.handedOut = nextId.incrementAndGet();
                }
                b = new Batch(p.handedOut, batch);
            } else if (!draining && first.deadline() - now > 0) {
                long sendable = q.sendableIn();
                next = sendable == Long.MAX_VALUE ? next : now + sendable;
                break;
            }
            p.waiting.removeFirst();
            p.turnTaken = false;
            Batch given = b;
            answers.add(() -> first.answer().accept(given));
        }
        for (Iterator<Poll> it = p.waiting.iterator(); it.hasNext();) {
            Poll w = it.next();
            if (w != p.waiting.peekFirst() && (draining || w.deadline() - now <= 0)) {
                it.remove(); // waited behind the first as long as it asked to
                answers.add(() -> w.answer().accept(null));
            } else {
                next = Math.min(next, w.deadline());
            }
        }
        p.nextLook = next;
        return next;
    }

    /** The batch handed out and not acknowledged goes again, under its id; else the next one, if any waits. */
    private List<Queued> nextBatch(DomainQueue q, long maxBytes) {
        long limit = Math.min(settings.maxBatchBytes(), maxBytes);
        List<Queued> batch = q.oldestInFlight();
        if (batch != null && batch.size() > 1 && DomainQueue.bytesOf(batch) > limit) {
            q.giveBackNewest(); // the poller reads less than this (it says so, or restarted with a lower limit)
            batch = null;
        }
        if (batch != null) {
            return batch;
        }
        try {
            return q.nextBatch(limit, 0, 0, () -> false); // waits for nothing
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return List.of();
        }
    }

    /** There is news for the watcher; starts it the first time. */
    private void tell() {
        newsLock.lock();
        try {
            newsCount++;
            news.signal();
            if (watcher == null && !drained) {
                watcher = Threads.daemon("gma-pc-" + settings.domain() + "-polls", this::watch);
                watcher.start();
            }
        } finally {
            newsLock.unlock();
        }
    }

    private boolean isDrained() {
        newsLock.lock();
        try {
            return drained;
        } finally {
            newsLock.unlock();
        }
    }

    /** The watcher: answers waiting polls when their queue has a batch or their time is up, until drained. */
    private void watch() {
        while (true) {
            long seen;
            newsLock.lock();
            try {
                seen = newsCount;
            } finally {
                newsLock.unlock();
            }
            long now = System.nanoTime();
            long next = Long.MAX_VALUE;
            for (Map.Entry<String, Polls> e : polls.entrySet()) {
                Polls p = e.getValue();
                // only the domains with news or a time come: a message for one does not look at all the others
                long look = p.nextLook;
                if (!p.arrived && (look == Long.MAX_VALUE || look - now > 0)) {
                    next = Math.min(next, look);
                    continue;
                }
                p.arrived = false;
                List<Runnable> answers = new ArrayList<>(0);
                try {
                    synchronized (p) {
                        next = Math.min(next, serve(e.getKey(), p, now, answers));
                    }
                } catch (RuntimeException bug) {
                    // the other domains' polls, and this one's next look, must not end with it
                    LOG.warn("{}: answering the polls of {} failed", settings.domain(), e.getKey(), bug);
                    p.nextLook = now + TimeUnit.SECONDS.toNanos(1);
                    next = Math.min(next, p.nextLook);
                }
                answers.forEach(Runnable::run);
            }
            newsLock.lock();
            try {
                while (newsCount == seen) {
                    if (drained) {
                        return;
                    }
                    long left = next == Long.MAX_VALUE ? Long.MAX_VALUE : next - System.nanoTime();
                    if (left <= 0) {
                        break;
                    }
                    if (left == Long.MAX_VALUE) {
                        news.await();
                    } else {
                        news.awaitNanos(left);
                    }
                }
            } catch (InterruptedException e) {
                return; // nobody interrupts it: drain() ends it
            } finally {
                newsLock.unlock();
            }
        }
    }

    Map<String, DomainQueue> queues() {
        return queues;
    }

    /** Whether every relay queue is empty (each relayed domain acknowledged all it was handed). */
    boolean isEmpty() {
        return DomainQueue.allEmpty(queues.values());
    }

    /** Empties every queue for good, waiting polls answered at once with nothing; what was in them. */
    List<Queued> drain() {
        newsLock.lock();
        try {
            drained = true;
            news.signal();
        } finally {
            newsLock.unlock();
        }
        List<Queued> left = new ArrayList<>();
        for (DomainQueue q : queues.values()) {
            left.addAll(q.drain());
        }
        for (Map.Entry<String, Polls> e : polls.entrySet()) {
            List<Runnable> answers = new ArrayList<>(0);
            synchronized (e.getValue()) {
                serve(e.getKey(), e.getValue(), System.nanoTime(), answers);
            }
            answers.forEach(Runnable::run);
        }
        return left;
    }
}
