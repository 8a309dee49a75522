package io.gma.internal.spool;

import com.sun.nio.file.ExtendedOpenOption;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.OpenOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.Iterator;
import java.util.List;

/**
 * One data file of a spool: records appended one after another, their sequence numbers contiguous from the one
 * in its name ({@code 00000000000000000042.seg} starts at 42), and which of them the next hop has acknowledged.
 * A segment whose every record is acknowledged is deleted whole. Guarded by its spool's lock, but for
 * {@link #write} and {@link #force}, which the committer calls outside it.
 *
 * <p>Written with direct I/O where the file system has it ({@code O_DIRECT}): the committer's buffers go to the
 * disk without a copy into the page cache, and the kernel has no dirty pages to write back. Measured here, a GB
 * written that way cost 0.18 s of CPU against 0.94 s through the page cache, which on a machine of two cores is
 * what a PC servlet's own work competes with. Direct writes must start and end on a block and come from a buffer
 * aligned to one: each chunk begins with the bytes of the block the last one ended in (its lead, already in the
 * file) and is padded with zeros to the next block; the next write covers that block again. So the file may end
 * with up to a block of zeros past its last record, which {@link RecordReader} tells from a torn record, and which
 * a clean close cuts off. A file system without direct I/O (tmpfs) is written through the page cache, the same
 * chunks without their lead or padding.
 */
final class Segment {
    static final String SUFFIX = ".seg";
    /** The alignment of direct writes: file offsets, lengths and buffer addresses. */
    static final int BLOCK = 4096;

    final long firstSeq;
    final Path path;
    private FileChannel channel;
    /** Whether the channel is open for direct I/O. */
    private boolean direct;
    /** Bytes of records appended (written or not); the next record goes here. */
    private long size;
    /** The sequence number after the last record. */
    private long endSeq;
    /** Records in the file (by seq - firstSeq), and those acknowledged. */
    private final BitSet present = new BitSet();
    private final BitSet acked = new BitSet();
    private int live;
    /** The spool appends to a later segment: no record will follow the last one here. */
    private boolean rolled;
    /** Written to since the last force (appended and not written is not dirty yet: see {@link Chunk}). */
    private volatile boolean dirty;

    private Segment(long firstSeq, Path path, FileChannel channel, boolean direct, long size) {
        this.firstSeq = firstSeq;
        this.path = path;
        this.channel = channel;
        this.direct = direct;
        this.size = size;
        this.endSeq = firstSeq;
    }

    /** A new, empty segment whose first record will be {@code firstSeq}, written directly if it can be. */
    static Segment create(Path dir, long firstSeq) throws IOException {
        Path p = dir.resolve(name(firstSeq));
        FileChannel c = FileChannel.open(p, StandardOpenOption.CREATE_NEW, StandardOpenOption.READ,
                StandardOpenOption.WRITE);
        FileChannel d = directChannel(p);
        if (d != null) {
            c.close();
            return new Segment(firstSeq, p, d, true, 0);
        }
        return new Segment(firstSeq, p, c, false, 0);
    }

    /** {@code p} opened for direct writes, or null where the file system does not have them. */
    private static FileChannel directChannel(Path p) {
        try {
            return FileChannel.open(p, new OpenOption[] {StandardOpenOption.WRITE, ExtendedOpenOption.DIRECT});
        } catch (IOException | UnsupportedOperationException notHere) {
            return null;
        }
    }

