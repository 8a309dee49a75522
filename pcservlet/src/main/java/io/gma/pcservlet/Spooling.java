package io.gma.pcservlet;

import io.gma.internal.spool.Fsync;
import io.gma.internal.spool.Spool;
import io.gma.internal.spool.SpoolException;
import io.gma.internal.spool.SpoolRecord;
import io.gma.internal.spool.SpoolSettings;
import io.gma.internal.spool.SpoolStats;
import io.gma.wire.Message;
import io.gma.wire.Packed;
import io.gma.wire.ProtocolException;
import io.gma.wire.WireCodec;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What the PC servlet keeps on disk ({@link Spool}, docs/spool.md), in its own terms: each message it takes is
 * appended with the queue it goes to (its {@link Lane}), whether it came up an uplink, who the sender proved to
 * be, and when it came; the record is acknowledged once the next hop has the message. In memory ({@link
 * #inMemory()}), nothing is kept and every call costs nothing.
 */
final class Spooling implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(Spooling.class);
    /** The record number of a message that is not spooled. */
    static final long NONE = -1;
    private static final int FROM_UPLINK = 0x10;

    /** Which of the PC servlet's queues a record goes to when it is read back. */
    enum Lane {
        /** An endpoint of this domain's queue ({@link LocalQueues}). */
        LOCAL,
        /** Another domain's queue ({@link Outbound}), or its relay queue if it polls this one. */
        OUTBOUND,
        /** A relayed domain's queue ({@link Relay}). */
        RELAY
    }

    /**
     * A message read back at start: what it was spooled with.
     *
     * @param fromUplink whether an endpoint of this domain sent it up its uplink (then its {@code send} rule is
     *     checked again: the rules may have changed)
     * @param identity who the sender proved to be then (empty: none)
     */
    record Recovered(long seq, Lane lane, boolean fromUplink, Message message, String identity, long arrivalMillis) {
    }

    private final Spool spool;
    /** When a refusal of the disk was last logged (System.nanoTime). */
    private volatile long diskRefusedLogAt = System.nanoTime() - TimeUnit.MINUTES.toNanos(1);

    private Spooling(Spool spool) {
        this.spool = spool;
    }

    /** Nothing kept: a PC servlet that loses what it holds when it stops (as before the spool). */
    static Spooling inMemory() {
        return new Spooling(null);
    }

    /**
     * The spool in {@code dir}: {@code recovered} is handed every message that was not acknowledged, in the order
     * taken, before this returns; {@code roomFreed} is told when deleted files freed room on disk.
     *
     * @throws IOException when the directory is another process's (the sentence names it) or cannot be read
     */
    static Spooling open(Path dir, Fsync fsync, long maxBytes, Consumer<Recovered> recovered, Runnable roomFreed)
            throws IOException {
        WireCodec codec = WireCodec.standard();
        Spool s = Spool.open(dir, SpoolSettings.of(fsync, maxBytes), r -> {
            Recovered back = decode(codec, r);
            if (back != null) {
                recovered.accept(back);
            }
        }, roomFreed);
        return new Spooling(s);
    }

    private static Recovered decode(WireCodec codec, SpoolRecord r) {
        int lane = r.lane() & 0x0F;
        if (lane >= Lane.values().length) {
            LOG.error("spool record {} names lane {}, which this version does not know; skipped", r.seq(), lane);
            return null;
        }
        try {
            return new Recovered(r.seq(), Lane.values()[lane], (r.lane() & FROM_UPLINK) != 0,
                    codec.decode(r.payload()), r.identity(), r.arrivalMillis());
        } catch (ProtocolException e) {
            LOG.error("spool record {} is not a GMA message ({}); skipped", r.seq(), e.getMessage());
            return null;
        }
    }

    /** Whether messages are spooled. */
    boolean on() {
        return spool != null;
    }

    /**
     * Appends {@code m}; its record's number ({@link #NONE} in memory).
     *
     * @param identity who its sender proved to be (null or empty: none)
     * @throws SpoolException full (push back), or broken
     */
    long append(Lane lane, boolean fromUplink, Message m, String identity) throws SpoolException {
        if (spool == null) {
            return NONE;
        }
        byte code = (byte) (lane.ordinal() | (fromUplink ? FROM_UPLINK : 0));
        try {
            return spool.append(System.currentTimeMillis(), code, identity == null ? "" : identity,
                    Packed.shared(m));
        } catch (SpoolException e) {
            throw logged(e);
        }
    }

    /** {@code e}, logged once in a while when it is the disk's refusal, not the bound's: an operator must hear. */
    private SpoolException logged(SpoolException e) {
        long now = System.nanoTime();
        if (e.getCause() != null && now - diskRefusedLogAt > TimeUnit.SECONDS.toNanos(10)) {
            diskRefusedLogAt = now;
            LOG.warn("{}; senders are held back until acknowledgements free room", e.getMessage());
        }
        return e;
    }

    /**
     * Appends {@code count} messages of one batch, from one poster, in their order and all or none (their records
     * follow each other); the first record's number ({@link #NONE} in memory).
     *
     * @throws SpoolException full (push back; none was kept), or broken
     */
    long appendAll(Lane[] lanes, Message[] messages, int count, String identity) throws SpoolException {
        if (spool == null) {
            return NONE;
        }
        byte[] codes = new byte[count];
        byte[][] payloads = new byte[count][];
        for (int i = 0; i < count; i++) {
            codes[i] = (byte) lanes[i].ordinal();
            payloads[i] = Packed.shared(messages[i]);
        }
        try {
            return spool.appendAll(System.currentTimeMillis(), identity == null ? "" : identity, codes, payloads,
                    count);
        } catch (SpoolException e) {
            throw logged(e);
        }
    }

    /** The next hop has the message of record {@code seq}. */
    void ack(long seq) {
        if (spool != null && seq != NONE) {
            spool.ack(seq);
        }
    }

    /**
     * Acknowledges record {@code seq}, whose sender is told it failed by the ERROR of record {@code told}, once that
     * one is safe: until then a crash brings the message back (and it fails again), rather than neither. At once
     * for {@link #NONE}: an ERROR in memory only (a full spool), or none to send.
     */
    void ackOnceSafe(long seq, long told) {
        if (told == NONE) {
            ack(seq);
        } else {
            whenSafe(told, () -> ack(seq));
        }
    }

    /** The next hop has these messages (a batch): their records are acknowledged together. */
    void ackAll(List<Queued> done) {
        if (spool == null || done.isEmpty()) {
            return;
        }
        long[] seqs = new long[done.size()];
        int n = 0;
        for (Queued q : done) {
            if (q.spoolSeq() != NONE) {
                seqs[n++] = q.spoolSeq();
            }
        }
        spool.ack(seqs, n);
    }

    /** The next hop has the first {@code count} of these records. */
    void ackAll(long[] seqs, int count) {
        if (spool != null && count > 0) {
            spool.ack(seqs, count);
        }
    }

    /**
     * Runs {@code action} once every record up to {@code seq} is safe: on disk, or taken by the next hop (or
     * answered with an error); at once in memory, or for {@link #NONE}.
     */
    void whenSafe(long seq, Runnable action) {
        if (spool == null || seq == NONE) {
            action.run();
        } else {
            spool.whenSafe(seq, action);
        }
    }

    /**
     * Waits until every record from {@code first} to {@code last} is safe, whatever became of those before them;
     * whether they are.
     */
    boolean awaitSafe(long first, long last, long timeout, TimeUnit unit) throws InterruptedException {
        return spool == null || last == NONE || spool.awaitSafe(first, last, timeout, unit);
    }

    /** The spool's counters; null in memory. */
    SpoolStats stats() {
        return spool == null ? null : spool.stats();
    }

    Path dir() {
        return spool == null ? null : spool.dir();
    }

    @Override
    public void close() {
        if (spool != null) {
            spool.close();
        }
    }
}
