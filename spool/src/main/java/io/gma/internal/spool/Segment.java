package io.gma.internal.spool;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;

/**
 * One data file of a spool: records appended one after another, their sequence numbers contiguous from the one
 * in its name ({@code 00000000000000000042.seg} starts at 42), and which of them the next hop has acknowledged.
 * A segment whose every record is acknowledged is deleted whole. Guarded by its spool's lock, but for
 * {@link #force}, which the committer calls outside it.
 */
final class Segment {
    static final String SUFFIX = ".seg";

    final long firstSeq;
    final Path path;
    private final FileChannel channel;
    /** Bytes in the file; the next record goes here. */
    private long size;
    /** The sequence number after the last record in the file. */
    private long endSeq;
    /** Records in the file (by seq - firstSeq), and those acknowledged. */
    private final BitSet present = new BitSet();
    private final BitSet acked = new BitSet();
    private int live;
    /** Written to since the last force (appended and not written is not dirty yet: see {@link Chunk}). */
    private volatile boolean dirty;

    private Segment(long firstSeq, Path path, FileChannel channel, long size) {
        this.firstSeq = firstSeq;
        this.path = path;
        this.channel = channel;
        this.size = size;
        this.endSeq = firstSeq;
    }

    /** A new, empty segment whose first record will be {@code firstSeq}. */
    static Segment create(Path dir, long firstSeq) throws IOException {
        Path p = dir.resolve(name(firstSeq));
        FileChannel c = FileChannel.open(p, StandardOpenOption.CREATE_NEW, StandardOpenOption.READ,
                StandardOpenOption.WRITE);
        return new Segment(firstSeq, p, c, 0);
    }

    /** An existing segment, to be filled by {@link #recovered} as its records are read. */
    static Segment open(Path file) throws IOException {
        FileChannel c = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE);
        return new Segment(firstSeqOf(file), file, c, c.size());
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

    /** Cuts the file back to {@code validEnd}: what follows is a record torn by a crash, never acknowledged. */
    void truncate(long validEnd) throws IOException {
        channel.truncate(validEnd);
        channel.force(true);
        size = validEnd;
    }

    /**
     * Records appended and not written to the file yet, in a few large buffers, each with its place in the file:
     * what the committer writes in one call each, rather than one system call a record. Nothing here has been
     * said to be durable. Guarded by the spool's lock; a chunk taken out is its taker's alone.
     */
    static final class Chunk {
        final ByteBuffer buffer;
        /** Where in the file its first byte goes. */
        final long offset;
        /** Taken out to be written: appends go to a new chunk. */
        boolean sealed;

        Chunk(ByteBuffer buffer, long offset) {
            this.buffer = buffer;
            this.offset = offset;
        }

        /** Its bytes, to write, without touching the buffer's own position. */
        ByteBuffer bytes() {
            return buffer.duplicate().flip();
        }
    }

    private final ArrayDeque<Chunk> unwritten = new ArrayDeque<>();

    /**
     * Appends one record, encoded into the write buffer ({@code buffers} gives it room); the committer writes
     * it. Under the spool's lock.
     */
    void append(long seq, long arrivalMillis, byte lane, byte[] identity, byte[] payload, int recordBytes,
            WriteBuffers buffers) {
        Chunk last = unwritten.peekLast();
        if (last == null || last.sealed || last.buffer.remaining() < recordBytes) {
            if (last != null) {
                last.sealed = true;
            }
            last = new Chunk(buffers.take(recordBytes), size);
            unwritten.addLast(last);
        }
        RecordFormat.writeData(last.buffer, seq, arrivalMillis, lane, identity, payload);
        size += recordBytes;
        present.set(index(seq));
        live++;
        endSeq = seq + 1;
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

    /**
     * Writes one chunk at its place in the file. A write that fails part way is simply written whole again
     * later, at the same place.
     */
    void write(Chunk c) throws IOException {
        ByteBuffer b = c.bytes();
        while (b.hasRemaining()) {
            channel.write(b, c.offset + b.position());
        }
        dirty = true;
    }

    /**
     * Takes back the record just appended, {@code recordBytes} long, whose write failed (with {@link Fsync#ALWAYS},
     * where the write is the append's own): the file is cut back to where it was. Under the spool's lock.
     */
    void unappend(long seq, int recordBytes) {
        unwritten.clear();
        size -= recordBytes;
        present.clear(index(seq));
        live--;
        endSeq = seq;
        try {
            channel.truncate(size);
        } catch (IOException ignored) {
            // the torn record stays; its CRC will tell
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

    void close() {
        try {
            channel.close();
        } catch (IOException ignored) {
            // closing anyway
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
            buffers.give(c.buffer);
        }
        unwritten.clear();
        return bytes;
    }

    /** Closes and deletes the file. */
    void delete() throws IOException {
        close();
        Files.deleteIfExists(path);
    }
}
