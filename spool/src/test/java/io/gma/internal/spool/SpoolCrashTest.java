package io.gma.internal.spool;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A spool written by a process of its own, killed with SIGKILL at a random moment, three times over the same
 * directory: every record it said was durable and did not acknowledge is handed back intact, once, in order;
 * none is damaged. And a crash between deleting a data file and its acknowledgements loses nothing and mistakes
 * nothing for acknowledged.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class SpoolCrashTest {
    @TempDir
    Path dir;

    /** What a killed writer said: the records durable (seq to its number), and those it acknowledged. */
    private record Said(Map<Long, Long> durable, Set<Long> acked, List<String> lines) {
    }

    private static Said runAndKill(Path dir, String crashAt, boolean ackAll, int durableBeforeKill)
            throws Exception {
        List<String> command = List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx128m", "-cp", System.getProperty("java.class.path"), SpoolWriterMain.class.getName(),
                dir.toString(), "BATCH", Long.toString(64 << 10), crashAt, Boolean.toString(ackAll));
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        Said said = new Said(new HashMap<>(), new HashSet<>(), new ArrayList<>());
        int durable = 0;
        try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), UTF_8))) {
            for (String line; (line = r.readLine()) != null;) {
                said.lines.add(line);
                String[] w = line.split(" ");
                if (w[0].equals("durable")) {
                    said.durable.put(Long.parseLong(w[1]), Long.parseLong(w[2]));
                    if (++durable == durableBeforeKill) {
                        // kill -9: no shutdown hook, no close; what it printed before it died is still read
                        new ProcessBuilder("kill", "-9", Long.toString(p.pid())).start().waitFor();
                    }
                } else if (w[0].equals("acked")) {
                    said.acked.add(Long.parseLong(w[1]));
                }
            }
        } finally {
            p.destroyForcibly();
            p.waitFor(30, TimeUnit.SECONDS);
        }
        return said;
    }

    /** Opens the spool as the next run would: what it hands back, checked intact and in order. */
    private static List<SpoolRecord> recover(Path dir, Map<Long, Long> numbers) throws IOException {
        List<SpoolRecord> got = new ArrayList<>();
        try (Spool s = Spool.open(dir, new SpoolSettings(Fsync.BATCH, 256L << 20, 64 << 10), got::add)) {
            assertEquals(0, s.stats().damaged() - tornAtMostOne(s), "damaged: " + s.stats());
        }
        long previous = 0;
        for (SpoolRecord r : got) {
            assertTrue(r.seq() > previous, "in order, once each: " + r.seq() + " after " + previous);
            previous = r.seq();
            assertEquals("writer", r.identity());
            Long n = numbers.get(r.seq());
            if (n != null) {
                String tag = new String(r.payload(), 0, ("record " + n).length(), UTF_8);
                assertEquals("record " + n, tag, "record " + r.seq() + " intact");
            }
        }
        return got;
    }

    /** A kill in mid-write may leave one torn record at the end of the last file: that one damage is expected. */
    private static long tornAtMostOne(Spool s) {
        return Math.min(1, s.stats().damaged());
    }

    @Test
    void killedThreeTimesWhileWritingItLosesNothingItSaidWasDurable() throws Exception {
        Map<Long, Long> numbers = new HashMap<>();
        Set<Long> mustComeBack = new HashSet<>();
        for (int round = 0; round < 3; round++) {
            Said said = runAndKill(dir, "none", false, ThreadLocalRandom.current().nextInt(500, 5000));
            numbers.putAll(said.durable);
            for (Long seq : said.durable.keySet()) {
                if (!said.acked.contains(seq)) {
                    mustComeBack.add(seq);
                }
            }
            mustComeBack.removeAll(said.acked);
            Set<Long> back = new HashSet<>();
            for (SpoolRecord r : recover(dir, numbers)) {
                back.add(r.seq());
            }
            Set<Long> lost = new HashSet<>(mustComeBack);
            lost.removeAll(back);
            assertEquals(Set.of(), lost, "round " + (round + 1) + ": durable, not acknowledged, and not handed"
                    + " back (" + said.durable.size() + " durable this round)");
        }
    }

    @Test
    void aCrashBetweenDeletingDataAndItsAcknowledgementsLosesNothingAndMistakesNothing() throws Exception {
        Said said = runAndKill(dir, "segmentsDeleted", true, Integer.MAX_VALUE);
        assertTrue(said.lines.contains("halting at segmentsDeleted"), "it never deleted a segment: "
                + said.lines.subList(0, Math.min(5, said.lines.size())));
        recover(dir, said.durable);
        long fresh;
        try (Spool s = Spool.open(dir, new SpoolSettings(Fsync.BATCH, 256L << 20, 64 << 10), r -> { })) {
            fresh = s.append(0, (byte) 1, "writer", "after the crash".getBytes(UTF_8));
            assertTrue(s.awaitSafe(fresh, 10, TimeUnit.SECONDS));
        }
        List<Long> back = new ArrayList<>();
        try (Spool s = Spool.open(dir, new SpoolSettings(Fsync.BATCH, 256L << 20, 64 << 10), r -> back.add(
                r.seq()))) {
            assertTrue(back.contains(fresh), "the record appended after the crash was taken for acknowledged: "
                    + fresh + " not in " + back);
        }
    }

    /**
     * A record marked with ackWritten is not handed back after a crash the moment after (a sender told its send
     * failed may send it again); one marked with ack alone may be, its mark waiting for the spool's batch.
     */
    @Test
    void aRecordMarkedWrittenIsNotHandedBackAfterACrashTheMomentAfter() throws Exception {
        assertEquals(List.of("record 0", "record 2", "record 4", "record 6", "record 8"), haltAndRead("written"));
    }

    private List<String> haltAndRead(String how) throws Exception {
        Path d = dir.resolve(how);
        Process p = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx64m", "-cp", System.getProperty("java.class.path"), AckWrittenMain.class.getName(),
                d.toString(), how).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), UTF_8);
        assertTrue(p.waitFor(30, TimeUnit.SECONDS) && out.contains("halting"), out);
        List<String> back = new ArrayList<>();
        try (Spool s = Spool.open(d, new SpoolSettings(Fsync.BATCH, 256L << 20, 64 << 10), r -> back.add(
                new String(r.payload(), UTF_8)))) {
            return back;
        }
    }
}