    /**
     * An existing segment, to be filled by {@link #recovered} as its records are read. Nothing more is appended
     * to it (a spool appends to a new segment after a restart, unless the last one is empty): it is read and
     * deleted, written through the page cache if at all.
     */
    static Segment open(Path file) throws IOException {
        FileChannel c = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE);
        return new Segment(firstSeqOf(file), file, c, false, c.size());
    }

    static String name(long firstSeq) {
        return String.format("%020d", firstSeq) + SUFFIX;
    }

    static long firstSeqOf(Path file) {
        String n = file.getFileName().toString();
        return Long.parseLong(n.substring(0, n.length() - SUFFIX.length()));
    }

    /** The whole file, for recovery. */
    byte[] readAll() throws IOException {
        return Files.readAllBytes(path);
    }

    /** Recovery found record {@code seq} intact in the file, acknowledged or not. */
    void recovered(long seq, boolean wasAcked) {
        int i = index(seq);
        present.set(i);
        if (wasAcked) {
            acked.set(i);
        } else {
            live++;
        }
        endSeq = Math.max(endSeq, seq + 1);
    }

    /**
     * Cuts the file back to {@code validEnd}: what follows is a record torn by a crash (never acknowledged), or
     * the zeros that pad a direct write to its block.
     */
    void truncate(long validEnd) throws IOException {
        channel.truncate(validEnd);
        channel.force(true);
        size = validEnd;
    }

    /**
     * Records appended and not written to the file yet, in a few large buffers, each with its place in the file:
     * what the committer writes in one call each, rather than one system call a record. Nothing here has been
     * said to be durable. Guarded by the spool's lock; a chunk taken out is its taker's alone, but for its
     * lead, which the next chunk copies.
     *
     * <pre>
     *   file:    |.... block ....|.... block ....|.... block ....|
     *   chunk:   [ lead ][ records .................. ][ zeros  ]
     *            ^ start (a block's start, with direct I/O)       ^ the write's end, a block's end
     * </pre>
     */
    static final class Chunk {
        final ByteBuffer buffer;
        /** Where in the file the buffer's first byte goes. */
        final long start;
        /** Bytes before the first record: the end of what is in the file already, rewritten with the block. */
        final int lead;
        /** Taken out to be written: appends go to a new chunk. */
        boolean sealed;
        /** Written to the file, or skipped (every record of it acknowledged first). */
        boolean written;
        /** The sequence numbers of its records: from firstSeq, before endSeq. */
        long firstSeq;
        long endSeq;
        /** The chunk begun after this one in the same segment, whose lead may hold the end of this one's records. */
        Chunk next;

        Chunk(ByteBuffer buffer, long start, int lead) {
            this.buffer = buffer;
            this.start = start;
            this.lead = lead;
        }

        /** Its records' bytes, without touching the buffer's own position. */
        ByteBuffer bytes() {
            return buffer.duplicate().flip().position(lead);
        }

        /** Room left for records, keeping a block for the padding of a direct write. */
        int room() {
            return buffer.capacity() - BLOCK - buffer.position();
        }
    }

    private final ArrayDeque<Chunk> unwritten = new ArrayDeque<>();
    /** The newest chunk, written or not: the next chunk's lead is copied from it. */
    private Chunk lastChunk;
    /** Without a last chunk (after {@link #unappend}), the file's bytes of the block the records end in. */
    private byte[] fileTail = new byte[0];

    /**
     * Appends one record, encoded into the write buffer ({@code buffers} gives it room); the committer writes
     * it. Under the spool's lock.
     */
    void append(long seq, long arrivalMillis, byte lane, byte[] identity, byte[] payload, int recordBytes,
            WriteBuffers buffers) {
        Chunk last = unwritten.peekLast();
        if (last == null || last.sealed || last.room() < recordBytes) {
            if (last != null) {
                last.sealed = true;
            }
            last = newChunk(recordBytes, buffers);
            unwritten.addLast(last);
        }
        RecordFormat.writeData(last.buffer, seq, arrivalMillis, lane, identity, payload);
        if (last.endSeq == last.firstSeq) {
            last.firstSeq = seq;
        }
        last.endSeq = seq + 1;
        size += recordBytes;
        present.set(index(seq));
        live++;
        endSeq = seq + 1;
    }

    /** A chunk for records from {@link #size} on, with its lead copied in. */
    private Chunk newChunk(int recordBytes, WriteBuffers buffers) {
        int lead = direct ? (int) (size % BLOCK) : 0;
        ByteBuffer b = buffers.take(lead + recordBytes + BLOCK);
        if (lead > 0) {
            if (lastChunk != null) {
                int from = (int) (size - lead - lastChunk.start);
                b.put(0, lastChunk.buffer, from, lead);
            } else {
                b.put(0, fileTail, 0, lead);
            }
        }
        b.position(lead);
        Chunk c = new Chunk(b, size - lead, lead);
        if (lastChunk != null) {
            lastChunk.next = c;
            if (lastChunk.written) {
                buffers.give(lastChunk.buffer); // held only for its lead
            }
        }
        lastChunk = c;
        return c;
    }

    /** Under the spool's lock: what was appended and not written, to write now (appends go to new chunks). */
    List<Chunk> takeUnwritten() {
        List<Chunk> taken = new ArrayList<>(unwritten);
        taken.forEach(c -> c.sealed = true);
        unwritten.clear();
        return taken;
    }

    /** Under the spool's lock: chunks whose write failed, back in front of the rest, to be written later. */
    void putBack(List<Chunk> chunks) {
        for (int i = chunks.size() - 1; i >= 0; i--) {
            unwritten.addFirst(chunks.get(i));
        }
    }

    boolean hasUnwritten() {
        return !unwritten.isEmpty();
    }

    /** The chunks appended to and not written yet, oldest first: a copy, for tests. */
    List<Chunk> unwritten() {
        return new ArrayList<>(unwritten);
    }

    /**
     * Under the spool's lock, before chunk {@code c} is written: whether every record of it is acknowledged, so
     * that it need never be written. Then the bytes of its records in the block they end in are zeroed, here and
     * in the leads of the chunks after it that copied them, so that a later chunk writes that block with zeros
     * where these records would have been: the file holds zeros in their place (a hole, read as zeros, before
     * that block), which {@link RecordReader} passes over as it passes the padding of a direct write. A later
     * chunk written already is left alone: its block is in the file with these records, acknowledged, which a
     * reopen hands back only if their acknowledgements were not written; and its buffer went back to the pool.
     */
    boolean skipIfAcknowledged(Chunk c) {
        if (c.endSeq == c.firstSeq || acked.nextClearBit(index(c.firstSeq)) < index(c.endSeq)) {
            return false;
        }
        long to = c.start + c.buffer.position();
        long from = Math.max(c.start + c.lead, to / BLOCK * BLOCK);
        zero(c, from, to);
        for (Chunk n = c.next; n != null && n.start < to; n = n.next) {
            if (!n.written) {
                // a chunk written (or dropped) has given its buffer back, which a newer chunk may hold now
                zero(n, from, Math.min(to, n.start + n.lead));
            }
        }
        return true;
    }

    /**
     * Under the spool's lock: drops the chunks not written yet whose every record is acknowledged
     * ({@link #skipIfAcknowledged}); the bytes of records dropped.
     */
    long dropAcknowledged(WriteBuffers buffers) {
        long bytes = 0;
        for (Iterator<Chunk> it = unwritten.iterator(); it.hasNext(); ) {
            Chunk c = it.next();
            if (skipIfAcknowledged(c)) {
                c.sealed = true;
                it.remove();
                bytes += c.bytes().remaining();
                written(c, buffers);
            }
        }
        return bytes;
    }

    /** Zeroes the bytes of {@code c}'s buffer that go to the file from {@code from} to {@code to}. */
    private static void zero(Chunk c, long from, long to) {
        for (long p = Math.max(from, c.start); p < to; p++) {
            c.buffer.put((int) (p - c.start), (byte) 0);
        }
    }

    /** The lowest record from {@code seq} on that is not acknowledged, or {@link #endSeq()} if there is none. */
    long firstUnacknowledged(long seq) {
        return Math.min(endSeq, firstSeq + acked.nextClearBit(index(seq)));
    }

    /**
     * Writes one chunk at its place in the file. A write that fails part way is simply written whole again
     * later, at the same place. Direct I/O that the file system refuses after all (a block larger than 4 KiB)
     * falls back to the page cache, for this segment, at once.
     */
    void write(Chunk c) throws IOException {
        if (direct) {
            int end = c.buffer.position();
            int padded = (end + BLOCK - 1) / BLOCK * BLOCK;
            for (int i = end; i < padded; i++) {
                c.buffer.put(i, (byte) 0);
            }
            try {
                writeFully(c.buffer.duplicate().limit(padded).position(0), c.start);
                dirty = true;
                return;
            } catch (IOException e) {
                if (!"Invalid argument".equals(e.getMessage())) {
                    throw e;
                }
                channel.close();
                channel = FileChannel.open(path, StandardOpenOption.READ, StandardOpenOption.WRITE);
                direct = false; // the lead and padding are simply not written from now on
            }
        }
        writeFully(c.bytes(), c.start + c.lead);
        dirty = true;
    }

    private void writeFully(ByteBuffer b, long at) throws IOException {
        int from = b.position();
        while (b.hasRemaining()) {
            channel.write(b, at + b.position() - from);
        }
    }

    /** Under the spool's lock: chunk {@code c} is in the file; its buffer goes back unless the next lead needs it. */
    void written(Chunk c, WriteBuffers buffers) {
        c.written = true;
        if (c != lastChunk) {
            buffers.give(c.buffer);
        } else if (rolled) {
            cutPadding(); // its last records are in the file, and none will follow: the zeros after them go
            buffers.give(c.buffer);
            lastChunk = null;
        }
    }

    /** Under the spool's lock: the spool appends to the next segment now; nothing more comes to this one. */
    void rolled() {
        rolled = true;
        if (unwritten.isEmpty() && (lastChunk == null || lastChunk.written)) {
            cutPadding();
        }
    }

    private void cutPadding() {
        if (direct) {
            try {
                channel.truncate(size);
            } catch (IOException e) {
                // left as it is: the zeros are told from records when the file is read back
            }
        }
    }

    /**
     * Takes back the record just appended, {@code recordBytes} long, whose write failed (with {@link Fsync#ALWAYS},
     * where the write is the append's own): the file is cut back to where it was. Under the spool's lock.
     */
    void unappend(long seq, int recordBytes) {
        unwritten.clear();
        lastChunk = null;
        size -= recordBytes;
        present.clear(index(seq));
        live--;
        endSeq = seq;
        try {
            channel.truncate(size);
            int lead = (int) (size % BLOCK);
            fileTail = new byte[lead];
            try (FileChannel read = FileChannel.open(path, StandardOpenOption.READ)) {
                read.read(ByteBuffer.wrap(fileTail), size - lead);
            }
        } catch (IOException ignored) {
            // the torn record stays; its CRC will tell (and its block is rewritten whole by the next write)
        }
    }

    /** Forces what was written to the disk, if anything was since the last force. */
    void force() throws IOException {
        if (dirty) {
            dirty = false;
            channel.force(false);
        }
    }

    /** Marks {@code seq} acknowledged; whether it was a live record of this segment. */
    boolean ack(long seq) {
        int i = index(seq);
        if (i < 0 || !present.get(i) || acked.get(i)) {
            return false;
        }
        acked.set(i);
        live--;
        return true;
    }

    boolean contains(long seq) {
        return seq >= firstSeq && seq < endSeq;
    }

    private int index(long seq) {
        long i = seq - firstSeq;
        return i < 0 || i > Integer.MAX_VALUE ? -1 : (int) i;
    }

    long size() {
        return size;
    }

    long endSeq() {
        return endSeq;
    }

    int live() {
        return live;
    }

    boolean isDirty() {
        return dirty;
    }

    /** Closes the file; written with direct I/O and all of it written, the padding past its records goes first. */
    void close() {
        try {
            if (direct && unwritten.isEmpty()) {
                channel.truncate(size);
            }
            channel.close();
        } catch (IOException ignored) {
            // closing anyway: the padding is told from records when it is read back
        }
    }

    /**
     * Under the spool's lock, every record being acknowledged: what was not written never need be; the bytes
     * dropped, their buffers given back.
     */
    long dropUnwritten(WriteBuffers buffers) {
        long bytes = 0;
        for (Chunk c : unwritten) {
            bytes += c.bytes().remaining();
            if (c != lastChunk) {
                buffers.give(c.buffer);
            }
        }
        unwritten.clear();
        if (lastChunk != null) {
            buffers.give(lastChunk.buffer);
            lastChunk = null;
        }
        return bytes;
    }

    /** Closes and deletes the file. */
    void delete() throws IOException {
        close();
        Files.deleteIfExists(path);
    }
}
