package io.gma.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.awaitility.Awaitility.await;

import io.gma.tables.ColumnType;
import io.gma.tables.Row;
import io.gma.tables.RowCodec;
import io.gma.tables.TableException;
import io.gma.tables.TableSchema;
import io.gma.wire.ErrorCode;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The producer's side of monitoring tables, spoken to by hand: declaring, inserting (and the errors of bad rows),
 * and answering TABLE_QUERY, TABLE_CANCEL and TABLE_LATEST as docs/tables.md says.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class TablePublisherTest {
    static final TableSchema HOST_CPU = TableSchema.builder("host_cpu").column("site", ColumnType.STRING)
            .column("host", ColumnType.STRING).column("cpu", ColumnType.INTEGER).column("load1", ColumnType.DOUBLE)
            .primaryKey("host", "cpu").predicate("site = 'cardiff'").build();
    private DirectFixture fixture;
    private Producer producer;
    private Consumer consumer;

    @BeforeEach
    void start() throws Exception {
        fixture = new DirectFixture();
        producer = fixture.producer("cpu").build();
        consumer = fixture.consumer("reader").build();
        producer.declare(HOST_CPU);
    }

    @AfterEach
    void stop() throws Exception {
        consumer.close();
        producer.close();
        fixture.close();
    }

    @Test
    void theInsertClockFollowsTheWallClockAndNeverGoesBackOnOneThread() {
        // across a few anchors (100 ms each): within a millisecond of Instant.now (which is read before and after,
        // so that a descheduled thread does not count), and never behind the time it gave before
        long last = Long.MIN_VALUE;
        long end = System.nanoTime() + 3 * TablePublisher.CLOCK_ANCHOR_NANOS + 50_000_000;
        int calls = 0;
        while (System.nanoTime() < end) {
            java.time.Instant before = java.time.Instant.now();
            long now = TablePublisher.nowMicros();
            java.time.Instant after = java.time.Instant.now();
            long b = before.getEpochSecond() * 1_000_000 + before.getNano() / 1000;
            long a = after.getEpochSecond() * 1_000_000 + after.getNano() / 1000;
            assertTrue(now >= b - 1_000 && now <= a + 1_000, now + " outside [" + b + ", " + a + "] by more than 1 ms");
            assertTrue(now >= last, now + " after " + last);
            last = now;
            calls++;
        }
        assertTrue(calls > 1000, calls + " calls");
    }

    @Test
    void aRowEncodedOnceReachesEveryQueryAlikeAndInOrderThroughATinyBlockingQueue() throws Exception {
        // one row's bytes go behind each query's id: three queries (two consumers), rows of every type with NULLs,
        // NaN, -0.0 and strings beyond ASCII, through send queues of 4 messages that block the inserting thread
        TableSchema mixed = TableSchema.builder("mixed").column("k", ColumnType.STRING)
                .column("n", ColumnType.INTEGER).column("x", ColumnType.DOUBLE).column("b", ColumnType.BOOLEAN)
                .column("t", ColumnType.TIMESTAMP).primaryKey("k", "n").build();
        try (Producer tiny = fixture.producer("tiny").maxQueuedMessages(4).build();
                Consumer other = fixture.consumer("other").build()) {
            tiny.declare(mixed);
            List<TableRow> all = java.util.Collections.synchronizedList(new ArrayList<>());
            List<TableRow> even = java.util.Collections.synchronizedList(new ArrayList<>());
            List<TableRow> projected = java.util.Collections.synchronizedList(new ArrayList<>());
            try (ContinuousQuery q1 = consumer.continuous("SELECT * FROM mixed", all::add);
                    ContinuousQuery q2 = consumer.continuous("SELECT * FROM mixed WHERE b = true", even::add);
                    ContinuousQuery q3 = other.continuous("SELECT t, k, x FROM mixed WHERE n >= 1000",
                            projected::add)) {
                String[] keys = {"node-0042.cardiff.gma", "z\u00fcrich", "\u8282\u70b9", "\ud83d\ude00", "",
                    "x".repeat(130)};
                double[] xs = {0.25, Double.NaN, -0.0, 1e300, 0.0};
                List<Row> rows = new ArrayList<>();
                for (int i = 0; i < 2_000; i++) {
                    Row row = Row.of(keys[i % keys.length], (long) i, i % 7 == 0 ? null : xs[i % xs.length], i % 2 == 0,
                            (1L << 50) + i);
                    rows.add(row);
                    assertEquals(3 - (i % 2 == 0 ? 0 : 1) - (i >= 1000 ? 0 : 1), tiny.insert("mixed", row));
                }
                await().atMost(Duration.ofSeconds(30)).until(() -> all.size() == 2_000 && even.size() == 1_000
                        && projected.size() == 1_000);
                assertEquals(rows, all.stream().map(TableRow::row).toList());
                assertEquals(rows.stream().filter(r -> r.getBoolean(3)).toList(), even.stream().map(TableRow::row)
                        .toList());
                assertEquals(rows.subList(1000, 2000).stream().map(r -> Row.of(r.get(4), r.get(0), r.get(2))).toList(),
                        projected.stream().map(TableRow::row).toList());
                // the same insert time in every query's copy of a row
                for (int i = 0; i < 1000; i++) {
                    assertEquals(all.get(2 * i).insertMicros(), even.get(i).insertMicros());
                    assertEquals(all.get(1000 + i).insertMicros(), projected.get(i).insertMicros());
                    assertTrue(i == 0 || all.get(i - 1).insertMicros() <= all.get(i).insertMicros());
                }
            }
        }
    }

    @Test
    void declarePublishesTheTableAtTheRegistry() throws Exception {
        var rows = consumer.query("SELECT name, predicate FROM publishers WHERE table_name = 'host_cpu'").rows();
        assertEquals(List.of(List.of(producer.name(), "site = 'cardiff'")), rows);
    }

    @Test
    void declaringAnotherTableOfTheSameNameIsRefusedNamingTheDifference() throws Exception {
        try (Producer other = fixture.producer("other").build()) {
            TableSchema differs = TableSchema.builder("host_cpu").column("site", ColumnType.STRING)
                    .column("host", ColumnType.STRING).column("cpu", ColumnType.INTEGER)
                    .column("load1", ColumnType.INTEGER).primaryKey("host", "cpu").build();
            EndpointException ex = assertThrows(EndpointException.class, () -> other.declare(differs));
            assertTrue(ex.getMessage().contains("column load1 is INTEGER here, DOUBLE in the registry"),
                    ex.getMessage());
        }
    }

    @Test
    void badInsertsAreRefusedNamingTheProblem() {
        TableException unknown = assertThrows(TableException.class,
                () -> producer.insert("host_mem", Row.of("cardiff", "n1", 0L, 1.0)));
        assertTrue(unknown.getMessage().startsWith("table host_mem is not declared by " + producer.name()),
                unknown.getMessage());
        TableException type = assertThrows(TableException.class,
                () -> producer.insert("host_cpu", Row.of("cardiff", "n1", 0L, "high")));
        assertTrue(type.getMessage().contains("load1"), type.getMessage());
        TableException key = assertThrows(TableException.class,
                () -> producer.insert("host_cpu", Row.of("cardiff", null, 0L, 1.0)));
        assertTrue(key.getMessage().contains("host"), key.getMessage());
        TableException share = assertThrows(TableException.class,
                () -> producer.insert("host_cpu", Row.of("lyon", "n1", 0L, 1.0)));
        assertTrue(share.getMessage().contains("site = 'cardiff'"), share.getMessage());
        assertEquals(0, producer.insert("host_cpu", Row.of("cardiff", "n1", 0L, 1.0)));
    }

    @Test
    void aLoneRowGoesAloneAndABurstTravelsInBatchesInOrderTheLastAfterItsLinger() throws Exception {
        List<TableRow> got = new java.util.concurrent.CopyOnWriteArrayList<>();
        try (ContinuousQuery q = consumer.continuous("SELECT host, cpu FROM host_cpu", got::add)) {
            producer.insert("host_cpu", Row.of("cardiff", "lone", 0L, 1.0)); // the query is quiet: at once
            await().atMost(Duration.ofSeconds(10)).until(() -> got.size() == 1);
            Thread.sleep(TablePublisher.LINGER_NANOS / 1_000_000 + 5); // quiet again
            long before = consumer.stats().messagesIn();
            int burst = 10 * TablePublisher.BATCH_ROWS + 7; // the last 7 wait for the linger, then go
            for (int i = 0; i < burst; i++) {
                producer.insert("host_cpu", Row.of("cardiff", "n", (long) i, 1.0));
            }
            await().atMost(Duration.ofSeconds(10)).until(() -> got.size() == 1 + burst);
            Thread.sleep(50);
            assertEquals(1 + burst, got.size());
            for (int i = 0; i < burst; i++) {
                assertEquals(Row.of("n", (long) i), got.get(1 + i).row(), "row " + i);
            }
            long messages = consumer.stats().messagesIn() - before;
            // the first at once, then full batches, and the last after their linger: 12 messages (more if a slow
            // thread sees a linger end within the burst; and a PING or ACK may come in too)
            assertTrue(messages >= 12 && messages <= burst / 8, messages + " messages for " + burst + " rows");
        }
    }

    @Test
    void rowsThatWaitForOthersGoWhenTheProducerCloses() throws Exception {
        List<TableRow> got = new java.util.concurrent.CopyOnWriteArrayList<>();
        Producer closing = fixture.producer("closing").build();
        closing.declare(HOST_CPU);
        try (ContinuousQuery q = consumer.continuous("SELECT cpu FROM host_cpu", got::add)) {
            await().atMost(Duration.ofSeconds(10)).until(() -> q.producers().contains(closing.name()));
            for (int i = 0; i < 5; i++) {
                closing.insert("host_cpu", Row.of("cardiff", "n", (long) i, 1.0)); // 4 of them wait
            }
            closing.close();
            await().atMost(Duration.ofSeconds(10)).until(() -> got.size() == 5);
            assertEquals(List.of(Row.of(0L), Row.of(1L), Row.of(2L), Row.of(3L), Row.of(4L)),
                    got.stream().map(TableRow::row).toList());
        }
    }

    @Test
    void aStalledConsumerHoldsBackTheInsertsWithoutPilingUpThreadsAndLosesNothing() throws Exception {
        // the consumer's handler holds its link's event loop, so it neither reads nor acknowledges; rows that come
        // 0.5 ms apart are batched and the timer takes each batch: the inserting thread must feel the full queue,
        // and no thread may wait for each batch
        java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
        List<Long> got = new java.util.concurrent.CopyOnWriteArrayList<>();
        try (Producer stall = fixture.producer("stall").maxQueuedMessages(2).blockTimeout(Duration.ofSeconds(30))
                .build();
                Consumer slow = fixture.consumer("slow").build()) {
            stall.declare(HOST_CPU);
            try (ContinuousQuery q = slow.continuous("SELECT cpu FROM host_cpu", r -> {
                got.add(r.row().getLong(0));
                try {
                    release.await();
                } catch (InterruptedException ex) {
                    Thread.currentThread().interrupt();
                }
            })) {
                java.util.concurrent.atomic.AtomicInteger inserted = new java.util.concurrent.atomic.AtomicInteger();
                Thread inserter = new Thread(() -> {
                    for (int i = 0; i < 3000; i++) {
                        stall.insert("host_cpu", Row.of("cardiff", "n", (long) i, 1.0));
                        inserted.incrementAndGet();
                        java.util.concurrent.locks.LockSupport.parkNanos(500_000);
                    }
                }, "stall-inserter");
                inserter.start();
                Thread.sleep(2_000);
                long senders = Thread.getAllStackTraces().keySet().stream()
                        .filter(t -> t.getName().startsWith("gma-stall-connect-")).count();
                assertTrue(senders <= 4, senders + " threads of the producer's pool while its consumer stalls");
                assertTrue(inserted.get() < 1000, inserted.get() + " rows inserted past a stalled consumer");
                release.countDown();
                inserter.join(60_000);
                await().atMost(Duration.ofSeconds(30)).until(() -> got.size() == 3000);
                for (int i = 0; i < 3000; i++) {
                    assertEquals(i, got.get(i), "row " + i);
                }
            }
        }
    }

    @Test
    void rowsInsertedOnALinksEventLoopArriveAllInOrder() throws Exception {
        // the producer inserts from its message handler, which runs on the event loop of the link a DATA came by:
        // the loop hands its rows' sending to the pool and never waits, and the rows still arrive, in order
        List<Long> got = new java.util.concurrent.CopyOnWriteArrayList<>();
        java.util.concurrent.atomic.AtomicLong next = new java.util.concurrent.atomic.AtomicLong();
        java.util.concurrent.atomic.AtomicReference<Producer> self =
                new java.util.concurrent.atomic.AtomicReference<>();
        try (Producer relay = fixture.producer("relay").onMessage(m -> {
            for (int k = 0; k < 5; k++) {
                self.get().insert("host_cpu", Row.of("cardiff", "n", next.getAndIncrement(), 1.0));
            }
        }).build(); Producer source = fixture.producer("source").build()) {
            self.set(relay);
            relay.declare(HOST_CPU);
            try (ContinuousQuery q = consumer.continuous("SELECT cpu FROM host_cpu",
                    r -> got.add(r.row().getLong(0)))) {
                for (int i = 0; i < 400; i++) {
                    source.send(relay.name(), new byte[] {1});
                }
                await().atMost(Duration.ofSeconds(20)).until(() -> got.size() == 2_000);
                for (int i = 0; i < 2_000; i++) {
                    assertEquals(i, got.get(i), "row " + i);
                }
            }
        }
    }

    @Test
    void aLoopInsertPastTheLoopsBacklogDropsItsOwnRowAndNoOtherThreads() throws Exception {
        // the consumer stalls; the producer's message handler (on a link's event loop) inserts a row a DATA until
        // more than MAX_OUT_ON_LOOP messages wait for the consumer, then an application thread inserts into the
        // same query while the loop goes on: the loop may drop its own rows, never a batch that holds the
        // application's (whose inserts returned)
        java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
        List<Row> got = new java.util.concurrent.CopyOnWriteArrayList<>();
        java.util.concurrent.atomic.AtomicLong loopRows = new java.util.concurrent.atomic.AtomicLong();
        java.util.concurrent.atomic.AtomicReference<Producer> self =
                new java.util.concurrent.atomic.AtomicReference<>();
        try (Producer mixed = fixture.producer("mixed").maxQueuedMessages(2).blockTimeout(Duration.ofSeconds(30))
                .onMessage(m -> self.get().insert("host_cpu", Row.of("cardiff", "loop", loopRows.getAndIncrement(),
                        1.0))).build();
                Producer source = fixture.producer("source").build();
                Consumer slow = fixture.consumer("slow").build()) {
            self.set(mixed);
            mixed.declare(HOST_CPU);
            try (ContinuousQuery q = slow.continuous("SELECT host, cpu FROM host_cpu", r -> {
                got.add(r.row());
                try {
                    release.await();
                } catch (InterruptedException ex) {
                    Thread.currentThread().interrupt();
                }
            })) {
                int atFirst = (TablePublisher.MAX_OUT_ON_LOOP + 64) * TablePublisher.BATCH_ROWS;
                for (int i = 0; i < atFirst; i++) {
                    source.send(mixed.name(), new byte[] {1});
                }
                await().atMost(Duration.ofSeconds(20)).until(() -> loopRows.get() == atFirst);
                Thread loop = new Thread(() -> {
                    for (int i = 0; i < 3_000; i++) { // the loop goes on inserting while the application does
                        try {
                            source.send(mixed.name(), new byte[] {1});
                        } catch (EndpointException ex) {
                            throw new IllegalStateException(ex);
                        }
                        java.util.concurrent.locks.LockSupport.parkNanos(100_000);
                    }
                }, "loop-feeder");
                java.util.concurrent.atomic.AtomicInteger appRows = new java.util.concurrent.atomic.AtomicInteger();
                Thread app = new Thread(() -> {
                    for (int i = 0; i < 100; i++) {
                        mixed.insert("host_cpu", Row.of("cardiff", "app", (long) i, 1.0));
                        appRows.incrementAndGet();
                        java.util.concurrent.locks.LockSupport.parkNanos(1_000_000);
                    }
                }, "app-inserter");
                loop.start();
                app.start();
                Thread.sleep(1_000);
                release.countDown();
                app.join(30_000);
                loop.join(30_000);
                assertEquals(100, appRows.get(), "the application's inserts returned");
                await().atMost(Duration.ofSeconds(30)).until(() -> got.stream()
                        .filter(r -> r.getString(0).equals("app")).count() == 100);
                List<Long> fromApp = new ArrayList<>();
                long lastLoop = -1;
                for (Row r : got) {
                    if (r.getString(0).equals("app")) {
                        fromApp.add(r.getLong(1));
                    } else {
                        assertTrue(r.getLong(1) > lastLoop, "loop row " + r.getLong(1) + " after " + lastLoop);
                        lastLoop = r.getLong(1);
                    }
                }
                for (int i = 0; i < 100; i++) {
                    assertEquals(i, fromApp.get(i), "application row " + i);
                }
                assertTrue(got.size() - 100 < loopRows.get(), "some of the loop's own rows were not taken: "
                        + (got.size() - 100) + " of " + loopRows.get() + " arrived");
            }
        }
    }

    @Test
    void withADurableOutboxEachRowGoesAloneAsItsInsertReturns(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir)
            throws Exception {
        List<TableRow> got = new java.util.concurrent.CopyOnWriteArrayList<>();
        try (Producer kept = fixture.producer("kept").exactLabel(true).outbox(dir).build()) {
            kept.declare(HOST_CPU);
            try (ContinuousQuery q = consumer.continuous("SELECT cpu FROM host_cpu", got::add)) {
                long before = consumer.stats().messagesIn();
                for (int i = 0; i < 200; i++) {
                    kept.insert("host_cpu", Row.of("cardiff", "n", (long) i, 1.0));
                }
                await().atMost(Duration.ofSeconds(10)).until(() -> got.size() == 200);
                long messages = consumer.stats().messagesIn() - before;
                assertTrue(messages >= 200, messages + " messages for 200 rows: batched, not each alone");
            }
        }
    }

    @Test
    void withADurableOutboxRowsOfApplicationThreadsAndALoopArriveOnceInTheOrderOfEachThread(
            @org.junit.jupiter.api.io.TempDir java.nio.file.Path dir) throws Exception {
        // each row goes to the outbox from its inserting thread before the insert returns, on a loop too: rows of
        // one thread keep their order, and none is lost or doubled
        List<Row> got = new java.util.concurrent.CopyOnWriteArrayList<>();
        java.util.concurrent.atomic.AtomicLong loopRows = new java.util.concurrent.atomic.AtomicLong();
        java.util.concurrent.atomic.AtomicReference<Producer> self =
                new java.util.concurrent.atomic.AtomicReference<>();
        try (Producer kept = fixture.producer("kept").exactLabel(true).outbox(dir)
                .onMessage(m -> self.get().insert("host_cpu", Row.of("cardiff", "loop", loopRows.getAndIncrement(),
                        1.0))).build();
                Producer source = fixture.producer("source").build()) {
            self.set(kept);
            kept.declare(HOST_CPU);
            try (ContinuousQuery q = consumer.continuous("SELECT host, cpu FROM host_cpu", r -> got.add(r.row()))) {
                List<Thread> threads = new ArrayList<>();
                for (String host : List.of("a", "b")) {
                    threads.add(new Thread(() -> {
                        for (int i = 0; i < 500; i++) {
                            kept.insert("host_cpu", Row.of("cardiff", host, (long) i, 1.0));
                        }
                    }, "inserter-" + host));
                }
                threads.forEach(Thread::start);
                for (int i = 0; i < 500; i++) {
                    source.send(kept.name(), new byte[] {1});
                }
                for (Thread t : threads) {
                    t.join(30_000);
                }
                await().atMost(Duration.ofSeconds(30)).until(() -> got.size() >= 1_500);
                Thread.sleep(100); // a row too many would come now
                assertEquals(1_500, got.size(), "rows received");
                Map<String, List<Long>> byHost = new java.util.HashMap<>();
                for (Row r : got) {
                    byHost.computeIfAbsent(r.getString(0), h -> new ArrayList<>()).add(r.getLong(1));
                }
                for (String host : List.of("a", "b", "loop")) {
                    List<Long> rows = byHost.get(host);
                    assertEquals(500, rows.size(), "rows of " + host);
                    for (int i = 0; i < 500; i++) {
                        assertEquals(i, rows.get(i), "row " + i + " of " + host);
                    }
                }
            }
        }
    }

    @Test
    void sqlInsertsReachAContinuousQueryAsRowsDo() throws Exception {
        List<TableRow> got = new java.util.concurrent.CopyOnWriteArrayList<>();
        try (ContinuousQuery q = consumer.continuous("SELECT host, load1 FROM host_cpu WHERE load1 > 4",
                got::add)) {
            await().atMost(Duration.ofSeconds(10)).until(() -> q.producers().contains(producer.name()));
            String sql = "INSERT INTO host_cpu (site, host, cpu, load1) VALUES ('cardiff', ?, ?, ?)";
            assertEquals(1, producer.insert(sql, "n1", 0, 7)); // Integer into INTEGER and DOUBLE
            assertEquals(0, producer.insert(sql, "n2", 0, 1.5)); // kept as latest, matches no query
            assertEquals(1, producer.insert("INSERT INTO host_cpu VALUES ('cardiff', 'n3', 2, 9.5)"));
            await().atMost(Duration.ofSeconds(10)).until(() -> got.size() == 2);
            assertEquals(List.of(Row.of("n1", 7.0), Row.of("n3", 9.5)), got.stream().map(TableRow::row).toList());
        }
        TableException share = assertThrows(TableException.class, () -> producer.insert(
                "INSERT INTO host_cpu (site, host, cpu) VALUES ('lyon', ?, 0)", "n1"));
        assertTrue(share.getMessage().contains("site = 'cardiff'"), share.getMessage());
        TableException arg = assertThrows(TableException.class, () -> producer.insert(
                "INSERT INTO host_cpu (site, host, cpu) VALUES ('cardiff', ?, ?)", "n1", "zero"));
        assertEquals("table host_cpu: column cpu is INTEGER and argument 2 is 'zero' (a String)", arg.getMessage());
        TableException undeclared = assertThrows(TableException.class, () -> producer.insert(
                "INSERT INTO host_mem (host) VALUES (?)", "n1"));
        assertTrue(undeclared.getMessage().startsWith("table host_mem is not declared by " + producer.name()),
                undeclared.getMessage());
        assertEquals(java.util.Set.of("n1", "n2", "n3"), consumer.latest("SELECT host FROM host_cpu").stream()
                .map(r -> r.row().getString(0)).collect(java.util.stream.Collectors.toSet()), "no refused row kept");
    }

    @Test
    void rowsRunOnTheHandlerExecutorWhenTheConsumerHasOne() throws Exception {
        java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newSingleThreadExecutor(
                r -> new Thread(r, "row-pool"));
        List<String> threads = new java.util.concurrent.CopyOnWriteArrayList<>();
        try (Consumer pooled = fixture.consumer("pooled").executor(pool).build();
                ContinuousQuery q = pooled.continuous("SELECT host FROM host_cpu",
                        row -> threads.add(Thread.currentThread().getName()))) {
            producer.insert("host_cpu", Row.of("cardiff", "n1", 0L, 1.0));
            producer.insert("host_cpu", Row.of("cardiff", "n2", 0L, 1.0));
            await().atMost(Duration.ofSeconds(10)).until(() -> threads.size() == 2);
            assertEquals(List.of("row-pool", "row-pool"), threads);
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void tableQueryIsAcceptedAndCancelled() throws Exception {
        ask(TableWire.TABLE_QUERY, TableWire.query(7, "SELECT host FROM host_cpu WHERE load1 > 4"));
        assertEquals(Map.of("host_cpu", 1), producer.core().tables().subscriptionCounts());
        ask(TableWire.TABLE_QUERY, TableWire.query(7, "SELECT * FROM host_cpu")); // the same id replaces it
        assertEquals(Map.of("host_cpu", 1), producer.core().tables().subscriptionCounts());
        consumer.send(producer.name(), TableWire.TABLE_CANCEL, TableWire.cancel(7)).acknowledged().get();
        await().atMost(Duration.ofSeconds(10)).until(() -> producer.core().tables().subscriptionCounts()
                .get("host_cpu") == 0);
    }

    @Test
    void aQueryOfAnotherTableWithAnIdInUseReplacesTheOneOfThatId() throws Exception {
        // a consumer that restarted under its name numbers its queries from 1 again: its query 1 of host_mem
        // replaces its earlier query 1 of host_cpu, whose rows would otherwise reach the new query
        producer.declare(TableSchema.builder("host_mem").column("host", ColumnType.STRING)
                .column("free", ColumnType.INTEGER).primaryKey("host").build());
        ask(TableWire.TABLE_QUERY, TableWire.query(1, "SELECT * FROM host_cpu"));
        assertEquals(Map.of("host_cpu", 1, "host_mem", 0), producer.core().tables().subscriptionCounts());
        ask(TableWire.TABLE_QUERY, TableWire.query(1, "SELECT * FROM host_mem"));
        assertEquals(Map.of("host_cpu", 0, "host_mem", 1), producer.core().tables().subscriptionCounts());
        assertEquals(0, producer.insert("host_cpu", Row.of("cardiff", "n", 1L, 1.0)), "queries of host_cpu");
        assertEquals(1, producer.insert("host_mem", Row.of("n", 1L)), "queries of host_mem");
    }

    @Test
    void aProducerThatLostAQueryIsAskedForItAgain() throws Exception {
        // the producer declares its table again with another retention: its rows and queries start afresh, as
        // after a restart under its name, and it stays registered throughout: the consumer, hearing nothing of
        // it, asks it for the query again, and its rows flow again
        List<Long> got = new java.util.concurrent.CopyOnWriteArrayList<>();
        try (ContinuousQuery q = consumer.continuous("SELECT cpu FROM host_cpu", r -> got.add(r.row().getLong(0)))) {
            producer.insert("host_cpu", Row.of("cardiff", "n", 0L, 1.0));
            await().atMost(Duration.ofSeconds(10)).until(() -> got.contains(0L));
            producer.declare(TableSchema.builder("host_cpu").column("site", ColumnType.STRING)
                    .column("host", ColumnType.STRING).column("cpu", ColumnType.INTEGER)
                    .column("load1", ColumnType.DOUBLE).primaryKey("host", "cpu").predicate("site = 'cardiff'")
                    .latestRetention(Duration.ofMinutes(7)).build());
            assertEquals(Map.of("host_cpu", 0), producer.core().tables().subscriptionCounts(), "the query is lost");
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(40);
            long cpu = 0;
            do {
                producer.insert("host_cpu", Row.of("cardiff", "n", ++cpu, 1.0));
                Thread.sleep(200);
            } while (got.size() == 1 && System.nanoTime() < deadline);
            assertTrue(got.size() > 1, "no row after the producer lost the query reached it in 40 s: " + got);
            assertEquals(Map.of("host_cpu", 1), producer.core().tables().subscriptionCounts());
        }
    }

    @Test
    void badTableQueriesAreAnsweredWithErrorsNamingTheProblem() {
        assertError(ErrorCode.MALFORMED, "nosuch", TableWire.TABLE_QUERY,
                TableWire.query(1, "SELECT nosuch FROM host_cpu"));
        assertError(ErrorCode.MALFORMED, "table host_mem is not published by " + producer.name(),
                TableWire.TABLE_QUERY, TableWire.query(2, "SELECT * FROM host_mem"));
        assertError(ErrorCode.MALFORMED, "", TableWire.TABLE_QUERY,
                TableWire.query(3, "SELECT count(*) FROM host_cpu"));
        assertError(ErrorCode.MALFORMED, "varint", TableWire.TABLE_QUERY, new byte[] {(byte) 0x80});
        assertError(ErrorCode.MALFORMED, "nosuch", TableWire.TABLE_LATEST,
                "SELECT * FROM host_cpu WHERE nosuch = 1".getBytes(StandardCharsets.UTF_8));
        assertEquals(Map.of("host_cpu", 0), producer.core().tables().subscriptionCounts());
    }

    @Test
    void rowsForAQueryTheConsumerDoesNotHaveCancelIt() throws Exception {
        // the consumer's mediator never made query 9: its first row makes it cancel it
        ask(TableWire.TABLE_QUERY, TableWire.query(9, "SELECT * FROM host_cpu"));
        assertEquals(1, producer.insert("host_cpu", Row.of("cardiff", "n1", 0L, 1.0)));
        await().atMost(Duration.ofSeconds(10)).until(() -> producer.core().tables().subscriptionCounts()
                .get("host_cpu") == 0);
    }

    @Test
    void latestAnswersTheNewestRowPerKeyThatMatches() throws Exception {
        producer.insert("host_cpu", Row.of("cardiff", "n1", 0L, 1.0));
        producer.insert("host_cpu", Row.of("cardiff", "n1", 0L, 5.0)); // replaces the row of (n1, 0)
        producer.insert("host_cpu", Row.of("cardiff", "n1", 1L, 6.0));
        producer.insert("host_cpu", Row.of("cardiff", "n2", 0L, 2.0));
        long before = TablePublisher.nowMicros();
        byte[] answer = ask(TableWire.TABLE_LATEST, "SELECT host FROM host_cpu WHERE load1 > 4"
                .getBytes(StandardCharsets.UTF_8));
        List<Row> rows = new ArrayList<>();
        ByteBuffer in = ByteBuffer.wrap(answer);
        while (in.hasRemaining()) {
            long micros = in.getLong();
            assertTrue(micros <= before && micros > before - 60_000_000L, "insert time " + micros);
            int length = (int) TableWire.readVarint(in, "answer");
            rows.add(RowCodec.decode(HOST_CPU, in.slice(in.position(), length)));
            in.position(in.position() + length);
        }
        rows.sort((a, b) -> Long.compare(a.getLong(2), b.getLong(2)));
        // the whole row crosses; the consumer projects
        assertEquals(List.of(Row.of("cardiff", "n1", 0L, 5.0), Row.of("cardiff", "n1", 1L, 6.0)), rows);
    }

    @Test
    void latestLeavesOutRowsOlderThanTheLatestRetention() throws Exception {
        try (Producer brief = fixture.producer("brief").build()) {
            brief.declare(TableSchema.builder("host_cpu").column("site", ColumnType.STRING)
                    .column("host", ColumnType.STRING).column("cpu", ColumnType.INTEGER)
                    .column("load1", ColumnType.DOUBLE).primaryKey("host", "cpu")
                    .latestRetention(Duration.ofSeconds(1)).build());
            brief.insert("host_cpu", Row.of("cardiff", "old", 0L, 1.0));
            Thread.sleep(1200);
            brief.insert("host_cpu", Row.of("cardiff", "new", 0L, 1.0));
            List<TableRow> rows = consumer.latest("SELECT host FROM host_cpu WHERE site = 'cardiff'");
            // the other producer of the fixture holds nothing; the old row expired
            assertEquals(1, rows.size(), rows.toString());
            assertEquals(Row.of("new"), rows.get(0).row());
            assertEquals(brief.name(), rows.get(0).producer());
        }
    }

    @Test
    void latestPastTheAnswerLimitIsRefused() throws Exception {
        try (Producer small = fixture.producer("small").maxMessageBytes(2048).build()) {
            small.declare(HOST_CPU);
            for (int i = 0; i < 100; i++) {
                small.insert("host_cpu", Row.of("cardiff", "node-" + i, 0L, 1.0));
            }
            EndpointException ex = assertThrows(EndpointException.class, () -> unwrap(() -> consumer.core()
                    .requestAsync(small.name(), TableWire.TABLE_LATEST, "SELECT * FROM host_cpu"
                            .getBytes(StandardCharsets.UTF_8), Duration.ofSeconds(10)).get()));
            assertEquals(ErrorCode.TOO_LARGE, ex.code());
            assertTrue(ex.getMessage().contains("exceed the answer limit of 1024 bytes"), ex.getMessage());
        }
    }

    private byte[] ask(io.gma.wire.Command command, byte[] data) throws Exception {
        return unwrap(() -> consumer.core().requestAsync(producer.name(), command, data, Duration.ofSeconds(10))
                .get());
    }

    private void assertError(ErrorCode code, String text, io.gma.wire.Command command, byte[] data) {
        EndpointException ex = assertThrows(EndpointException.class, () -> ask(command, data));
        assertEquals(code, ex.code(), ex.getMessage());
        assertTrue(ex.getMessage().contains(text), ex.getMessage());
    }

    private interface Call<T> {
        T call() throws Exception;
    }

    private static <T> T unwrap(Call<T> call) throws Exception {
        try {
            return call.call();
        } catch (ExecutionException ex) {
            if (ex.getCause() instanceof EndpointException e) {
                throw e;
            }
            throw ex;
        }
    }
}
