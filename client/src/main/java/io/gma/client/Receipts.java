package io.gma.client;

import io.gma.internal.link.IoThreads;
import io.gma.internal.link.Peer;
import io.gma.wire.Command;
import io.gma.wire.ErrorCode;
import io.gma.wire.Message;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * End-to-end acknowledgement ({@link EndpointBuilder#receipts}): what the application sends in the data lane
 * (DATA, SUBSCRIBE, application commands; a publish's message to each subscriber) goes with REPLY_EXPECTED, which
 * asks its destination endpoint for a receipt, an empty REPLY with the message's sequence, once it took the
 * message (the {@link Inbox} sends them). This part awaits the receipts and completes each message's
 * {@link Sent#delivered()}: with the receipt, with the ERROR that came back instead, or with TIMEOUT.
 *
 * <p>Only the destination may answer for a message, or with an ERROR this endpoint's own PC servlet, the rule of
 * requests ({@link Requests#mayAnswer}); taking the receipt from the map is what makes it count once.
 *
 * <p>Bounded: at most maxAwaitedReceipts are awaited at once (a semaphore's permits, taken before a message is
 * numbered and given back when its receipt is no longer awaited); a send beyond them waits, fails or gives up
 * the oldest receipt, as the full-queue policy says. Each is awaited at most the timeout: one task on the
 * endpoint's timer fails the expired ones, the oldest first (the map is ordered by sequence, which is the order
 * of their deadlines, give or take the moments between two threads' sends), a quarter of the timeout apart.
 *
 * <p>Off (the default), a send goes straight to the {@link Outbox}: a field read and a branch, no allocation, no
 * task. Any thread; no lock of its own.
 */
final class Receipts {
    /** The default of maxAwaitedReceipts. */
    static final int DEFAULT_AWAITED = 65_536;
    /** The most maxAwaitedReceipts may be. */
    static final int MAX_AWAITED = 1 << 20;
    private static final Logger LOG = LoggerFactory.getLogger(Endpoint.class);
    private final String name;
    private final Outbox outbox;
    /** This domain's PC servlet, or null. */
    private final Peer uplink;
    private final Counters counters;
    private final FullQueuePolicy policy;
    private final long blockNanos;
    /** The builder's receipts timeout; 0 when off. */
    private final long timeoutNanos;
    /** The receipts awaited, by sequence: the oldest first. Null when off. */
    private final ConcurrentSkipListMap<Long, Awaited> awaited;
    /** Room for one more receipt awaited; null when off. */
    private final Semaphore room;
    /** maxAwaitedReceipts: the permits of {@link #room}. */
    private final int maxAwaited;

    /** A message whose receipt is awaited; as an {@link Requests.Answer}, the one answered, now taken. */
    record Awaited(String to, long sequence, long deadline, CompletableFuture<Void> delivered)
            implements Requests.Answer {
    }

    /** @param name the endpoint's, for the log */
    Receipts(String name, EndpointBuilder<?> config, Outbox outbox, Peer uplink, Counters counters,
            ScheduledExecutorService timer) {
        this.name = name;
        this.outbox = outbox;
        this.uplink = uplink;
        this.counters = counters;
        this.policy = config.policy;
        this.blockNanos = config.blockNanos();
        if (config.receipts == null) {
            timeoutNanos = 0;
            awaited = null;
            room = null;
            maxAwaited = 0;
            return;
        }
        timeoutNanos = config.receipts.toNanos();
        awaited = new ConcurrentSkipListMap<>();
        maxAwaited = config.maxAwaitedReceipts != 0 ? config.maxAwaitedReceipts : DEFAULT_AWAITED;
        room = new Semaphore(maxAwaited);
        long sweep = Math.max(TimeUnit.MILLISECONDS.toNanos(5), Math.min(timeoutNanos / 4,
                TimeUnit.SECONDS.toNanos(1)));
        timer.scheduleWithFixedDelay(this::expire, sweep, sweep, TimeUnit.NANOSECONDS);
    }

    /** Whether this endpoint asks for receipts. */
    boolean on() {
        return awaited != null;
    }

    /**
     * Sends a message the application originates, in the data lane: as it is when receipts are off, else with
     * REPLY_EXPECTED, its receipt awaited.
     *
     * @throws EndpointException as {@link Outbox#send(String, Command, byte[])}; QUEUE_FULL also when too many
     *     receipts are awaited and the policy does not wait, or waited blockTimeout in vain
     */
    Sent send(String to, Command command, byte[] data) throws EndpointException {
        if (awaited == null) {
            return outbox.send(to, command, data);
        }
        makeRoom(to);
        long seq;
        try {
            seq = outbox.nextSequence();
        } catch (RuntimeException ex) { // numbers could not be reserved on disk: the permit is not kept
            room.release();
            throw ex;
        }
        Awaited a = new Awaited(to, seq, System.nanoTime() + timeoutNanos, new CompletableFuture<>());
        // awaited before it is queued: the receipt may come back before send returns
        awaited.put(seq, a);
        Pending p;
        try {
            p = outbox.send(to, command, data, seq, a.delivered());
        } catch (EndpointException | RuntimeException ex) {
            forget(a);
            throw ex;
        }
        // what the queue fails (dropped, no route, refused, closed) never reaches the destination: nor its receipt
        p.acknowledged().whenComplete((ok, ex) -> {
            if (ex != null) {
                fail(a, ex instanceof CompletionException && ex.getCause() != null ? ex.getCause() : ex, null);
            }
        });
        return p;
    }

    /** A message refused before it was queued, as a Sent whose futures both failed with {@code why}. */
    Sent refused(EndpointException why) {
        return awaited == null ? Pending.refused(why) : new Pending.WithReceipt(why);
    }

    /** Takes a permit for one more receipt awaited, as the full-queue policy says. */
    private void makeRoom(String to) throws EndpointException {
        if (room.tryAcquire()) {
            return;
        }
        FullQueuePolicy p = policy == FullQueuePolicy.BLOCK && IoThreads.isCurrent() ? FullQueuePolicy.FAIL : policy;
        switch (p) {
            case DROP_OLDEST -> {
                do {
                    Map.Entry<Long, Awaited> oldest = awaited.firstEntry();
                    if (oldest == null || !fail(oldest.getValue(), new EndpointException(ErrorCode.QUEUE_FULL,
                            "the receipt of " + Long.toUnsignedString(oldest.getKey()) + " is no longer awaited under"
                            + " DROP_OLDEST: " + maxAwaited + " receipts were awaited, the most allowed"),
                            counters.receiptsGivenUp)) {
                        Thread.onSpinWait(); // another send holds the permit between taking and recording it
                    }
                } while (!room.tryAcquire());
            }
            case BLOCK -> {
                counters.receiptWaits.increment();
                boolean got;
                try {
                    got = room.tryAcquire(blockNanos, TimeUnit.NANOSECONDS);
                } catch (InterruptedException ex) {
                    Thread.currentThread().interrupt();
                    throw new EndpointException(ErrorCode.QUEUE_FULL, "interrupted while waiting for room among"
                            + " the receipts awaited, to send to " + to, ex);
                }
                if (!got) {
                    throw full(to);
                }
            }
            default -> throw full(to);
        }
    }

    private EndpointException full(String to) {
        counters.receiptRejections.increment();
        return new EndpointException(ErrorCode.QUEUE_FULL, "not sent to " + to + ": " + maxAwaited + " receipts are"
                + " awaited, the most maxAwaitedReceipts allows");
    }

    /**
     * What {@code m}, a REPLY or ERROR that came from {@code from}, is to the receipts awaited: the receipt it
     * answers, now taken (the caller completes it); REFUSED when it came from another than the message's
     * destination (logged, counted); NOT_AWAITED when no receipt with its sequence is awaited.
     */
    Requests.Answer answered(Message m, Peer from) {
        Awaited a = awaited == null ? null : awaited.get(m.sequence());
        if (a == null) {
            return Requests.Unmatched.NOT_AWAITED;
        }
        if (!Requests.mayAnswer(a.to(), m, from, uplink)) {
            counters.refusedAnswers.increment();
            LOG.info("{}: refused {} {} from {}: message {} went to {}, and only it sends its receipt", name,
                    m.command(), Long.toUnsignedString(m.sequence()), m.from(), Long.toUnsignedString(m.sequence()),
                    a.to());
            return Requests.Unmatched.REFUSED;
        }
        return forget(a) ? a : Requests.Unmatched.NOT_AWAITED;
    }

    /** Fails the receipts awaited from {@code peerName} with {@code why}: the registry says it is gone. */
    void failTo(String peerName, EndpointException why) {
        if (awaited != null) {
            awaited.values().forEach(a -> {
                if (a.to().equals(peerName)) {
                    fail(a, why, null);
                }
            });
        }
    }

    /** Fails every receipt awaited with {@code why}. */
    void failAll(EndpointException why) {
        if (awaited != null) {
            awaited.values().forEach(a -> fail(a, why, null));
        }
    }

    /** How many receipts are awaited now. */
    int awaitedNow() {
        return awaited == null ? 0 : awaited.size();
    }

    /** On the timer: fails the receipts whose deadline passed, the oldest first. */
    private void expire() {
        long now = System.nanoTime();
        for (Map.Entry<Long, Awaited> e; (e = awaited.firstEntry()) != null && now - e.getValue().deadline() >= 0;) {
            Awaited a = e.getValue();
            fail(a, new EndpointException(ErrorCode.TIMEOUT, "no receipt from " + a.to() + " for message "
                    + Long.toUnsignedString(a.sequence()) + " within " + TimeUnit.NANOSECONDS.toMillis(timeoutNanos)
                    + " ms"), counters.receiptsTimedOut);
        }
    }

    /**
     * Whether {@code a} was awaited; it is not any more, {@code counter} (if any) counted it, and then its
     * delivered() failed with {@code why}: whoever the failure wakes sees the count.
     */
    private boolean fail(Awaited a, Throwable why, LongAdder counter) {
        if (!forget(a)) {
            return false;
        }
        if (counter != null) {
            counter.increment();
        }
        a.delivered().completeExceptionally(why);
        return true;
    }

    /** Whether {@code a} was awaited; it is not any more, and its room is free. Once per receipt. */
    private boolean forget(Awaited a) {
        if (!awaited.remove(a.sequence(), a)) {
            return false;
        }
        room.release();
        return true;
    }
}
