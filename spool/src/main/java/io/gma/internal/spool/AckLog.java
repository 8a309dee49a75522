package io.gma.internal.spool;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import java.util.function.Consumer;
import java.util.function.LongConsumer;

/**
 * Which records the next hop acknowledged, appended to files of their own ({@code 00000000000000000042.ack},
 * named by the spool's next sequence number when the file was made), so that a data file is never written
 * twice. At start they tell which records need not go out again. A file goes once every record it names is in a
 * data file that is gone: then it tells nothing any more. Written by the committer only.
 */
final class AckLog {
    static final String SUFFIX = ".ack";
    /** An acknowledgement file is closed, and a new one begun, past this size. */
    static final long ROLL_BYTES = 4L << 20;

    /** One file, and the highest sequence number it names. */
    private static final class AckFile {
        final Path path;
        long maxSeq;

        AckFile(Path path, long maxSeq) {
            this.path = path;
            this.maxSeq = maxSeq;
        }
    }

    private final Path dir;
    private final Deque<AckFile> files = new ArrayDeque<>();
    private FileChannel active;
    private long activeSize;
    private boolean dirty;

    private AckLog(Path dir) {
        this.dir = dir;
    }

    /**
     * The acknowledgement files of {@code dir}, read: {@code each} is handed every sequence number they name
     * (damaged records are skipped and counted in the scans).
     */
    static AckLog open(Path dir, List<Path> existing, LongConsumer each, Consumer<RecordReader.Scan> scans)
            throws IOException {
        AckLog log = new AckLog(dir);
        for (Path p : existing) {
            byte[] bytes = Files.readAllBytes(p);
            long[] max = {-1};
            scans.accept(RecordReader.scan(bytes, bytes.length, RecordFormat.ACK_MAGIC, body -> {
                while (body.remaining() >= 8) {
                    long seq = body.getLong();
                    max[0] = Math.max(max[0], seq);
                    each.accept(seq);
                }
            }));
            log.files.addLast(new AckFile(p, max[0]));
        }
        return log;
    }

    static long firstSeqOf(Path file) {
        String n = file.getFileName().toString();
        return Long.parseLong(n.substring(0, n.length() - SUFFIX.length()));
    }

    /**
     * Appends the acknowledgement of {@code count} sequence numbers, a new file first when there is none; the
     * bytes written.
     */
    int append(long[] seqs, int count, long nextSeq) throws IOException {
        if (active == null || activeSize >= ROLL_BYTES) {
            roll(nextSeq);
        }
        ByteBuffer record = RecordFormat.acks(seqs, count);
        long at = activeSize;
        try {
            while (record.hasRemaining()) {
                active.write(record, at + record.position());
            }
        } catch (IOException e) {
            try {
                active.truncate(at); // the torn record goes, so that the next one follows a whole one
            } catch (IOException ignored) {
                // the torn record stays; its CRC will tell
            }
            throw e;
        }
        activeSize = at + record.limit();
        AckFile last = files.peekLast();
        for (int i = 0; i < count; i++) {
            last.maxSeq = Math.max(last.maxSeq, seqs[i]);
        }
        dirty = true;
        return record.limit();
    }

    private void roll(long nextSeq) throws IOException {
        if (active != null) {
            active.force(false);
            active.close();
        }
        Path p = dir.resolve(String.format("%020d", nextSeq) + SUFFIX);
        active = FileChannel.open(p, StandardOpenOption.CREATE, StandardOpenOption.WRITE);
        activeSize = active.size();
        AckFile last = files.peekLast();
        if (last == null || !last.path.equals(p)) { // nothing was appended since that file was made: it goes on
            files.addLast(new AckFile(p, -1));
        }
        Directory.force(dir);
    }

    /** Forces what was appended since the last force. */
    void force() throws IOException {
        if (dirty) {
            dirty = false;
            active.force(false);
        }
    }

    /**
     * Deletes the files that name only records below {@code lowestLive} (the first sequence number of the oldest
     * data file left, or the next one when none is): their records are gone, so they tell nothing. The file
     * being written stays. The caller has made the data files' deletion durable first, so that no record whose
     * acknowledgement is deleted can come back.
     */
    int deleteBelow(long lowestLive) throws IOException {
        int deleted = 0;
        while (files.size() > (active == null ? 0 : 1) && files.peekFirst().maxSeq < lowestLive) {
            Files.deleteIfExists(files.pollFirst().path);
            deleted++;
        }
        return deleted;
    }

    /** The highest sequence number any file names; -1 when none. */
    long maxSeq() {
        long max = -1;
        for (AckFile f : files) {
            max = Math.max(max, f.maxSeq);
        }
        return max;
    }

    int files() {
        return files.size();
    }

    void close() {
        if (active != null) {
            try {
                active.force(false);
                active.close();
            } catch (IOException ignored) {
                // closing anyway: an acknowledgement lost makes a record go out again, which its receiver drops
            }
        }
    }
}
