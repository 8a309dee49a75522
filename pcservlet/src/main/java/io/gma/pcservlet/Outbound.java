package io.gma.pcservlet;

import io.gma.wire.Message;
import io.gma.wire.Threads;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;

/**
 * What waits to be posted to other domains: a {@link DomainQueue} per destination domain, each emptied by a
 * {@link Forwarder} on a thread of its own. Both are made with the first message for the domain, and go when
 * the queue has been idle a while (a forwarder retires its queue), so that names from endpoints make no threads
 * without end; at most {@link #MAX_DOMAINS} at once.
 */
final class Outbound {
    /** Destination domains with a queue at once, at most: local endpoints cannot make threads without end. */
    static final int MAX_DOMAINS = 1024;

    /** What became of a message offered for a domain. */
    enum Offer {
        /** Queued. */
        TAKEN,
        /** Not queued: no room now. */
        FULL,
        /** Not queued: no room now for its destination endpoint, which said it is full; others fit. */
        ENDPOINT_FULL,
        /** Not queued: the queues were drained and closed for good. */
        CLOSED,
        /** Not queued: MAX_DOMAINS domains have queues already. */
        TOO_MANY_DOMAINS
    }

    private final String domain;
    private final Settings settings;
    /** Bytes in every queue of the PC servlet, relay queues included. */
    private final AtomicLong totalBytes;
    private final Function<DomainQueue, Forwarder> forwarders;
    private final Map<String, DomainQueue> queues = new ConcurrentHashMap<>();
    private final Map<DomainQueue, Running> running = new ConcurrentHashMap<>();
    private volatile boolean closed;

    /** @param forwarders makes the forwarder of a new queue (it runs on a thread of its own) */
    Outbound(Settings settings, AtomicLong totalBytes, Function<DomainQueue, Forwarder> forwarders) {
        this.domain = settings.domain();
        this.settings = settings;
        this.totalBytes = totalBytes;
        this.forwarders = forwarders;
    }

    /** Queues a message for domain {@code d}: if it fits, or whatever the bounds with {@code force}. */
    Offer offer(String d, Queued m, boolean force) {
        while (true) {
            if (closed) {
                return Offer.CLOSED;
            }
            DomainQueue q = queue(d);
            if (q == null) {
                return Offer.TOO_MANY_DOMAINS;
            }
            DomainQueue.Offer taken = q.offer(m, force);
            if (taken != DomainQueue.Offer.RETIRED) {
                return switch (taken) {
                    case TAKEN -> Offer.TAKEN;
                    case ENDPOINT_FULL -> Offer.ENDPOINT_FULL;
                    default -> Offer.FULL;
                };
            }
            queues.remove(d, q); // retired (or drained) meanwhile: a new queue takes over
        }
    }

    /** The queue for domain {@code d}, made with its forwarder if need be; null past MAX_DOMAINS. */
    private DomainQueue queue(String d) {
        DomainQueue q = queues.get(d);
        if (q != null || queues.size() >= MAX_DOMAINS) {
            return q;
        }
        return queues.computeIfAbsent(d, k -> {
            DomainQueue created = new DomainQueue(k, settings.maxQueuedBytes(), settings.maxQueuedMessages(),
                    totalBytes, settings.maxTotalBytes());
            Forwarder f = forwarders.apply(created);
            Thread t = Threads.daemon("gma-pc-" + domain + "-to-" + k, f);
            running.put(created, new Running(f, t));
            t.start();
            return created;
        });
    }

    /**
     * What domain {@code d}'s queue would do with {@code m} now, as {@link #offer} without force would: TAKEN (a
     * domain with no queue yet takes anything), FULL or ENDPOINT_FULL.
     */
    DomainQueue.Offer wouldTake(String d, Message m) {
        DomainQueue q = queues.get(d);
        return q == null ? DomainQueue.Offer.TAKEN : q.wouldTake(m);
    }

    /** Why a message for {@code endpoint} in domain {@code d} was {@link Offer#ENDPOINT_FULL}: a sentence. */
    String describeShare(String d, String endpoint) {
        DomainQueue q = queues.get(d);
        return q == null ? endpoint + " is full" : q.describeShare(endpoint);
    }

    /** Null when every share fits its domain's queue, else which one does not. */
    String fits(Map<String, List<Queued>> wanted) {
        for (Map.Entry<String, List<Queued>> e : wanted.entrySet()) {
            String full = fits(queues.get(e.getKey()), e.getValue());
            if (full != null) {
                return full;
            }
        }
        return null;
    }

    /** Null when the messages fit {@code q} (or there is no queue yet), else a sentence saying why not. */
    static String fits(DomainQueue q, List<Queued> messages) {
        long size = messages.stream().mapToLong(Queued::encodedLength).sum();
        if (q != null && !q.hasRoom(size, messages.size())) {
            return q.describe() + "; " + messages.size() + " more, " + size + " bytes, came";
        }
        return null;
    }

    /** A forwarder's queue went idle and was retired: both go, until the domain has traffic again. */
    void retired(DomainQueue q) {
        queues.remove(q.domain, q);
        running.remove(q);
    }

    boolean isClosed() {
        return closed;
    }

    Map<String, DomainQueue> queues() {
        return queues;
    }

    /** Stopping: batches go at once, without lingering, and endpoints held back go too. */
    void hurry() {
        queues.values().forEach(DomainQueue::hurry);
    }

    boolean isEmpty() {
        return DomainQueue.allEmpty(queues.values());
    }

    /** Closes every queue for good and stops the forwarders; the messages left in the queues. */
    List<Queued> close() {
        closed = true;
        List<Queued> left = new ArrayList<>();
        for (DomainQueue q : queues.values()) {
            left.addAll(q.drain());
        }
        for (Running r : running.values()) {
            r.forwarder.stop();
            r.thread.interrupt();
        }
        return left;
    }

    /** A queue's forwarder and the thread it runs on. */
    private record Running(Forwarder forwarder, Thread thread) {
    }
}
