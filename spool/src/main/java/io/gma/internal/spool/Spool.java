package io.gma.internal.spool;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileLock;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What an owner took from the previous hop and must not lose until the next hop has it, on disk: the PC servlet
 * appends each message before it acknowledges it, and acknowledges the record here once the next hop
 * acknowledged the message. After a crash, {@link #open} hands the owner every record that was appended and not
 * acknowledged, in the order appended, and carries on.
 *
 * <pre>
 *   dir/spool.lock                       held by the one process that uses the directory
 *   dir/00000000000000000001.seg         records 1, 2, 3 ... each framed with a CRC32C (RecordFormat)
 *   dir/00000000000000004711.seg         the segment being appended to, from record 4711 on
 *   dir/00000000000000000001.ack         the sequence numbers acknowledged
 * </pre>
 *
 * As Kafka's log and JetStream's file store do: segments are append-only, rolled at a size, and deleted whole once
 * each of their records is acknowledged; a record is durable once a force of its file has returned, and with
 * {@link Fsync#BATCH} one force covers every record appended while the one before it ran (group commit, on a
 * committer thread of its own). Acknowledgements go to files of their own, so that a data file is never written
 * twice. Every deletion is safe whichever way a crash cuts it: a data file goes before the acknowledgements that
 * name its records, and those only once that deletion is on disk; a record acknowledged but not deleted, or whose
 * acknowledgement was lost, comes back once more, and the next hop drops it as a duplicate.
 *
 * <p>Bounded: appends past {@link SpoolSettings#maxBytes} of segments on disk are refused with a {@link SpoolException}
 * that says the spool is {@link SpoolException#full() full}, as a full disk is, so that the owner pushes back as
 * for a full queue. A damaged record (a torn write, a flipped bit) is skipped and counted, never handed out.
 *
 * <p>One lock, and one class of a little under 500 lines around it: appending, acknowledging, the durable mark
 * and the committer's rounds are all steps on the same state (the segments, their fill, what waits to be forced,
 * written or deleted); the files are {@link Segment} and {@link AckLog}, reading them back {@link Recovery}.
 */
public final class Spool implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(Spool.class);
    /**
     * Told each time the committer passes a point where a crash must lose nothing ("forced", "segmentsDeleted"):
     * a crash test in this package halts the process there, as a kill -9 at that moment would. Nothing else sets
     * it.
     */
    static volatile Consumer<String> crashPoints = point -> { };

    private final Path dir;
    private final SpoolSettings settings;
    private final FileLock dirLock;
    private final ReentrantLock lock = new ReentrantLock();
    /** The committer has work: records to force, acknowledgements to write, segments to delete, or closing. */
    private final Condition work = lock.newCondition();
    private final Condition durableMoved = lock.newCondition();
    /** The data files, oldest first; the last is the one appended to. */
    private final List<Segment> segments = new ArrayList<>();
    private final AckLog ackLog;
    private final ArrayDeque<Waiter> waiters = new ArrayDeque<>();
    private long nextSeq;
    private long diskBytes;
    private long liveRecords;
    private long appendedSeq;
    private volatile long durableSeq;
    private long[] pendingAcks = new long[256];
    private int pendingAckCount;
    private boolean deletable;
    /** Writing acknowledgements failed (a full disk): they wait until then (System.nanoTime) to be tried again. */
    private long ackRetryAt;
    private boolean ackRetrying;
    private long ackFailedLogAt;
    private boolean closed;
    /** A force failed: what was appended since may not be on disk, so nothing more is taken. */
    private IOException broken;
    private final Thread committer;
    private final LongAdder appended = new LongAdder();
    private final LongAdder acknowledged = new LongAdder();
    private final LongAdder forces = new LongAdder();
    private final LongAdder refusedFull = new LongAdder();
    private final long recovered;
    private final long damaged;
    private final long torn;
    /** Told when deleted segments freed room. */
    private final Runnable roomFreed;

    /** Something to run once record {@code seq} is durable. */
    private record Waiter(long seq, Runnable action) {
    }

    private Spool(Path dir, SpoolSettings settings, FileLock dirLock, Recovery.Result found, Runnable roomFreed) {
        this.roomFreed = roomFreed;
        this.dir = dir;
        this.settings = settings;
        this.dirLock = dirLock;
        this.ackLog = found.ackLog();
        this.recovered = found.recovered();
        this.damaged = found.damaged();
        this.torn = found.torn();
        this.committer = new Thread(this::commitLoop, "gma-spool-" + dir.getFileName());
        committer.setDaemon(true);
    }

    /**
     * Opens the spool in {@code dir} (made if need be) for this process alone, and hands {@code live} every
     * record in it that was not acknowledged, in the order appended, before it returns; they stay in the spool
     * until acknowledged, as if just appended.
     *
     * @throws SpoolException when another process has the directory (the sentence names it and the process)
     * @throws IOException when the directory or a file in it cannot be read or written
     */
    public static Spool open(Path dir, SpoolSettings settings, Consumer<SpoolRecord> live) throws IOException {
        return open(dir, settings, live, () -> { });
    }

    /**
     * As {@link #open(Path, SpoolSettings, Consumer)}; {@code roomFreed} runs, on the committer's thread, each time
     * acknowledged segments were deleted, so that an owner holding messages back for a full spool can try again.
     */
    public static Spool open(Path dir, SpoolSettings settings, Consumer<SpoolRecord> live, Runnable roomFreed)
            throws IOException {
        Files.createDirectories(dir);
        FileLock dirLock = Directory.lock(dir);
        try {
            Recovery.Result found = Recovery.run(dir, live);
            Spool s = new Spool(dir, settings, dirLock, found, roomFreed);
            s.segments.addAll(found.segments());
            s.nextSeq = found.nextSeq();
            s.appendedSeq = s.nextSeq - 1;
            s.durableSeq = s.appendedSeq;
            for (Segment seg : found.segments()) {
                s.diskBytes += seg.size();
                s.liveRecords += seg.live();
            }
            s.ensureActive();
            s.deletable = true; // the segment appended to before may hold nothing live any more
            s.committer.start();
            return s;
        } catch (IOException | RuntimeException e) {
            dirLock.release();
            dirLock.channel().close();
            throw e;
        }
    }

    /** The directory, as given. */
    public Path dir() {
        return dir;
    }

    /** Makes the segment to append to, unless the last one is empty and can be. Under the lock, or at start. */
    private void ensureActive() throws IOException {
        Segment last = segments.isEmpty() ? null : segments.get(segments.size() - 1);
        if (last != null && last.size() == 0 && last.firstSeq == nextSeq) {
            return;
        }
        segments.add(Segment.create(dir, nextSeq));
        Directory.force(dir);
    }

    /**
     * Appends a record; its sequence number, which {@link #whenDurable} and {@link #ack} take.
     *
     * @throws SpoolException {@link SpoolException#full() full}: the spool is at maxBytes, or the disk is full
     *     (nothing was appended; the caller pushes back); or the spool is closed or broken
     */
    public long append(long arrivalMillis, byte lane, String identity, byte[] payload) throws SpoolException {
        lock.lock();
        try {
            if (closed || broken != null) {
                throw new SpoolException(closed ? "the spool at " + dir + " is closed" : "the spool at " + dir
                        + " failed to force its files to disk (" + broken.getMessage() + "): it takes nothing"
                        + " more until the PC servlet is restarted", false, broken);
            }
            long seq = nextSeq;
            ByteBuffer record = RecordFormat.data(seq, arrivalMillis, lane, identity, payload);
            int size = record.remaining();
            Segment last = segments.get(segments.size() - 1);
            if (diskBytes + size > settings.maxBytes() && last.live() == 0 && last.size() > 0) {
                // the segment appended to holds nothing live: begin another, so that it can go
                roll();
                deletable = true;
                work.signal();
            }
            if (diskBytes + size > settings.maxBytes()) {
                refusedFull.increment();
                throw new SpoolException("the spool at " + dir + " holds " + diskBytes + " bytes on disk; "
                        + size + " more would pass maxSpoolBytes " + settings.maxBytes(), true, null);
            }
            Segment active = segments.get(segments.size() - 1);
            if (active.size() > 0 && active.size() + size > settings.segmentBytes()) {
                active = roll();
            }
            try {
                active.append(record, seq);
            } catch (IOException e) {
                if (active.live() == 0 && active.size() > 0) {
                    // a full disk, and the segment appended to holds nothing live: begin another, so that it can go
                    roll();
                    deletable = true;
                    work.signal();
                }
                refusedFull.increment();
                throw new SpoolException("the spool at " + dir + " could not write " + size + " bytes: "
                        + e.getMessage(), true, e);
            }
            nextSeq = seq + 1;
            appendedSeq = seq;
            diskBytes += size;
            liveRecords++;
            appended.increment();
            switch (settings.fsync()) {
                case ALWAYS -> forceNow(active, seq);
                case NEVER -> durableSeq = seq;
                default -> work.signal();
            }
            return seq;
        } finally {
            lock.unlock();
        }
    }

    /** Under the lock: closes the segment appended to and begins the next. */
    private Segment roll() throws SpoolException {
        try {
            Segment next = Segment.create(dir, nextSeq);
            Directory.force(dir);
            segments.add(next);
            return next;
        } catch (IOException e) {
            refusedFull.increment();
            throw new SpoolException("the spool at " + dir + " could not begin a new segment: " + e.getMessage(),
                    true, e);
        }
    }

    /** Under the lock, with {@link Fsync#ALWAYS}: the record is forced before the append returns. */
    private void forceNow(Segment active, long seq) throws SpoolException {
        try {
            active.force();
            forces.increment();
        } catch (IOException e) {
            broken = e;
            throw new SpoolException("the spool at " + dir + " failed to force record " + seq + " to disk: "
                    + e.getMessage(), false, e);
        }
        durableSeq = seq;
        durableMoved.signalAll();
    }

    /** Runs {@code action} once record {@code seq} is durable: at once if it is, else on the committer's thread. */
    public void whenDurable(long seq, Runnable action) {
        if (seq <= durableSeq) {
            action.run();
            return;
        }
        lock.lock();
        try {
            if (seq > durableSeq) {
                waiters.add(new Waiter(seq, action));
                return;
            }
        } finally {
            lock.unlock();
        }
        action.run();
    }

    /** Waits until record {@code seq} is durable; whether it is (false: the timeout passed, or the spool closed). */
    public boolean awaitDurable(long seq, long timeout, TimeUnit unit) throws InterruptedException {
        long left = unit.toNanos(timeout);
        lock.lock();
        try {
            while (seq > durableSeq) {
                if (left <= 0 || closed) {
                    return false;
                }
                left = durableMoved.awaitNanos(left);
            }
            return true;
        } finally {
            lock.unlock();
        }
    }

    /** The next hop has record {@code seq}: it need not go out again. Acknowledging it twice does nothing. */
    public void ack(long seq) {
        lock.lock();
        try {
            Segment s = segmentOf(seq);
            if (s == null || !s.ack(seq)) {
                return;
            }
            liveRecords--;
            acknowledged.increment();
            if (pendingAckCount == pendingAcks.length) {
                pendingAcks = Arrays.copyOf(pendingAcks, pendingAcks.length * 2);
            }
            pendingAcks[pendingAckCount++] = seq;
            if (s.live() == 0 && s != segments.get(segments.size() - 1)) {
                deletable = true;
            }
            work.signal();
        } finally {
            lock.unlock();
        }
    }

    /** Under the lock: the segment that holds {@code seq}, or null. */
    private Segment segmentOf(long seq) {
        int lo = 0;
        int hi = segments.size() - 1;
        while (lo <= hi) {
            int mid = (lo + hi) >>> 1;
            Segment s = segments.get(mid);
            if (seq < s.firstSeq) {
                hi = mid - 1;
            } else if (seq >= s.endSeq() && mid < segments.size() - 1) {
                lo = mid + 1;
            } else {
                return s.contains(seq) ? s : null;
            }
        }
        return null;
    }

    // ---------------------------------------------------------------- the committer

    private void commitLoop() {
        while (true) {
            long target;
            List<Segment> toForce = new ArrayList<>(2);
            long[] acks = null;
            int ackCount;
            long ackFileSeq;
            lock.lock();
            try {
                while (!closed && !hasWork()) {
                    if (ackRetrying && pendingAckCount > 0) {
                        try {
                            work.awaitNanos(Math.max(1, ackRetryAt - System.nanoTime()));
                        } catch (InterruptedException ignored) {
                            // nobody interrupts the committer; closing is what ends it
                        }
                    } else {
                        work.awaitUninterruptibly();
                    }
                }
                if (closed && !hasWork()) {
                    return;
                }
                target = appendedSeq;
                for (Segment s : segments) {
                    if (s.isDirty()) {
                        toForce.add(s);
                    }
                }
                ackCount = pendingAckCount;
                if (ackCount > 0) {
                    acks = Arrays.copyOf(pendingAcks, ackCount);
                    pendingAckCount = 0;
                }
                ackFileSeq = nextSeq;
            } finally {
                lock.unlock();
            }
            commit(target, toForce, acks, ackCount, ackFileSeq);
            deleteAcknowledged();
        }
    }

    /** Under the lock. */
    private boolean hasWork() {
        boolean toForce = settings.fsync() == Fsync.BATCH && appendedSeq > durableSeq && broken == null;
        boolean acks = pendingAckCount > 0 && (!ackRetrying || System.nanoTime() - ackRetryAt >= 0);
        return toForce || acks || deletable;
    }

    /** Forces the segments written to, writes (and forces) acknowledgements, then says what is durable. */
    private void commit(long target, List<Segment> toForce, long[] acks, int ackCount, long ackFileSeq) {
        try {
            if (settings.fsync() != Fsync.NEVER) {
                for (Segment s : toForce) {
                    s.force();
                    forces.increment();
                }
            }
            if (ackCount > 0) {
                writeAcks(acks, ackCount, ackFileSeq);
            }
        } catch (IOException e) {
            LOG.error("spool {}: forcing to disk failed; it takes nothing more: {}", dir, e.getMessage());
            lock.lock();
            try {
                broken = e;
                durableMoved.signalAll();
            } finally {
                lock.unlock();
            }
            return;
        }
        crashPoints.accept("forced");
        List<Runnable> ready = new ArrayList<>();
        lock.lock();
        try {
            if (settings.fsync() == Fsync.BATCH && target > durableSeq) {
                durableSeq = target;
                durableMoved.signalAll();
            }
            while (!waiters.isEmpty() && waiters.peekFirst().seq() <= durableSeq) {
                ready.add(waiters.pollFirst().action());
            }
            // a waiter may have come out of order (a lower seq after a higher one): look at the rest too
            if (!waiters.isEmpty()) {
                waiters.removeIf(w -> w.seq() <= durableSeq && ready.add(w.action()));
            }
        } finally {
            lock.unlock();
        }
        for (Runnable r : ready) {
            try {
                r.run();
            } catch (RuntimeException e) {
                LOG.error("spool {}: an action on a durable record failed", dir, e);
            }
        }
    }

    /**
     * Writes acknowledgements. One that cannot be written (a full disk, most likely) is not a broken spool: the
     * acknowledgements wait, and are tried again 100 ms later, after the deletions they allow have freed room (a
     * segment goes once all of its records are acknowledged here, written or not). Meanwhile a crash sends their
     * records once more, and the next hop drops them as duplicates.
     */
    private void writeAcks(long[] acks, int ackCount, long ackFileSeq) {
        try {
            ackLog.append(acks, ackCount, ackFileSeq);
            if (settings.fsync() != Fsync.NEVER) {
                ackLog.force();
                forces.increment();
            }
            if (ackRetrying) {
                lock.lock();
                try {
                    ackRetrying = false;
                } finally {
                    lock.unlock();
                }
                LOG.info("spool {}: acknowledgements are written again", dir);
            }
        } catch (IOException e) {
            lock.lock();
            try {
                int total = pendingAckCount + ackCount;
                long[] merged = new long[Math.max(total, pendingAcks.length)];
                System.arraycopy(acks, 0, merged, 0, ackCount);
                System.arraycopy(pendingAcks, 0, merged, ackCount, pendingAckCount);
                pendingAcks = merged;
                pendingAckCount = total;
                long now = System.nanoTime();
                ackRetryAt = now + TimeUnit.MILLISECONDS.toNanos(100);
                if (!ackRetrying || now - ackFailedLogAt > TimeUnit.SECONDS.toNanos(10)) {
                    ackFailedLogAt = now;
                    LOG.warn("spool {}: writing {} acknowledgements failed, kept to try again: {}", dir,
                            pendingAckCount, e.getMessage());
                }
                ackRetrying = true;
            } finally {
                lock.unlock();
            }
        }
    }

    /**
     * Deletes the segments whose every record is acknowledged (not the one appended to), makes that durable, and
     * only then the acknowledgement files that named nothing else.
     */
    private void deleteAcknowledged() {
        List<Segment> gone = new ArrayList<>();
        long lowestLive;
        lock.lock();
        try {
            if (!deletable) {
                return;
            }
            deletable = false;
            for (int i = 0; i < segments.size() - 1; i++) {
                Segment s = segments.get(i);
                if (s.live() == 0 && !s.isDirty()) {
                    gone.add(s);
                }
            }
            segments.removeAll(gone);
            for (Segment s : gone) {
                diskBytes -= s.size();
            }
            lowestLive = segments.get(0).firstSeq;
        } finally {
            lock.unlock();
        }
        try {
            for (Segment s : gone) {
                s.delete();
            }
            if (!gone.isEmpty()) {
                Directory.force(dir);
                crashPoints.accept("segmentsDeleted");
            }
            ackLog.deleteBelow(lowestLive);
            if (!gone.isEmpty()) {
                roomFreed.run();
            }
        } catch (IOException e) {
            LOG.warn("spool {}: deleting acknowledged files failed, will try again: {}", dir, e.getMessage());
        }
    }

    // ---------------------------------------------------------------- the rest

    public SpoolStats stats() {
        lock.lock();
        try {
            return new SpoolStats(liveRecords, diskBytes, segments.size(), appended.sum(), acknowledged.sum(),
                    recovered, forces.sum(), damaged, torn, refusedFull.sum());
        } finally {
            lock.unlock();
        }
    }

    /**
     * Writes what waits (acknowledgements), forces what was appended, and closes; what is not acknowledged stays
     * for the next {@link #open}.
     */
    @Override
    public void close() {
        lock.lock();
        try {
            if (closed) {
                return;
            }
            closed = true;
            work.signal();
            durableMoved.signalAll();
        } finally {
            lock.unlock();
        }
        try {
            committer.join(TimeUnit.SECONDS.toMillis(10));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        for (Segment s : segments) {
            try {
                if (settings.fsync() != Fsync.NEVER) {
                    s.force();
                }
            } catch (IOException e) {
                LOG.warn("spool {}: forcing {} at close failed: {}", dir, s.path, e.getMessage());
            }
            s.close();
        }
        ackLog.close();
        try {
            dirLock.release();
            dirLock.channel().close();
        } catch (IOException ignored) {
            // the process's end releases it anyway
        }
    }
}
