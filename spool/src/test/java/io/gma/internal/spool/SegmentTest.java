package io.gma.internal.spool;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The segment's chunks, where the spool's interleavings are hard to force: one thread, no committer. */
class SegmentTest {
    private static final int PAYLOAD = 1000;
    @TempDir
    Path dir;
    private final WriteBuffers buffers = new WriteBuffers();
    private long next = 1;

    private void append(Segment s) {
        byte[] payload = new byte[PAYLOAD];
        payload[0] = (byte) next;
        s.append(next++, 0, (byte) 0, new byte[0], payload, RecordFormat.dataBytes(0, PAYLOAD), buffers);
    }

    private void appendUntilUnwritten(Segment s, int chunks) {
        while (s.unwritten().size() < chunks) {
            append(s);
        }
    }

    private static void ackAll(Segment s, Segment.Chunk c) {
        for (long seq = c.firstSeq; seq < c.endSeq; seq++) {
            s.ack(seq);
        }
    }

    /**
     * A chunk dropped from the middle gives its buffer back at once; the chunk before it, skipped later, must not
     * zero the lead of the dropped one, whose buffer a newer chunk has taken by then: that newer chunk would write
     * zeros over records already in the file, and its own first record.
     */
    @Test
    void aChunkSkippedAfterTheNextWasDroppedLeavesTheBufferThatChunkGaveBackAlone() throws Exception {
        Segment s = Segment.create(dir, 1);
        appendUntilUnwritten(s, 3);
        List<Segment.Chunk> chunks = s.unwritten();
        Segment.Chunk first = chunks.get(0);
        Segment.Chunk middle = chunks.get(1);
        ackAll(s, middle);
        s.dropAcknowledged(buffers); // the middle one: its buffer goes back to the pool
        appendUntilUnwritten(s, 3); // the third fills, and a fourth takes a buffer from the pool
        Segment.Chunk fourth = s.unwritten().get(2);
        assertSame(middle.buffer, fourth.buffer, "the pool hands the dropped chunk's buffer to the next chunk");
        long live = chunks.get(2).firstSeq;
        ackAll(s, first);
        s.dropAcknowledged(buffers); // the first one: its skip zeroes its records in the leads after it
        for (Segment.Chunk c : s.takeUnwritten()) {
            s.write(c);
            s.written(c, buffers);
        }
        s.force();

        byte[] bytes = Files.readAllBytes(s.path);
        TreeSet<Long> found = new TreeSet<>();
        RecordReader.Scan scan = RecordReader.scan(bytes, bytes.length, RecordFormat.DATA_MAGIC,
                b -> found.add(RecordFormat.readData(b).seq()));
        List<Long> missing = new ArrayList<>();
        for (long seq = live; seq < next; seq++) {
            if (!found.contains(seq)) {
                missing.add(seq);
            }
        }
        assertEquals(List.of(), missing, "records not acknowledged, missing from the file; " + scan);
        assertEquals(0, scan.damaged(), scan.toString());
    }
}
