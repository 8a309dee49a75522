package io.gma.internal.spool;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.BitSet;

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
    /** Written to since the last force. */
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
     * Appends one framed record. A failed write (a full disk) cuts the file back to where it was, so that no torn
     * record stays behind a good one.
     */
    void append(ByteBuffer record, long seq) throws IOException {
        long at = size;
        try {
            while (record.hasRemaining()) {
                channel.write(record, at + (record.position()));
            }
        } catch (IOException e) {
            try {
                channel.truncate(at);
            } catch (IOException ignored) {
                // the torn record stays; its CRC will tell
            }
            throw e;
        }
        size = at + record.limit();
        present.set(index(seq));
        live++;
        endSeq = seq + 1;
        dirty = true;
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

    /** Closes and deletes the file. */
    void delete() throws IOException {
        close();
        Files.deleteIfExists(path);
    }
}
