package io.gma.client;

import io.gma.internal.link.IoThreads;
import io.gma.internal.spool.Fsync;
import io.gma.internal.spool.Spool;
import io.gma.internal.spool.SpoolException;
import io.gma.internal.spool.SpoolRecord;
import io.gma.internal.spool.SpoolSettings;
import io.gma.internal.spool.SpoolStats;
import io.gma.wire.ErrorCode;
import io.gma.wire.Message;
import io.gma.wire.ProtocolException;
import io.gma.wire.WireCodec;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * An endpoint's outbox on disk ({@link EndpointBuilder#outbox}): every message it originates and queues for a
 * peer (but REQUESTs, which nobody awaits after a crash) is appended here, its packed bytes as they go on the
 * wire, before {@code send} returns, and acknowledged here once the first hop acknowledged it, or it failed (its
 * {@link Sent} says so once that acknowledgement is written, {@link #track}). After a crash, {@link #open} finds
 * what was not acknowledged, and the endpoint queues it again, in the order appended, before any new send: the
 * same bytes, so the same sequence numbers, which the receivers' dedup drops if they had them.
 *
 * <p>On the spool module ({@code io.gma.internal.spool}): segments, a CRC32C per record, group commit, crash-safe
 * deletion, one process per directory. Bounded in bytes: a full outbox pushes back as a full send queue does,
 * under the endpoint's policy (BLOCK waits for the spool to free room, FAIL throws QUEUE_FULL).
 *
 * <p>Any thread. Its lock guards only the wait for room; the spool has its own.
 */
final class OutboxSpool implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(Endpoint.class);
    /** The spool's lane byte: the outbox has one queue in the spool's eyes, its records' bytes say the peer. */
    private static final byte LANE = 0;
    /** What a spool record adds to the message's bytes, rounded up: its frame and its fixed fields. */
    private static final int RECORD_OVERHEAD = 64;
    private static final WireCodec CODEC = WireCodec.withMaxMessageBytes(Message.MAX_DATA_BYTES);

    /** A message found in the outbox at start: its record, and its bytes decoded for their destination. */
    record Recovered(long record, Message message, byte[] packed) {
    }

    private final Path dir;
    private final long maxBytes;
    private final boolean forceOnSend;
    private final Spool spool;
    private final SequenceNumbers sequence;
    private final List<Recovered> recovered;
    private final long unreadable;
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition room = lock.newCondition();
    /** Guarded by lock: how many times the spool freed room, so that a waiter misses no signal. */
    private long roomFreed;
    /** Failures of kept messages whose marks were asked for, to tell their senders once written ({@link #tell}). */
    private final ConcurrentLinkedQueue<Failure> toTell = new ConcurrentLinkedQueue<>();
    /** Whether a task on the waiter tells them now. */
    private final AtomicBoolean telling = new AtomicBoolean();
    /** Where the marks of failures are waited for: the endpoint's connecting threads. */
    private volatile Executor waiter;
    /** The endpoint is closing: what fails from now on (SHUTTING_DOWN) stays for the next start. */
    private volatile boolean closing;
    private final AtomicLong recoveredFailed = new AtomicLong();

    private OutboxSpool(Path dir, long maxBytes, boolean forceOnSend, Spool spool, SequenceNumbers sequence,
            List<Recovered> recovered, long unreadable) {
        this.dir = dir;
        this.maxBytes = maxBytes;
        this.forceOnSend = forceOnSend;
        this.spool = spool;
        this.sequence = sequence;
        this.recovered = recovered;
        this.unreadable = unreadable;
    }

    /**
     * Opens the outbox in {@code dir} (made if need be) for this process alone, reads what it holds, and reserves
     * sequence numbers above every one it used.
     *
     * @param name the endpoint's exact name: every message held must be from it
     * @throws IllegalStateException when another process has the directory (naming it and the process), or the
     *     directory holds messages of another endpoint
     * @throws EndpointException INTERNAL when the directory or a file in it cannot be read or written
     */
    static OutboxSpool open(Path dir, long maxBytes, boolean forceOnSend, String name) throws EndpointException {
        List<SpoolRecord> found = new ArrayList<>();
        Spool spool;
        OutboxSpool[] self = new OutboxSpool[1];
        try {
            spool = Spool.open(dir, SpoolSettings.of(Fsync.BATCH, maxBytes), found::add, () -> {
                if (self[0] != null) {
                    self[0].freed();
                }
            });
        } catch (SpoolException locked) {
            throw new IllegalStateException("outbox " + dir + ": " + locked.getMessage() + "; give each endpoint an"
                    + " outbox directory of its own", locked);
        } catch (IOException ex) {
            throw new EndpointException(ErrorCode.INTERNAL, "outbox " + dir + " cannot be opened: " + ex.getMessage(),
                    ex);
        }
        try {
            List<Recovered> back = new ArrayList<>(found.size());
            long unreadable = 0;
            long highest = 0;
            for (SpoolRecord r : found) {
                Message m;
                try {
                    m = CODEC.decode(r.payload());
                } catch (ProtocolException e) {
                    // intact bytes (the CRC said so) that are not a message: written by something else; never sent
                    LOG.error("outbox {}: record {} is not a GMA message ({}); skipped", dir, r.seq(), e.getMessage());
                    spool.ack(r.seq());
                    unreadable++;
                    continue;
                }
                if (!m.from().equals(name)) {
                    throw new IllegalStateException("outbox " + dir + " holds messages from \"" + m.from()
                            + "\", but this endpoint is \"" + name + "\": an outbox goes with one exact name, whose"
                            + " sequence numbers its messages carry; give this endpoint a directory of its own");
                }
                highest = Math.max(highest, m.sequence());
                back.add(new Recovered(r.seq(), m, r.payload()));
            }
            SequenceNumbers sequence = SequenceNumbers.reserved(dir, highest + 1);
            OutboxSpool s = new OutboxSpool(dir, maxBytes, forceOnSend, spool, sequence, back, unreadable);
            self[0] = s;
            if (!back.isEmpty()) {
                LOG.info("{}: outbox {} holds {} message(s) not acknowledged before; they go out again first", name,
                        dir, back.size());
            }
            return s;
        } catch (IOException ex) {
            spool.close();
            throw new EndpointException(ErrorCode.INTERNAL, "outbox " + dir + ": " + ex.getMessage(), ex);
        } catch (RuntimeException ex) {
            spool.close();
            throw ex;
        }
    }

    /** The directory, as given. */
    Path dir() {
        return dir;
    }

    /** The endpoint's sequence numbers, reserved in this outbox's directory. */
    SequenceNumbers sequence() {
        return sequence;
    }

    /** What was found at start, oldest first, to be queued again; handed out once (the list is emptied). */
    List<Recovered> takeRecovered() {
        List<Recovered> all = new ArrayList<>(recovered);
        recovered.clear();
        return all;
    }

    /**
     * Appends a message's packed bytes; its record number. It reaches the operating system before this returns
     * (a crash of this process loses nothing), and the disk within about a millisecond (the spool's group
     * commit), or before this returns with forceOnSend.
     *
     * @param block wait up to {@code blockNanos} for room (BLOCK); false: refuse at once (FAIL)
     * @throws EndpointException QUEUE_FULL when the outbox stays full (counted in {@code counters}); TIMEOUT when
     *     forceOnSend could not force it within blockNanos; INTERNAL when the spool failed
     */
    long append(byte[] packed, boolean block, long blockNanos, Counters counters) throws EndpointException {
        if ((long) packed.length + RECORD_OVERHEAD > maxBytes) {
            counters.outboxRejected.increment();
            throw new EndpointException(ErrorCode.QUEUE_FULL, "message of " + packed.length + " bytes exceeds"
                    + " maxOutboxBytes " + maxBytes + " of the outbox " + dir);
        }
        long deadline = 0;
        boolean waited = false;
        while (true) {
            long freedBefore = freedCount();
            try {
                // written to the file before send returns (the spool's own appends wait in memory for the
                // committer): a crash of this process must not lose what send said it took
                long record = spool.appendWritten(System.currentTimeMillis(), LANE, "", packed);
                if (forceOnSend) {
                    awaitDurable(record, blockNanos);
                }
                return record;
            } catch (SpoolException e) {
                if (!e.full()) {
                    throw new EndpointException(ErrorCode.INTERNAL, "outbox " + dir + ": " + e.getMessage(), e);
                }
                if (!block) {
                    counters.outboxRejected.increment();
                    throw full(e);
                }
                if (!waited) {
                    waited = true;
                    counters.outboxWaits.increment();
                    deadline = System.nanoTime() + blockNanos;
                }
                if (!awaitRoom(freedBefore, deadline)) {
                    if (closing) {
                        throw new EndpointException(ErrorCode.SHUTTING_DOWN, "the endpoint closed while this send"
                                + " waited for room in its outbox " + dir + "; the message was not kept");
                    }
                    counters.outboxRejected.increment();
                    throw full(e);
                }
            }
        }
    }

    private void awaitDurable(long record, long blockNanos) throws EndpointException {
        boolean durable;
        try {
            durable = spool.awaitSafe(record, blockNanos, TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            durable = false;
        }
        if (!durable) {
            forget(record); // the sender is told it failed: it must not go out after a restart
            throw new EndpointException(ErrorCode.TIMEOUT, "outbox " + dir + " did not force the message to disk"
                    + " within blockTimeout " + TimeUnit.NANOSECONDS.toMillis(blockNanos) + " ms");
        }
    }

    private EndpointException full(SpoolException e) {
        return new EndpointException(ErrorCode.QUEUE_FULL, "outbox " + dir + " is full (maxOutboxBytes " + maxBytes
                + "): " + e.getMessage(), e);
    }

    private long freedCount() {
        lock.lock();
        try {
            return roomFreed;
        } finally {
            lock.unlock();
        }
    }

    /** Waits until the spool frees room after {@code freedBefore}, the deadline, or the close; whether it did. */
    private boolean awaitRoom(long freedBefore, long deadline) {
        lock.lock();
        try {
            while (roomFreed == freedBefore) {
                if (closing) {
                    return false;
                }
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    return false;
                }
                room.awaitNanos(left);
            }
            return true;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        } finally {
            lock.unlock();
        }
    }

    /** The spool deleted acknowledged segments: whoever waits for room tries again. */
    private void freed() {
        lock.lock();
        try {
            roomFreed++;
            room.signalAll();
        } finally {
            lock.unlock();
        }
    }

    /**
     * Acknowledges {@code record} once {@code p} is acknowledged by the first hop, or failed; not when it failed
     * because the endpoint closed (SHUTTING_DOWN): then it stays for the next start. The sender of a
     * {@link Pending.Kept} learns of any other failure (NO_ROUTE, a refusal) once the record's mark is written, not
     * before: it may send the message again, and a crash the moment after must not send it a second time on the
     * next start. No thread waits for that but one on the waiter ({@link #tellOn}), for the marks of every failure
     * asked for meanwhile ({@link #tell}): a link that closes with thousands of messages queued costs one wait.
     *
     * @param p a {@link Pending.Kept} of this run, whose future this completes; or a message of an earlier run
     * @param recoveredFrom for a message of an earlier run, whose sender cannot be told: its destination, for
     *     the log; null for a message sent by this run
     */
    void track(Pending p, long record, String recoveredFrom) {
        CompletableFuture<Void> told = p instanceof Pending.Kept k ? k.told() : null;
        p.queued().whenComplete((ok, failed) -> {
            boolean handedOn = false;
            try {
                if (failed == null) {
                    spool.ack(record);
                } else if (closing && failed instanceof EndpointException e && e.code() == ErrorCode.SHUTTING_DOWN) {
                    return; // stays for the next start, which sends it; told below
                } else if (told != null) {
                    toTell.add(new Failure(spool.ackWritten(record), told, failed));
                    handedOn = true;
                    startTelling();
                } else {
                    spool.ack(record);
                    long n = recoveredFailed.incrementAndGet();
                    if (n <= 10 || n % 1000 == 0) {
                        LOG.warn("outbox {}: a message of an earlier run to {} failed and is dropped ({} so far): {}",
                                dir, recoveredFrom, n, failed.getMessage());
                    }
                }
            } finally {
                if (told != null && !handedOn) {
                    complete(told, failed); // whatever went wrong here, the sender is told
                }
            }
        });
    }

    /** The failures of kept messages are told from {@code waiter} ({@link #track}); set before the first send. */
    void tellOn(Executor waiter) {
        this.waiter = waiter;
    }

    /** A failure whose sender is told once the acknowledgements up to {@code ticket} are written. */
    private record Failure(long ticket, CompletableFuture<Void> told, Throwable why) {
    }

    private static void complete(CompletableFuture<Void> told, Throwable failed) {
        if (failed == null) {
            told.complete(null);
        } else {
            told.completeExceptionally(failed);
        }
    }

    /**
     * Has one task on the waiter tell the failures queued, unless one is at it. When the endpoint is closing
     * and its threads are gone, they wait for {@link #close}, which tells them once the spool wrote their marks.
     */
    private void startTelling() {
        if (!telling.compareAndSet(false, true)) {
            return;
        }
        try {
            waiter.execute(this::tell);
        } catch (RejectedExecutionException closed) {
            telling.set(false);
        }
    }

    /**
     * On the waiter: waits once (up to {@link #FORGET_MILLIS}) for the marks of the failures queued so far, and
     * tells their senders; again, until none is left.
     */
    private void tell() {
        boolean interrupted = false;
        boolean ended = false;
        try {
            while (true) {
                List<Failure> batch = new ArrayList<>();
                long last = -1;
                for (Failure f; (f = toTell.poll()) != null;) {
                    batch.add(f);
                    last = Math.max(last, f.ticket);
                }
                if (!batch.isEmpty()) {
                    long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(FORGET_MILLIS);
                    boolean written;
                    while (true) {
                        try {
                            written = spool.awaitAcks(last, Math.max(0, deadline - System.nanoTime()),
                                    TimeUnit.NANOSECONDS);
                            break;
                        } catch (InterruptedException e) {
                            interrupted = true; // the endpoint closes: its close writes the marks, waited for here
                        }
                    }
                    if (!written) {
                        LOG.warn("outbox {}: the records of {} sends that failed were not marked done within {} ms:"
                                + " if this process ends before they are, the next start sends them", dir,
                                batch.size(), FORGET_MILLIS);
                    }
                    batch.forEach(f -> f.told.completeExceptionally(f.why));
                    continue;
                }
                telling.set(false);
                if (toTell.isEmpty() || !telling.compareAndSet(false, true)) {
                    ended = true;
                    return;
                }
            }
        } finally {
            if (!ended) {
                telling.set(false); // an Error above: the next failure starts another teller
            }
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** Acknowledges a record whose send failed before it was queued: its sender was told by the exception. */
    void dropped(long record) {
        forget(record);
    }

    /** How long a send that throws waits for its record's acknowledgement to be written. */
    static final long FORGET_MILLIS = 1000;

    /**
     * Acknowledges a record whose sender is about to be told it failed, and waits (up to {@link #FORGET_MILLIS})
     * until that is written: the sender may send it again, and a crash right after must not send it a second
     * time on the next start.
     */
    private void forget(long record) {
        if (IoThreads.isCurrent()) {
            spool.ackWritten(record); // a link's thread does not wait for the disk: its mark is written now
            return;
        }
        boolean written;
        try {
            written = spool.ackWritten(record, FORGET_MILLIS, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            written = false;
        }
        if (!written) {
            LOG.warn("outbox {}: the record of a send that failed was not marked done within {} ms: if this"
                    + " process ends before it is, the next start sends it", dir, FORGET_MILLIS);
        }
    }

    /**
     * The endpoint closes: what its queues fail from now on stays here, for the next start, and a send waiting for
     * room gives up.
     */
    void closing() {
        lock.lock();
        try {
            closing = true;
            room.signalAll();
        } finally {
            lock.unlock();
        }
    }

    /** The spool's counters and fill, with the records skipped at start for not being messages. */
    SpoolStats stats() {
        return spool.stats();
    }

    /** Damaged runs the spool skipped at start, and records that were not messages. */
    long damaged(SpoolStats s) {
        return s.damaged() + unreadable;
    }

    /** Messages found at start and queued again: the spool's recovered records but those that were not messages. */
    long recovered(SpoolStats s) {
        return s.recovered() - unreadable;
    }

    /** Writes what waits and closes; what is not acknowledged stays for the next start. */
    @Override
    public void close() {
        spool.close(); // writes the marks asked for
        for (Failure f; (f = toTell.poll()) != null;) {
            f.told.completeExceptionally(f.why); // failures the endpoint's threads, gone, did not tell
        }
    }
}
