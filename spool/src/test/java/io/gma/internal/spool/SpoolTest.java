package io.gma.internal.spool;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.stream.LongStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** A spool on a real directory: what it hands back after a reopen, what it deletes, what it refuses. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class SpoolTest {
    @TempDir
    Path dir;

    private static final SpoolSettings SMALL = new SpoolSettings(Fsync.BATCH, 8L << 20, 64 << 10);

    private static byte[] payload(long i, int size) {
        byte[] b = new byte[size];
        byte[] tag = Long.toString(i).getBytes(UTF_8);
        System.arraycopy(tag, 0, b, 0, Math.min(tag.length, size));
        return b;
    }

    private List<SpoolRecord> reopen(SpoolSettings settings) throws IOException {
        List<SpoolRecord> got = new ArrayList<>();
        Spool.open(dir, settings, got::add).close();
        return got;
    }

    @Test
    void whatWasNotAcknowledgedComesBackInOrderWithAllItKept() throws Exception {
        List<Long> seqs = new ArrayList<>();
        try (Spool s = Spool.open(dir, SMALL, r -> { })) {
            for (int i = 0; i < 10; i++) {
                seqs.add(s.append(1_000 + i, (byte) (i % 3), i % 2 == 0 ? "alice" : "", payload(i, 100)));
            }
            assertTrue(s.awaitSafe(seqs.get(9), 10, TimeUnit.SECONDS));
            for (int i = 0; i < 10; i += 2) {
                s.ack(seqs.get(i));
            }
        }
        List<SpoolRecord> back = reopen(SMALL);
        assertEquals(5, back.size(), back.toString());
        for (int k = 0; k < 5; k++) {
            int i = 2 * k + 1;
            SpoolRecord r = back.get(k);
            assertEquals(seqs.get(i), r.seq());
            assertEquals(1_000 + i, r.arrivalMillis());
            assertEquals((byte) (i % 3), r.lane());
            assertEquals("", r.identity());
            assertArrayEquals(payload(i, 100), r.payload());
        }
    }

    @Test
    void acknowledgementsAreWrittenOnceTheyComeDueWithNothingElseToWakeTheCommitter() throws Exception {
        try (Spool s = Spool.open(dir, SMALL, r -> { })) {
            long seq = s.append(0, (byte) 0, "", payload(1, 64));
            assertTrue(s.awaitSafe(seq, 10, TimeUnit.SECONDS));
            long before = s.stats().written();
            s.ack(seq);
            // nothing is appended after it: the committer's own time set for it must write it (8 bytes and framing)
            await().atMost(Duration.ofSeconds(5)).until(() -> s.stats().written() > before);
        }
    }

    @Test
    void recordsTheNextHopTookBeforeTheyWereWrittenAreNeverWrittenAndTheRestComeBackWhole() throws Exception {
        SpoolSettings oneSegment = new SpoolSettings(Fsync.BATCH, 64L << 20, 16L << 20);
        List<Long> seqs = new ArrayList<>();
        int recordBytes = RecordFormat.dataBytes(0, 1000);
        try (Spool s = Spool.open(dir, oneSegment, r -> { })) {
            s.ack(s.append(0, (byte) 0, "", payload(0, 1000))); // acknowledgements flow: records wait for them
            for (int i = 1; i <= 1000; i++) {
                seqs.add(s.append(i, (byte) 0, "", payload(i, 1000)));
            }
            for (int i = 0; i < 600; i++) {
                s.ack(seqs.get(i)); // the next hop took these at once, the other 400 not
            }
            assertTrue(s.awaitSafe(seqs.get(999), 10, TimeUnit.SECONDS));
            long records = 1001L * recordBytes;
            assertTrue(s.stats().written() < records * 3 / 5, "what was acknowledged first was not all written: "
                    + s.stats().written() + " bytes written of " + records);
        }
        List<SpoolRecord> back = new ArrayList<>();
        try (Spool s = Spool.open(dir, oneSegment, back::add)) {
            // the records left out are zeros (or a hole) before the first chunk written: no damage
            assertEquals(0, s.stats().damaged(), s.stats().toString());
        }
        assertEquals(400, back.size());
        for (int k = 0; k < 400; k++) {
            assertEquals(seqs.get(600 + k), back.get(k).seq());
            assertArrayEquals(payload(601 + k, 1000), back.get(k).payload());
        }
    }

    @Test
    void anAcknowledgementIsWrittenWithinItsDelayWhileRecordsLinger() throws Exception {
        try (Spool s = Spool.open(dir, SMALL, r -> { })) {
            long x = s.append(0, (byte) 0, "", payload(0, 64));
            s.ack(x); // acknowledgements flow: what is appended now lingers for its next hop, up to 300 ms
            long appended = System.nanoTime();
            s.append(0, (byte) 0, "", payload(1, 64));
            long c = s.append(0, (byte) 0, "", payload(2, 64));
            // x's acknowledgement is written within its 10 ms; acknowledging x again keeps them flowing meanwhile
            await().pollInterval(Duration.ofMillis(1)).atMost(Duration.ofSeconds(10)).until(() -> {
                s.ack(x);
                return bytesOf(AckLog.SUFFIX) > 0;
            });
            long acks = bytesOf(AckLog.SUFFIX);
            long records = bytesOf(Segment.SUFFIX); // x's, if the committer wrote it before its acknowledgement
            assumeTrue(System.nanoTime() - appended < 200_000_000L, "the machine was too slow for the records to"
                    + " linger still: nothing to test with");
            s.ack(c); // the committer sleeps until the records' linger ends: this wakes it sooner
            await().pollInterval(Duration.ofMillis(1)).atMost(Duration.ofSeconds(10)).until(() -> {
                s.ack(x);
                return bytesOf(AckLog.SUFFIX) > acks;
            });
            assertEquals(records, bytesOf(Segment.SUFFIX), "the acknowledgement was written before the records that"
                    + " linger, not with them");
        }
    }

    /** The bytes of the spool's files whose names end so. */
    private long bytesOf(String suffix) throws IOException {
        long bytes = 0;
        try (var files = Files.list(dir)) {
            for (Path p : (Iterable<Path>) files::iterator) {
                if (p.getFileName().toString().endsWith(suffix)) {
                    bytes += Files.size(p);
                }
            }
        }
        return bytes;
    }

    @Test
    void withFsyncAlwaysABatchThatRollsToANewSegmentIsForcedInBoth() throws Exception {
        SpoolSettings always = new SpoolSettings(Fsync.ALWAYS, 8L << 20, 64 << 10);
        try (Spool s = Spool.open(dir, always, r -> { })) {
            s.append(0, (byte) 0, "", payload(0, 1000)); // the first segment has records, and is forced
            long before = s.stats().forces();
            byte[][] payloads = new byte[100][];
            for (int i = 0; i < payloads.length; i++) {
                payloads[i] = payload(i + 1, 1000); // 100 KiB: past the first segment's 64 KiB, into a second
            }
            s.appendAll(0, "", new byte[payloads.length], payloads, payloads.length);
            // the first segment's last records are in its file, written: forced before the batch is durable too
            assertEquals(2, s.stats().forces() - before, "forces of the batch, one a segment: " + s.stats());
        }
    }

    @Test
    void aBatchIsSafeOnceItsOwnRecordsAreAcknowledgedWhateverCameBefore() throws Exception {
        try (Spool s = Spool.open(dir, SMALL, r -> { })) {
            long before = s.append(0, (byte) 0, "", payload(0, 64));
            long first = s.append(0, (byte) 0, "", payload(1, 64));
            long last = s.append(0, (byte) 0, "", payload(2, 64));
            s.ack(new long[] {first, last}, 2);
            assertTrue(s.awaitSafe(first, last, 10, TimeUnit.SECONDS));
            assertTrue(s.awaitSafe(before, 10, TimeUnit.SECONDS), "and the one before, once it is forced");
        }
    }

    @Test
    void aRecordIsSafeOnlyOnceForcedAndEachActionRunsOnceWhenItIs() throws Exception {
        try (Spool s = Spool.open(dir, SMALL, r -> { })) {
            List<Long> ran = new ArrayList<>();
            List<Long> early = new ArrayList<>();
            CountDownLatch all = new CountDownLatch(100);
            for (int i = 0; i < 100; i++) {
                long seq = s.append(0, (byte) 0, "", payload(i, 64));
                s.whenSafe(seq, () -> {
                    try {
                        boolean safe = s.awaitSafe(seq, 0, TimeUnit.SECONDS);
                        synchronized (ran) {
                            ran.add(seq);
                            if (!safe) {
                                early.add(seq);
                            }
                        }
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                    all.countDown();
                });
            }
            assertTrue(all.await(10, TimeUnit.SECONDS));
            // actions made ready by different threads (the committer, an appender finding its record safe) may
            // run in either order; callers take the highest seen (PendingAcks)
            List<Long> sorted = new ArrayList<>(ran);
            sorted.sort(null);
            assertEquals(LongStream.rangeClosed(sorted.get(0), sorted.get(0) + 99).boxed().toList(), sorted,
                    "each record's action runs once");
            assertEquals(List.of(), early, "an action runs only once its record and every one before are safe");
            assertTrue(s.stats().forces() >= 1 && s.stats().forces() <= 100, "group commit: " + s.stats());
        }
    }

    @Test
    void segmentsFullyAcknowledgedAreDeletedAndTheirAcknowledgementsAfterThem() throws Exception {
        try (Spool s = Spool.open(dir, SMALL, r -> { })) {
            List<Long> seqs = new ArrayList<>();
            for (int i = 0; i < 200; i++) { // 200 records of 1 KiB: four segments of 64 KiB
                seqs.add(s.append(0, (byte) 0, "", payload(i, 1024)));
            }
            assertTrue(s.awaitSafe(seqs.get(199), 10, TimeUnit.SECONDS));
            List<Path> files = Directory.files(dir, Segment.SUFFIX);
            assertTrue(files.size() >= 4, files.toString());
            seqs.forEach(s::ack);
            await().atMost(Duration.ofSeconds(10)).until(() -> Directory.files(dir, Segment.SUFFIX).size() == 1);
            assertEquals(0, s.stats().liveRecords());
            assertTrue(s.stats().diskBytes() < 64 << 10, s.stats().toString());
        }
        assertEquals(List.of(), reopen(SMALL), "nothing acknowledged comes back");
    }

    @Test
    void appendsPastTheBoundAreRefusedAsFullUntilAcknowledgementsFreeRoom() throws Exception {
        SpoolSettings tiny = new SpoolSettings(Fsync.BATCH, 1 << 20, 64 << 10);
        try (Spool s = Spool.open(dir, tiny, r -> { })) {
            List<Long> seqs = new ArrayList<>();
            SpoolException full = null;
            for (int i = 0; i < 2000 && full == null; i++) {
                try {
                    seqs.add(s.append(0, (byte) 0, "", payload(i, 4096)));
                } catch (SpoolException e) {
                    full = e;
                }
            }
            assertTrue(full != null && full.full(), "no refusal after " + seqs.size() + " records");
            assertTrue(full.getMessage().contains("would pass maxSpoolBytes 1048576"), full.getMessage());
            assertTrue(s.stats().diskBytes() <= 1 << 20, s.stats().toString());
            assertEquals(1, s.stats().refusedFull());
            seqs.forEach(s::ack);
            await().atMost(Duration.ofSeconds(10)).until(() -> s.stats().diskBytes() < 128 << 10);
            s.append(0, (byte) 0, "", payload(0, 4096)); // room again
        }
    }

    @Test
    void appendAllNumbersABatchInOrderKeepsAllOrNoneAndAlwaysForcesItOnce() throws Exception {
        SpoolSettings tiny = new SpoolSettings(Fsync.BATCH, 1 << 20, 64 << 10);
        byte[] lanes = {0, 1, 2, 1};
        byte[][] four = {payload(0, 100), payload(1, 100), payload(2, 100), payload(3, 100)};
        try (Spool s = Spool.open(dir, tiny, r -> { })) {
            long first = s.appendAll(7, "alice", lanes, four, 4);
            assertTrue(s.awaitSafe(first + 3, 10, TimeUnit.SECONDS));
            s.ack(first + 1);
            // a batch that does not fit whole: refused, and what of it was appended is let go
            byte[][] big = new byte[300][];
            byte[] bigLanes = new byte[300];
            for (int i = 0; i < big.length; i++) {
                big[i] = payload(100 + i, 4096);
            }
            SpoolException full = assertThrows(SpoolException.class, () -> s.appendAll(8, "", bigLanes, big, 300));
            assertTrue(full.full() && full.getMessage().contains("maxSpoolBytes 1048576"), full.getMessage());
            assertEquals(3, s.stats().liveRecords(), "the refused batch left nothing live: " + s.stats());
        }
        List<SpoolRecord> back = reopen(tiny);
        assertEquals(3, back.size(), back.toString());
        int[] kept = {0, 2, 3};
        for (int k = 0; k < 3; k++) {
            assertEquals(7, back.get(k).arrivalMillis());
            assertEquals("alice", back.get(k).identity());
            assertEquals(lanes[kept[k]], back.get(k).lane());
            assertArrayEquals(four[kept[k]], back.get(k).payload());
        }
        assertEquals(back.get(0).seq() + 3, back.get(2).seq(), "numbered in order, one after the other");
        Path always = Files.createDirectories(dir.resolve("always"));
        try (Spool s = Spool.open(always, SpoolSettings.of(Fsync.ALWAYS, 4L << 20), r -> { })) {
            long first = s.appendAll(0, "", lanes, four, 4);
            assertTrue(s.awaitSafe(first + 3, 0, TimeUnit.SECONDS), "always: durable when it returns");
            assertEquals(1, s.stats().forces(), "one force for the batch");
        }
    }

    @Test
    void aFlippedByteCostsItsRecordOnlyAndIsCounted() throws Exception {
        try (Spool s = Spool.open(dir, SMALL, r -> { })) {
            long last = 0;
            for (int i = 0; i < 5; i++) {
                last = s.append(0, (byte) 0, "", payload(i, 200));
            }
            assertTrue(s.awaitSafe(last, 10, TimeUnit.SECONDS));
        }
        Path seg = Directory.files(dir, Segment.SUFFIX).get(0);
        int recordBytes = RecordFormat.HEADER_BYTES + RecordFormat.DATA_FIXED_BYTES + 200;
        try (RandomAccessFile f = new RandomAccessFile(seg.toFile(), "rw")) {
            long at = 2L * recordBytes + 100; // inside the third record's payload
            f.seek(at);
            int b = f.read();
            f.seek(at);
            f.write(b ^ 0x40);
        }
        List<SpoolRecord> got = new ArrayList<>();
        try (Spool s = Spool.open(dir, SMALL, got::add)) {
            assertEquals(1, s.stats().damaged(), s.stats().toString());
        }
        assertEquals(List.of(1L, 2L, 4L, 5L), got.stream().map(SpoolRecord::seq).toList());
        for (SpoolRecord r : got) {
            assertArrayEquals(payload(r.seq() - 1, 200), r.payload(), "record " + r.seq() + " is intact");
        }
    }

    @Test
    void aRecordTornByACrashIsCutOffAndAppendsGoOn() throws Exception {
        long last;
        try (Spool s = Spool.open(dir, SMALL, r -> { })) {
            s.append(0, (byte) 0, "", payload(1, 300));
            last = s.append(0, (byte) 0, "", payload(2, 300));
            assertTrue(s.awaitSafe(last, 10, TimeUnit.SECONDS));
        }
        Path seg = Directory.files(dir, Segment.SUFFIX).get(0);
        try (RandomAccessFile f = new RandomAccessFile(seg.toFile(), "rw")) {
            f.setLength(f.length() - 100); // the second record's last 100 bytes never reached the disk
        }
        List<SpoolRecord> got = new ArrayList<>();
        long next;
        try (Spool s = Spool.open(dir, SMALL, got::add)) {
            assertEquals(1, s.stats().damaged());
            next = s.append(0, (byte) 0, "", payload(3, 300));
            // the torn record never was (it could not have been durable, so nobody was told it was taken): its
            // number is free again, as nothing on disk names it
            assertEquals(last, next);
            assertTrue(s.awaitSafe(next, 10, TimeUnit.SECONDS));
        }
        assertEquals(List.of(1L), got.stream().map(SpoolRecord::seq).toList());
        List<SpoolRecord> again = new ArrayList<>();
        try (Spool s = Spool.open(dir, SMALL, again::add)) {
            assertEquals(0, s.stats().damaged(), "the torn end was cut off once, not counted at every start");
        }
        assertEquals(List.of(1L, next), again.stream().map(SpoolRecord::seq).toList());
    }

    @Test
    void numbersAfterEverythingWasAcknowledgedAndDeletedAreNotMistakenForAcknowledgedOnes() throws Exception {
        try (Spool s = Spool.open(dir, SMALL, r -> { })) {
            List<Long> seqs = new ArrayList<>();
            for (int i = 0; i < 100; i++) {
                seqs.add(s.append(0, (byte) 0, "", payload(i, 1024)));
            }
            assertTrue(s.awaitSafe(seqs.get(99), 10, TimeUnit.SECONDS));
            seqs.forEach(s::ack);
            await().atMost(Duration.ofSeconds(10)).until(() -> s.stats().segments() == 1);
        }
        long fresh;
        try (Spool s = Spool.open(dir, SMALL, r -> { })) {
            fresh = s.append(0, (byte) 0, "", payload(7, 10));
            assertTrue(fresh > 100, "numbering goes on: " + fresh);
            assertTrue(s.awaitSafe(fresh, 10, TimeUnit.SECONDS));
        }
        assertEquals(List.of(fresh), reopen(SMALL).stream().map(SpoolRecord::seq).toList());
    }

    @Test
    void aDirectoryInUseIsRefusedNamingItAndItsOwner() throws Exception {
        try (Spool s = Spool.open(dir, SMALL, r -> { })) {
            SpoolException e = assertThrows(SpoolException.class, () -> Spool.open(dir, SMALL, r -> { }));
            assertFalse(e.full());
            assertTrue(e.getMessage().startsWith("the spool directory " + dir.toAbsolutePath() + " is in use by"
                    + " process " + ProcessHandle.current().pid() + "@"), e.getMessage());
        }
        Spool.open(dir, SMALL, r -> { }).close(); // free again once closed
        assertTrue(Files.exists(dir.resolve(Directory.LOCK_FILE)));
    }

    @Test
    void alwaysIsDurableWhenTheAppendReturnsAndNeverOnceWrittenWithoutAForce() throws Exception {
        Path always = Files.createDirectories(dir.resolve("always"));
        try (Spool s = Spool.open(always, SpoolSettings.of(Fsync.ALWAYS, 4L << 20), r -> { })) {
            long seq = s.append(0, (byte) 0, "", payload(1, 10));
            assertTrue(s.awaitSafe(seq, 0, TimeUnit.SECONDS), "always: durable at once");
            assertEquals(1, s.stats().forces());
            assertEquals(s.stats().written(), recordBytesIn(always.resolve(Segment.name(seq))), "in the file");
        }
        Path never = Files.createDirectories(dir.resolve("never"));
        try (Spool s = Spool.open(never, SpoolSettings.of(Fsync.NEVER, 4L << 20), r -> { })) {
            long seq = s.append(0, (byte) 0, "", payload(1, 10));
            assertTrue(s.awaitSafe(seq, 5, TimeUnit.SECONDS), "never: durable once the committer wrote it");
            assertEquals(0, s.stats().forces());
            assertEquals(s.stats().written(), recordBytesIn(never.resolve(Segment.name(seq))), "in the file");
        }
    }

    @Test
    void appendWrittenIsInItsFileWhenItReturnsWhileAPlainAppendWaitsForTheCommitter() throws Exception {
        CountDownLatch held = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        Spool.crashPoints = point -> {
            if (point.equals("forced")) {
                held.countDown();
                try {
                    release.await(10, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        };
        try (Spool s = Spool.open(dir, SMALL, r -> { })) {
            long first = s.append(0, (byte) 0, "", payload(1, 10));
            assertTrue(held.await(10, TimeUnit.SECONDS), "the committer wrote and forced the first record");
            Path file = dir.resolve(Segment.name(first));
            long afterFirst = recordBytesIn(file);
            s.append(0, (byte) 0, "", payload(2, 10));
            assertEquals(afterFirst, recordBytesIn(file), "a plain append waits in memory for the held committer");
            s.appendWritten(0, (byte) 0, "", payload(3, 10));
            assertEquals(s.stats().written(), recordBytesIn(file), "appendWritten wrote itself and what was before it");
            release.countDown();
        } finally {
            release.countDown();
            Spool.crashPoints = point -> { };
        }
    }

    /**
     * The bytes of whole, intact records in a data file, read as recovery reads it: past them, a direct write's
     * padding (zeros to the end of a block), which is neither damage nor a torn record.
     */
    private static long recordBytesIn(Path file) throws IOException {
        byte[] bytes = Files.readAllBytes(file);
        RecordReader.Scan scan = RecordReader.scan(bytes, bytes.length, RecordFormat.DATA_MAGIC, body -> { });
        assertEquals(0, scan.damaged(), file + " holds damage");
        assertFalse(scan.tornEnd(), file + " ends torn");
        return scan.validEnd();
    }
}
