package io.gma.internal.spool;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What a spool's directory holds when it opens: the acknowledgements first, then every data file in order,
 * whose records not acknowledged are handed out. A record torn by a crash at the end of the last file is cut off
 * (it was never durable, so never acknowledged to anyone); a damaged record anywhere else is skipped, counted and
 * logged. Data files with nothing left to hand out are deleted, before the acknowledgements that named them.
 */
final class Recovery {
    private static final Logger LOG = LoggerFactory.getLogger(Spool.class);

    /**
     * What was found.
     *
     * @param segments the data files kept, oldest first
     * @param nextSeq the sequence number the next append gets: past every one in a data or acknowledgement file
     * @param recovered records handed out
     * @param damaged damaged runs skipped
     * @param torn 1 when the last data file ended with a record cut short (cut off), else 0
     */
    record Result(AckLog ackLog, List<Segment> segments, long nextSeq, long recovered, long damaged, long torn) {
    }

    private Recovery() {
    }

    static Result run(Path dir, Consumer<SpoolRecord> live) throws IOException {
        long[][] acked = {new long[1024]};
        int[] ackCount = {0};
        long[] damaged = {0};
        AckLog ackLog = AckLog.open(dir, Directory.files(dir, AckLog.SUFFIX), seq -> {
            if (ackCount[0] == acked[0].length) {
                acked[0] = Arrays.copyOf(acked[0], acked[0].length * 2);
            }
            acked[0][ackCount[0]++] = seq;
        }, scan -> damaged[0] += count(dir, "acknowledgement", scan));
        long[] sortedAcks = Arrays.copyOf(acked[0], ackCount[0]);
        Arrays.sort(sortedAcks);
        List<Path> files = Directory.files(dir, Segment.SUFFIX);
        List<Segment> kept = new ArrayList<>();
        List<Segment> empty = new ArrayList<>();
        long maxSeq = ackLog.maxSeq();
        long torn = 0;
        long recovered = 0;
        for (int i = 0; i < files.size(); i++) {
            Segment s = Segment.open(files.get(i));
            byte[] bytes = s.readAll();
            long[] found = {0, maxSeq};
            RecordReader.Scan scan = RecordReader.scan(bytes, bytes.length, RecordFormat.DATA_MAGIC, body -> {
                SpoolRecord r = RecordFormat.readData(body);
                if (r == null || r.seq() < s.firstSeq) {
                    return; // intact bytes that name no record of this file: not one of ours to hand out
                }
                boolean wasAcked = Arrays.binarySearch(sortedAcks, r.seq()) >= 0;
                s.recovered(r.seq(), wasAcked);
                found[1] = Math.max(found[1], r.seq());
                if (!wasAcked) {
                    found[0]++;
                    live.accept(r);
                }
            });
            recovered += found[0];
            maxSeq = Math.max(found[1], s.firstSeq - 1); // an empty file still says where numbering had got to
            boolean last = i == files.size() - 1;
            damaged[0] += count(dir, "data", scan);
            if (scan.tornEnd() && last) {
                torn = 1;
                LOG.info("spool {}: {} ends with {} bytes of a record cut short by a crash; cut off", dir,
                        s.path.getFileName(), bytes.length - scan.validEnd());
            }
            if (scan.validEnd() < bytes.length && last) {
                s.truncate(scan.validEnd()); // a torn record, or the zeros that padded a direct write
            }
            if (s.live() == 0 && !last) {
                empty.add(s);
            } else {
                kept.add(s);
            }
        }
        for (Segment s : empty) {
            s.delete();
        }
        if (!empty.isEmpty()) {
            Directory.force(dir);
        }
        long nextSeq = Math.max(1, maxSeq + 1);
        ackLog.deleteBelow(kept.isEmpty() ? nextSeq : kept.get(0).firstSeq);
        return new Result(ackLog, kept, nextSeq, recovered, damaged[0], torn);
    }

    /** Logs the damaged runs a scan skipped; how many. */
    private static int count(Path dir, String kind, RecordReader.Scan scan) {
        if (scan.damaged() > 0) {
            LOG.warn("spool {}: skipped {} damaged run(s) of bytes in a {} file (a torn or corrupt record, told by"
                    + " its CRC32C)", dir, scan.damaged(), kind);
        }
        return scan.damaged();
    }
}
