package io.gma.internal.spool;

import java.io.IOException;
import java.nio.channels.FileLock;
import java.nio.charset.StandardCharsets;
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
     * Past this many bytes appended and not yet written (the committer behind, or the disk refusing), an append
     * writes them itself, and is refused when it cannot: the memory a spool holds is bounded.
     */
    static final long MAX_UNWRITTEN_BYTES = 16L << 20;
    /**
     * Acknowledgements are written in batches ({@link #ACK_BATCH}), and forced at most this often. An
     * acknowledgement is not a promise to anyone: one lost makes its record go out once more, which the next hop
     * drops as a duplicate. Written, it survives a crash of the process; forced once per 100 ms, a power loss
     * replays at most that much, well inside the receivers' window of 65,536 numbers per sender.
     */
    static final long ACK_FORCE_NANOS = TimeUnit.MILLISECONDS.toNanos(100);
    /**
     * Acknowledgements wait to be written until this many have gathered, or the oldest has waited {@link
     * #ACK_DELAY_NANOS}, or the spool closes: they do not wake the committer one by one (a thread switch and a
     * write each, on the path of every message a PC servlet passes on), and one lost replays its record as any
     * unwritten one does.
     */
    static final int ACK_BATCH = 4096;
    static final long ACK_DELAY_NANOS = TimeUnit.MILLISECONDS.toNanos(10);
    /**
     * While next hops acknowledge records (one came within {@link #ACKS_FLOWING_NANOS}), records wait this long
     * after the oldest of them was appended, or until this many bytes of them gather, before the committer writes
     * them ({@link Fsync#BATCH}, {@link Fsync#NEVER}). A record acknowledged before it is written is never written
     * ({@link Segment#skipIfAcknowledged}), and its sender was answered as soon as the next hop had it: in a
     * stream whose next hop keeps up, the disk is hardly written. A full pipeline holds a sender's window of
     * messages (8 MiB by default) in its queues, which at 30 MB/s is this long. When nothing was acknowledged
     * lately (the next hop is slow, down, or there is none), records are written at once, as group commit does.
     */
    static final long WRITE_LINGER_NANOS = TimeUnit.MILLISECONDS.toNanos(300);
    static final long WRITE_LINGER_BYTES = 12L << 20;
    static final long ACKS_FLOWING_NANOS = TimeUnit.MILLISECONDS.toNanos(20);
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
    private final Condition safeMoved = lock.newCondition();
    /** The committer is writing chunks it took, outside the lock: nobody else writes until it is done. */
    private boolean writing;
    private final Condition chunksWritten = lock.newCondition();
    /** The data files, oldest first; the last is the one appended to. */
    private final List<Segment> segments = new ArrayList<>();
    private final AckLog ackLog;
    private final ArrayDeque<Waiter> waiters = new ArrayDeque<>();
    private long nextSeq;
    private long diskBytes;
    private long liveRecords;
    private long appendedSeq;
    /** Every record up to this one is forced to disk. */
    private long durableSeq;
    /**
     * Every record up to this one is safe: forced to disk, or acknowledged (the next hop has it, or its sender
     * was told it failed), which {@link #whenSafe} and {@link #awaitSafe} wait for. At least durableSeq.
     */
    private volatile long safeSeq;
    /** Threads in {@link #awaitSafe(long, long, long, TimeUnit)}: an acknowledgement wakes them. */
    private int rangeWaiters;
    private long[] pendingAcks = new long[256];
    private int pendingAckCount;
    /** When the oldest of the pending acknowledgements came (System.nanoTime). */
    private long acksPendingSince;
    /**
     * Records acknowledged (each then went into pendingAcks), and those of the acknowledgements written to the
     * log, ever, in order.
     */
    private long acknowledged;
    private long acksWrittenOut;
    /** A thread in {@link #ackWritten} waits: the pending acknowledgements are written now. */
    private boolean acksUrgent;
    private final Condition acksOut = lock.newCondition();
    /**
     * The committer waits, until committerWakeAt (System.nanoTime), or with no time set (Long.MAX_VALUE): an
     * acknowledgement, or an append whose time comes before, must wake it.
     */
    private boolean committerWaits;
    private long committerWakeAt;
    private boolean deletable;
    /** Records appended and not written yet (in {@link Segment.Chunk}s), in bytes; bounded. */
    private long unwrittenBytes;
    /** When the oldest of them was appended (System.nanoTime). */
    private long unwrittenSince;
    /** When a record was last acknowledged (System.nanoTime). */
    private long ackedAt = System.nanoTime() - ACKS_FLOWING_NANOS;
    private final WriteBuffers buffers = new WriteBuffers();
    /** Writing records failed (a full disk): they wait until then (System.nanoTime) to be tried again. */
    private long writeRetryAt;
    private boolean writeRetrying;
    private IOException writeFailure;
    private long writeFailedLogAt;
    /** When the acknowledgement log was last forced (System.nanoTime); only the committer touches it. */
    private long ackForcedAt = System.nanoTime() - ACK_FORCE_NANOS;
    /** Writing acknowledgements failed (a full disk): they wait until then (System.nanoTime) to be tried again. */
    private long ackRetryAt;
    private boolean ackRetrying;
    private long ackFailedLogAt;
    private boolean closed;
    /** A force failed: what was appended since may not be on disk, so nothing more is taken. */
    private IOException broken;
    private final Thread committer;
    private final LongAdder appended = new LongAdder();
    private final LongAdder forces = new LongAdder();
    private final LongAdder refusedFull = new LongAdder();
    private final LongAdder written = new LongAdder();
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
            s.safeSeq = s.appendedSeq;
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
     * Appends a record; its sequence number, which {@link #whenSafe} and {@link #ack} take. The record goes to
     * a write buffer, which the committer writes to its file and forces in one go with every other record
     * appended meanwhile ({@link Fsync#ALWAYS}: at once, before this returns); it is durable once both are done.
     *
     * @throws SpoolException {@link SpoolException#full() full}: the spool is at maxBytes, or the disk is full
     *     (nothing was appended; the caller pushes back); or the spool is closed or broken
     * @throws IllegalArgumentException if the identity is over 255 UTF-8 bytes or the record over 32 MiB
     */
    public long append(long arrivalMillis, byte lane, String identity, byte[] payload) throws SpoolException {
        return append(arrivalMillis, lane, identity, payload, false);
    }

    /**
     * As {@link #append}, and the record is written to its file (not forced) before this returns, with every
     * record appended before it: a crash of this process then loses none of them, a power loss what the committer
     * has not forced yet (it forces them in its next round, as it does every record). For an owner that says a
     * message was taken as soon as it is appended, not once it is durable: the client's outbox, whose
     * {@code send} returns after this. One write a call, as appends were before the write buffers.
     *
     * @throws SpoolException as {@link #append}; full also when the disk refuses the write (nothing was appended)
     */
    public long appendWritten(long arrivalMillis, byte lane, String identity, byte[] payload)
            throws SpoolException {
        return append(arrivalMillis, lane, identity, payload, true);
    }

    private long append(long arrivalMillis, byte lane, String identity, byte[] payload, boolean writeThrough)
            throws SpoolException {
        byte[] id = identity.getBytes(StandardCharsets.UTF_8);
        lock.lock();
        try {
            long seq = appendLocked(arrivalMillis, lane, id, payload, writeThrough);
            int size = RecordFormat.dataBytes(id.length, payload.length);
            Segment active = segments.get(segments.size() - 1);
            if (settings.fsync() == Fsync.ALWAYS) {
                writeAndForceNow(active, seq, size);
            } else if (writeThrough) {
                writeOrTakeBack(active, seq, size);
                work.signal(); // written: the committer forces it
            }
            return seq;
        } finally {
            lock.unlock();
        }
    }

    /**
     * As {@link #append} for {@code count} records of one arrival time and identity, under one taking of the lock:
     * their numbers follow each other, the first is returned. All or none: when one is refused, those appended
     * before it are let go (acknowledged), and the refusal is thrown. With {@link Fsync#ALWAYS}, one force covers
     * them all, before this returns.
     *
     * @throws SpoolException as {@link #append}
     */
    public long appendAll(long arrivalMillis, String identity, byte[] lanes, byte[][] payloads, int count)
            throws SpoolException {
        byte[] id = identity.getBytes(StandardCharsets.UTF_8);
        lock.lock();
        try {
            long first = nextSeq;
            int done = 0;
            try {
                for (; done < count; done++) {
                    appendLocked(arrivalMillis, lanes[done], id, payloads[done], false);
                }
                if (settings.fsync() == Fsync.ALWAYS && count > 0) {
                    writeNow();
                    forceNow(first + count - 1);
                }
            } catch (SpoolException e) {
                for (long seq = first; seq < first + done; seq++) {
                    ackOne(seq);
                }
                acksTaken(); // nothing waits on them: no waiter to run
                throw e;
            }
            return first;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Under the lock: appends one record to a write buffer, unless the spool refuses it; its number. With {@code
     * writeThrough}, what was appended before is written first, so that a failed write of this record finds
     * nothing in the buffers but it to take back.
     */
    private long appendLocked(long arrivalMillis, byte lane, byte[] id, byte[] payload, boolean writeThrough)
            throws SpoolException {
        int size = RecordFormat.dataBytes(id.length, payload.length);
        if (closed || broken != null) {
            throw new SpoolException(closed ? "the spool at " + dir + " is closed" : "the spool at " + dir
                    + " failed to force its files to disk (" + broken.getMessage() + "): it takes nothing"
                    + " more until the PC servlet is restarted", false, broken);
        }
        if (writeRetrying) {
            // the disk refused the committer's last write: nothing more is taken until a write succeeds
            refusedFull.increment();
            throw new SpoolException("the spool at " + dir + " cannot write to its disk (" + writeFailure
                    .getMessage() + "): " + unwrittenBytes + " bytes wait to be written", true, writeFailure);
        }
        if (unwrittenBytes > MAX_UNWRITTEN_BYTES || writeThrough && unwrittenBytes > 0) {
            dropAcknowledged();
            if (unwrittenBytes > MAX_UNWRITTEN_BYTES || writeThrough && unwrittenBytes > 0) {
                writeNow(); // the committer is behind: no more is kept in memory; or this record is written through
            }
        }
        long seq = nextSeq;
        Segment last = segments.get(segments.size() - 1);
        // a block of room is kept for the zeros that pad the segment appended to (direct I/O: Segment)
        long bound = settings.maxBytes() - Segment.BLOCK;
        if (diskBytes + size > bound && last.live() == 0 && last.size() > 0) {
            // the segment appended to holds nothing live: begin another, so that it can go
            roll();
            deletable = true;
            work.signal();
        }
        if (diskBytes + size > bound) {
            refusedFull.increment();
            throw new SpoolException("the spool at " + dir + " holds " + diskBytes + " bytes on disk; "
                    + size + " more would pass maxSpoolBytes " + settings.maxBytes(), true, null);
        }
        Segment active = segments.get(segments.size() - 1);
        if (active.size() > 0 && active.size() + size > settings.segmentBytes()) {
            active = roll();
        }
        active.append(seq, arrivalMillis, lane, id, payload, size, buffers);
        if (unwrittenBytes == 0) {
            unwrittenSince = System.nanoTime();
            if (committerWaits && (committerWakeAt == Long.MAX_VALUE
                    || unwrittenSince + linger(unwrittenSince) - committerWakeAt < 0)) {
                work.signal(); // to set its time by this record's
            }
        } else if (unwrittenBytes < WRITE_LINGER_BYTES && unwrittenBytes + size >= WRITE_LINGER_BYTES) {
            work.signal();
        }
        unwrittenBytes += size;
        nextSeq = seq + 1;
        appendedSeq = seq;
        diskBytes += size;
        liveRecords++;
        appended.increment();
        return seq;
    }

    /**
     * Under the lock: writes every record not written yet, in order; when the disk refuses, what is left stays
     * for the committer to write later, and the append that asked is refused (nothing of it was appended).
     */
    private void writeNow() throws SpoolException {
        // chunks are written in the order appended, one writer at a time: a direct write rewrites the block the
        // one before it ended in, so an older chunk written after a newer one would wipe out the newer's start
        while (writing) {
            chunksWritten.awaitUninterruptibly();
        }
        for (Segment s : segments) {
            List<Segment.Chunk> chunks = s.takeUnwritten();
            for (int i = 0; i < chunks.size(); i++) {
                Segment.Chunk c = chunks.get(i);
                try {
                    s.write(c);
                } catch (IOException e) {
                    s.putBack(chunks.subList(i, chunks.size()));
                    rollIfNothingLive();
                    refusedFull.increment();
                    throw new SpoolException("the spool at " + dir + " could not write " + unwrittenBytes
                            + " bytes: " + e.getMessage(), true, e);
                }
                unwrittenBytes -= c.bytes().remaining();
                written.add(c.bytes().remaining());
                s.written(c, buffers);
            }
        }
    }

    /**
     * Under the lock, with {@link Fsync#ALWAYS}: the record just appended is written and forced before the append
     * returns. A write the disk refuses takes the record back, and the append is refused as full.
     */
    private void writeAndForceNow(Segment active, long seq, int size) throws SpoolException {
        writeOrTakeBack(active, seq, size);
        forceNow(seq);
    }

    /**
     * Under the lock: the record just appended, the only one not written, is written before the append returns
     * ({@link Fsync#ALWAYS}, {@link #appendWritten}). A write the disk refuses takes the record back, and the append
     * is refused as full.
     */
    private void writeOrTakeBack(Segment active, long seq, int size) throws SpoolException {
        try {
            writeNow();
        } catch (SpoolException full) {
            active.unappend(seq, size);
            unwrittenBytes -= size;
            nextSeq = seq;
            appendedSeq = seq - 1;
            diskBytes -= size;
            liveRecords--;
            appended.decrement();
            throw full;
        }
    }

    /**
     * Under the lock, the disk having refused a write: when the segment appended to holds nothing live, another is
     * begun, so that this one can go and free room.
     */
    private void rollIfNothingLive() {
        Segment active = segments.get(segments.size() - 1);
        if (active.live() == 0 && active.size() > 0) {
            try {
                roll();
                deletable = true;
                work.signal();
            } catch (SpoolException e) {
                LOG.debug("spool {}: {}", dir, e.getMessage());
            }
        }
    }

    /** Under the lock: closes the segment appended to and begins the next. */
    private Segment roll() throws SpoolException {
        try {
            Segment next = Segment.create(dir, nextSeq);
            Directory.force(dir);
            segments.get(segments.size() - 1).rolled();
            segments.add(next);
            return next;
        } catch (IOException e) {
            refusedFull.increment();
            throw new SpoolException("the spool at " + dir + " could not begin a new segment: " + e.getMessage(),
                    true, e);
        }
    }

    /**
     * Under the lock, with {@link Fsync#ALWAYS}: the records up to {@code seq} are forced before the append returns;
     * every segment written to, not only the one appended to last (a batch may have rolled to a new one).
     */
    private void forceNow(long seq) throws SpoolException {
        try {
            for (Segment s : segments) {
                if (s.isDirty()) {
                    s.force();
                    forces.increment();
                }
            }
        } catch (IOException e) {
            broken = e;
            throw new SpoolException("the spool at " + dir + " failed to force record " + seq + " to disk: "
                    + e.getMessage(), false, e);
        }
        durableSeq = seq;
        if (advanceSafe()) {
            work.signal(); // any waiter it made ready runs on the committer
        }
    }

    /**
     * Runs {@code action} once every record up to {@code seq} is safe: forced to disk, or acknowledged. At once if
     * they are, else on the thread that makes them so: the committer after a force, or the caller of {@link #ack}.
     * Actions made ready on different threads may run in either order (one at once here, while the committer runs
     * those it took for lower records): a caller that counts takes the highest it was told of.
     */
    public void whenSafe(long seq, Runnable action) {
        if (seq <= safeSeq) {
            action.run();
            return;
        }
        lock.lock();
        try {
            if (seq > safeSeq) {
                waiters.add(new Waiter(seq, action));
                return;
            }
        } finally {
            lock.unlock();
        }
        action.run();
    }

    /**
     * Waits until every record up to {@code seq} is safe ({@link #whenSafe}); whether they are (false: the timeout
     * passed, or the spool closed).
     */
    public boolean awaitSafe(long seq, long timeout, TimeUnit unit) throws InterruptedException {
        return awaitSafe(seq, seq, timeout, unit);
    }

    /**
     * Waits until every record from {@code first} to {@code last} is safe: forced, or acknowledged, whatever
     * became of the records before them (a batch's own, which an answer to its sender waits for); whether they
     * are (false: the timeout passed, or the spool closed).
     */
    public boolean awaitSafe(long first, long last, long timeout, TimeUnit unit) throws InterruptedException {
        long left = unit.toNanos(timeout);
        lock.lock();
        try {
            rangeWaiters++;
            try {
                while (last > safeSeq && firstNotAcknowledged(Math.max(first, durableSeq + 1)) <= last) {
                    if (left <= 0 || closed) {
                        return false;
                    }
                    left = safeMoved.awaitNanos(left);
                }
                return true;
            } finally {
                rangeWaiters--;
            }
        } finally {
            lock.unlock();
        }
    }

    /**
     * The next hop has record {@code seq}, or its sender was told it failed: it need not go out again, nor be
     * written if it is not yet. Acknowledging it twice does nothing.
     */
    public void ack(long seq) {
        acknowledge(seq, false);
    }

    /**
     * As {@link #ack(long)}, and waits until the acknowledgement is written to its file (the operating system's;
     * forced when the fsync setting forces acknowledgements), so that a crash of this process from now on does
     * not hand the record back: for a record whose sender is told it failed, who may send it again. Whether it
     * was written within {@code timeout} (true at once when it was acknowledged before).
     */
    public boolean ackWritten(long seq, long timeout, TimeUnit unit) throws InterruptedException {
        return awaitAcks(ackWritten(seq), timeout, unit);
    }

    /**
     * Waits until the acknowledgements up to {@code ticket} (what {@link #ackWritten(long)} returned; the largest
     * of several) are written, as {@link #ackWritten(long, long, TimeUnit)} does: whether they were within
     * {@code timeout} (true at once for -1).
     */
    public boolean awaitAcks(long ticket, long timeout, TimeUnit unit) throws InterruptedException {
        if (ticket < 0) {
            return true;
        }
        lock.lock();
        try {
            long left = unit.toNanos(timeout);
            while (acksWrittenOut < ticket) {
                if (left <= 0 || broken != null || closed && !committer.isAlive()) {
                    return false;
                }
                left = acksOut.awaitNanos(left);
            }
            return true;
        } finally {
            lock.unlock();
        }
    }

    /**
     * As {@link #ack(long)}, and has the committer write the pending acknowledgements now rather than with their
     * batch, without waiting for it (for a thread that must not wait for the disk).
     *
     * @return the acknowledgement's place among those ever written, for {@link #ackWritten(long, long, TimeUnit)};
     *     -1 when it was acknowledged before
     */
    public long ackWritten(long seq) {
        return acknowledge(seq, true);
    }

    /**
     * Acknowledges {@code seq}, its acknowledgement written with its batch or, {@code urgent}, now; its place
     * among the acknowledgements, or -1 when it was acknowledged before.
     */
    private long acknowledge(long seq, boolean urgent) {
        List<Runnable> ready;
        long ticket;
        lock.lock();
        try {
            long before = acknowledged;
            ackOne(seq);
            ticket = acknowledged > before ? acknowledged : -1;
            if (urgent && ticket > 0) {
                acksUrgent = true;
                work.signal();
            }
            ready = acksTaken();
        } finally {
            lock.unlock();
        }
        runAll(ready);
        return ticket;
    }

    /** As {@link #ack(long)} for the first {@code count} of {@code seqs}, under one taking of the lock. */
    public void ack(long[] seqs, int count) {
        List<Runnable> ready;
        lock.lock();
        try {
            for (int i = 0; i < count; i++) {
                ackOne(seqs[i]);
            }
            ready = acksTaken();
        } finally {
            lock.unlock();
        }
        runAll(ready);
    }

    /**
     * Under the lock: wakes the committer for acknowledgements only when they are due, a segment may go, or it
     * waits with no time set or a later one than theirs (then it sets theirs); the waiters the acknowledgements
     * made ready, to run outside it.
     */
    private List<Runnable> acksTaken() {
        ackedAt = System.nanoTime();
        if (deletable || pendingAckCount >= ACK_BATCH || committerWaits && pendingAckCount > 0
                && (committerWakeAt == Long.MAX_VALUE || acksPendingSince + ACK_DELAY_NANOS - committerWakeAt < 0)) {
            // (a committer that waits for records to linger wakes sooner, for the acknowledgements' time)
            work.signal();
        }
        if (advanceSafe()) {
            return takeReady();
        }
        if (rangeWaiters > 0) {
            safeMoved.signalAll(); // a batch's records may all be acknowledged now, those before them not
        }
        return List.of();
    }

    /**
     * Under the lock: moves {@link #safeSeq} past every record forced or acknowledged since, and wakes those who
     * wait for it; whether it moved. Each record is passed once, so this costs a look at one bit when the oldest
     * record not safe stays so (its next hop slow, and its force not come yet).
     */
    private boolean advanceSafe() {
        long safe = Math.min(firstNotAcknowledged(Math.max(safeSeq, durableSeq) + 1) - 1, appendedSeq);
        if (safe <= safeSeq) {
            return false;
        }
        safeSeq = safe;
        safeMoved.signalAll();
        return true;
    }

    /**
     * Under the lock: the first record from {@code seq} on that is not acknowledged, or the one after the last
     * appended if there is none.
     */
    private long firstNotAcknowledged(long seq) {
        long at = seq;
        while (at <= appendedSeq) {
            Segment s = segmentOf(at);
            if (s == null) {
                // not a record of any segment: of one deleted (every record of it acknowledged), or a number
                // never given (numbering went past those an acknowledgement file named, at a restart)
                Segment after = segmentAfter(at);
                if (after == null) {
                    return appendedSeq + 1;
                }
                at = after.firstSeq;
                continue;
            }
            long unacked = s.firstUnacknowledged(at);
            if (unacked < s.endSeq()) {
                return unacked;
            }
            at = s.endSeq();
        }
        return appendedSeq + 1;
    }

    /** Under the lock: the waiters whose records are all safe now, taken out. */
    private List<Runnable> takeReady() {
        if (waiters.isEmpty()) {
            return List.of();
        }
        List<Runnable> ready = new ArrayList<>();
        while (!waiters.isEmpty() && waiters.peekFirst().seq() <= safeSeq) {
            ready.add(waiters.pollFirst().action());
        }
        // a waiter may have come out of order (a lower seq after a higher one): look at the rest too
        if (!waiters.isEmpty()) {
            waiters.removeIf(w -> w.seq() <= safeSeq && ready.add(w.action()));
        }
        return ready;
    }

    /** Outside the lock: runs the actions of waiters made ready. */
    private void runAll(List<Runnable> ready) {
        for (Runnable r : ready) {
            try {
                r.run();
            } catch (RuntimeException e) {
                LOG.error("spool {}: an action on a safe record failed", dir, e);
            }
        }
    }

    /** Under the lock. */
    private void ackOne(long seq) {
        Segment s = segmentOf(seq);
        if (s == null || !s.ack(seq)) {
            return;
        }
        liveRecords--;
        acknowledged++;
        if (pendingAckCount == pendingAcks.length) {
            pendingAcks = Arrays.copyOf(pendingAcks, pendingAcks.length * 2);
        }
        if (pendingAckCount == 0) {
            acksPendingSince = System.nanoTime();
        }
        pendingAcks[pendingAckCount++] = seq;
        if (s.live() == 0 && s != segments.get(segments.size() - 1)) {
            deletable = true;
        }
    }

    /** Under the lock: the first segment whose records begin after {@code seq}, or null. */
    private Segment segmentAfter(long seq) {
        int lo = 0;
        int hi = segments.size();
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            if (segments.get(mid).firstSeq <= seq) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        return lo < segments.size() ? segments.get(lo) : null;
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
            List<Segment> all;
            List<List<Segment.Chunk>> toWrite = new ArrayList<>();
            long[] acks = null;
            int ackCount;
            long ackFileSeq;
            lock.lock();
            try {
                while (!closed && !hasWork()) {
                    long wake = nextRetry();
                    committerWakeAt = wake;
                    committerWaits = true;
                    if (wake == Long.MAX_VALUE) {
                        work.awaitUninterruptibly();
                    } else {
                        try {
                            work.awaitNanos(Math.max(1, wake - System.nanoTime()));
                        } catch (InterruptedException ignored) {
                            // nobody interrupts the committer; closing is what ends it
                        }
                    }
                    committerWaits = false;
                }
                if (closed && (!hasWork() || writeRetrying)) {
                    return; // closing, and the disk refused the last write: what is unwritten was never durable
                }
                all = new ArrayList<>(segments);
                dropAcknowledged();
                if (toCommit(System.nanoTime())) {
                    target = appendedSeq;
                    for (Segment s : all) {
                        List<Segment.Chunk> chunks = s.takeUnwritten();
                        writing |= !chunks.isEmpty();
                        toWrite.add(chunks);
                    }
                    unwrittenSince = System.nanoTime(); // what is appended from now on lingers from now on
                } else {
                    target = -1; // acknowledgements, deletions or waiters only: records linger on
                }
                ackCount = acksDue(System.nanoTime()) ? pendingAckCount : 0;
                if (ackCount > 0) {
                    acks = Arrays.copyOf(pendingAcks, ackCount);
                    pendingAckCount = 0;
                    acksUrgent = false;
                }
                ackFileSeq = nextSeq;
            } finally {
                lock.unlock();
            }
            boolean written = target >= 0 && write(all, toWrite);
            commit(written ? target : -1, all, acks, ackCount, ackFileSeq);
            deleteAcknowledged();
        }
    }

    /** Under the lock. */
    private boolean hasWork() {
        long now = System.nanoTime();
        return toCommit(now) || acksDue(now) || deletable
                || !waiters.isEmpty() && waiters.peekFirst().seq() <= safeSeq;
    }

    /**
     * Under the lock: whether records are to be written and forced now: they have lingered their time, or
     * gathered their bytes ({@link #WRITE_LINGER_BYTES}), or were written already (an append's own write), or the
     * spool closes.
     */
    private boolean toCommit(long now) {
        return appendedSeq > durableSeq && broken == null && (!writeRetrying || now - writeRetryAt >= 0)
                && (closed || unwrittenBytes == 0 || unwrittenBytes >= WRITE_LINGER_BYTES
                || now - unwrittenSince >= linger(now));
    }

    /** Under the lock: how long records wait to be written at {@code now} ({@link #WRITE_LINGER_NANOS}). */
    private long linger(long now) {
        return now - ackedAt <= ACKS_FLOWING_NANOS ? WRITE_LINGER_NANOS : 0;
    }

    /** Under the lock: drops what was appended, not written yet, and acknowledged since: it need never be. */
    private void dropAcknowledged() {
        for (Segment s : segments) {
            unwrittenBytes -= s.dropAcknowledged(buffers); // the chunks the committer writes meanwhile are not here
        }
    }

    /** Under the lock: whether the pending acknowledgements are to be written now. */
    private boolean acksDue(long now) {
        return pendingAckCount > 0 && (!ackRetrying || now - ackRetryAt >= 0) && (closed || acksUrgent
                || pendingAckCount >= ACK_BATCH || now - acksPendingSince >= ACK_DELAY_NANOS);
    }

    /**
     * Under the lock: when the committer next has work that waits for a time (System.nanoTime), or never: a write
     * or acknowledgements that failed are tried again, or acknowledgements come due ({@link #ACK_DELAY_NANOS}).
     */
    private long nextRetry() {
        long wake = Long.MAX_VALUE;
        if (writeRetrying && appendedSeq > durableSeq && broken == null) {
            wake = writeRetryAt;
        } else if (unwrittenBytes > 0 && broken == null) {
            wake = unwrittenSince + linger(System.nanoTime());
        }
        if (pendingAckCount > 0) {
            long acksAt = ackRetrying ? ackRetryAt : acksPendingSince + ACK_DELAY_NANOS;
            if (wake == Long.MAX_VALUE || acksAt - wake < 0) {
                wake = acksAt;
            }
        }
        return wake;
    }

    /**
     * Outside the lock: writes what each segment had appended and not written, in order. When the disk refuses
     * (full, most likely), what was not written goes back, to be tried again 100 ms later; whether all of it was
     * written.
     */
    private boolean write(List<Segment> all, List<List<Segment.Chunk>> toWrite) {
        long bytes = 0;
        long wrote = 0;
        IOException failed = null;
        int s = 0;
        int i = 0;
        outer:
        for (; s < all.size(); s++) {
            List<Segment.Chunk> chunks = toWrite.get(s);
            for (i = 0; i < chunks.size(); i++) {
                Segment.Chunk c = chunks.get(i);
                int records = c.bytes().remaining();
                if (!skipped(all.get(s), c)) {
                    try {
                        all.get(s).write(c);
                    } catch (IOException e) {
                        failed = e;
                        break outer;
                    }
                    wrote += records;
                }
                bytes += records;
            }
        }
        boolean recovered = false;
        lock.lock();
        try {
            writing = false;
            chunksWritten.signalAll();
            unwrittenBytes -= bytes;
            written.add(wrote);
            for (int w = 0; w <= s && w < all.size(); w++) {
                List<Segment.Chunk> chunks = toWrite.get(w);
                for (Segment.Chunk c : w < s ? chunks : chunks.subList(0, i)) {
                    all.get(w).written(c, buffers);
                }
            }
            if (failed == null) {
                recovered = writeRetrying;
                writeRetrying = false;
                return true;
            }
            writeFailure = failed;
            all.get(s).putBack(toWrite.get(s).subList(i, toWrite.get(s).size()));
            for (int later = s + 1; later < all.size(); later++) {
                all.get(later).putBack(toWrite.get(later));
            }
            long now = System.nanoTime();
            writeRetryAt = now + TimeUnit.MILLISECONDS.toNanos(100);
            if (!writeRetrying || now - writeFailedLogAt > TimeUnit.SECONDS.toNanos(10)) {
                writeFailedLogAt = now;
                LOG.warn("spool {}: writing {} bytes failed, kept to try again: {}", dir, unwrittenBytes,
                        failed.getMessage());
            }
            writeRetrying = true;
            // counted as a refusal too: the records appended before the disk filled wait unacknowledged, and when
            // they are all a sender's window, no later append comes to be refused
            refusedFull.increment();
            rollIfNothingLive();
            return false;
        } finally {
            lock.unlock();
            if (recovered) {
                LOG.info("spool {}: its disk takes writes again", dir);
                roomFreed.run(); // appends refused meanwhile may be offered again
            }
        }
    }

    /**
     * Whether chunk {@code c} of {@code s}, about to be written, need not be: every record of it was acknowledged
     * since it was appended (the next hop took them while the disk was busy with what came before).
     */
    private boolean skipped(Segment s, Segment.Chunk c) {
        lock.lock();
        try {
            return s.skipIfAcknowledged(c);
        } finally {
            lock.unlock();
        }
    }

    /**
     * Forces the segments written to, writes (and forces) acknowledgements, then says what is durable: up to
     * {@code target}, or nothing new when it is -1 (a write failed, or records linger unwritten).
     */
    private void commit(long target, List<Segment> all, long[] acks, int ackCount, long ackFileSeq) {
        try {
            if (settings.fsync() != Fsync.NEVER) {
                for (Segment s : all) {
                    if (s.isDirty()) {
                        s.force();
                        forces.increment();
                    }
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
                safeMoved.signalAll();
                acksOut.signalAll();
            } finally {
                lock.unlock();
            }
            return;
        }
        crashPoints.accept("forced");
        List<Runnable> ready;
        lock.lock();
        try {
            durableSeq = Math.max(durableSeq, target);
            advanceSafe();
            ready = takeReady();
        } finally {
            lock.unlock();
        }
        runAll(ready);
    }

    /**
     * Writes acknowledgements. One that cannot be written (a full disk, most likely) is not a broken spool: the
     * acknowledgements wait, and are tried again 100 ms later, after the deletions they allow have freed room (a
     * segment goes once all of its records are acknowledged here, written or not). Meanwhile a crash sends their
     * records once more, and the next hop drops them as duplicates.
     */
    private void writeAcks(long[] acks, int ackCount, long ackFileSeq) {
        try {
            written.add(ackLog.append(acks, ackCount, ackFileSeq));
            long now = System.nanoTime();
            if (settings.fsync() != Fsync.NEVER && now - ackForcedAt >= ACK_FORCE_NANOS) {
                ackLog.force();
                forces.increment();
                ackForcedAt = now;
            }
            boolean wasRetrying;
            lock.lock();
            try {
                wasRetrying = ackRetrying;
                ackRetrying = false;
                acksWrittenOut += ackCount;
                acksOut.signalAll();
            } finally {
                lock.unlock();
            }
            if (wasRetrying) {
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
                if (s.live() == 0) {
                    gone.add(s);
                }
            }
            segments.removeAll(gone);
            for (Segment s : gone) {
                diskBytes -= s.size();
                unwrittenBytes -= s.dropUnwritten(buffers); // every record acknowledged: none need ever be written
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
            return new SpoolStats(liveRecords, diskBytes, segments.size(), appended.sum(), acknowledged,
                    recovered, forces.sum(), damaged, torn, refusedFull.sum(),
                    written.sum());
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
            safeMoved.signalAll();
        } finally {
            lock.unlock();
        }
        try {
            committer.join(TimeUnit.SECONDS.toMillis(10));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        lock.lock();
        try {
            acksOut.signalAll(); // what the committer did not write by now, it never will
        } finally {
            lock.unlock();
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
