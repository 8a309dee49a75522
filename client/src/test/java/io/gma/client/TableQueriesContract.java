package io.gma.client;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gma.tables.ColumnType;
import io.gma.tables.Row;
import io.gma.tables.RowCodec;
import io.gma.tables.TableException;
import io.gma.tables.TableSchema;
import io.gma.wire.ErrorCode;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Continuous and latest queries through the consumer's mediator, over a real registry, for any {@link Fixture}:
 * in one domain ({@link TableQueriesTest}), and across domains through PC servlets (the PC servlet's tests). Public
 * for those, in this module's test jar.
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
public abstract class TableQueriesContract {
    private static final TableSchema HOST_CPU = TableSchema.builder("host_cpu").column("site", ColumnType.STRING)
            .column("host", ColumnType.STRING).column("load1", ColumnType.DOUBLE).primaryKey("host").build();
    private static final Duration FOLLOW = TableMediator.REFRESH.multipliedBy(4);
    private Fixture fixture;
    private Consumer consumer;
    private final List<AutoCloseable> closing = new ArrayList<>();

    /** A new fixture, for one test. */
    protected abstract Fixture newFixture() throws Exception;

    @BeforeEach
    public void start() throws Exception {
        fixture = newFixture();
        consumer = fixture.consumer("reader").build();
    }

    @AfterEach
    public void stop() throws Exception {
        for (AutoCloseable c : closing) {
            c.close();
        }
        consumer.close();
        fixture.close();
    }

    private Producer producer(String label, String site) throws Exception {
        return producer(label, site, TableSchema.DEFAULT_LATEST_RETENTION);
    }

    private Producer producer(String label, String site, Duration latestRetention) throws Exception {
        Producer p = fixture.producer(label).build();
        closing.add(p);
        p.declare(TableSchema.builder("host_cpu").column("site", ColumnType.STRING).column("host", ColumnType.STRING)
                .column("load1", ColumnType.DOUBLE).primaryKey("host").predicate(site == null ? null
                        : "site = '" + site + "'").latestRetention(latestRetention).build());
        return p;
    }

    /** A latest query's rows by host, each as "host load1 producer". */
    private List<String> latestByHost(String sql) throws EndpointException {
        return consumer.latest(sql).stream().sorted(Comparator.comparing(r -> r.row().getString(0)))
                .map(r -> r.row().getString(0) + " " + r.row().getDouble(1) + " " + r.producer()).toList();
    }

    @Test
    public void continuousQueryDeliversExactlyTheMatchingRowsOnceEach() throws Exception {
        Producer cpu = producer("cpu", null);
        LinkedBlockingQueue<TableRow> rows = new LinkedBlockingQueue<>();
        try (ContinuousQuery q = consumer.continuous("SELECT host, load1 FROM host_cpu WHERE load1 > 4.5",
                rows::add)) {
            assertEquals(Set.of(cpu.name()), q.producers());
            Set<String> expected = new HashSet<>();
            for (int i = 0; i < 200; i++) {
                double load = i % 10;
                cpu.insert("host_cpu", Row.of("cardiff", "node-" + i, load));
                if (load > 4.5) {
                    expected.add("node-" + i);
                }
            }
            await().atMost(Duration.ofSeconds(20)).until(() -> rows.size() >= expected.size());
            Thread.sleep(300); // a duplicate or a stray row would come now
            List<TableRow> got = new ArrayList<>(rows);
            assertEquals(expected.size(), got.size());
            Set<String> hosts = new HashSet<>();
            for (TableRow r : got) {
                assertEquals(cpu.name(), r.producer());
                assertEquals(2, r.row().size());
                assertTrue(r.row().getDouble(1) > 4.5, r.toString());
                assertTrue(hosts.add(r.row().getString(0)), "twice: " + r);
                assertTrue(Math.abs(System.currentTimeMillis() - r.inserted().toEpochMilli()) < 60_000);
            }
            assertEquals(expected, hosts);
        }
        // closed: the producer forgets it, and rows stop
        await().atMost(Duration.ofSeconds(10)).until(() -> cpu.core().tables().subscriptionCounts()
                .get("host_cpu") == 0);
    }

    @Test
    public void aRowLongerThan64KiBArrivesWhole() throws Exception {
        // its message's data is kept apart at the consumer (EndpointCore.DATA_APART_BYTES) and read from there
        Producer p = fixture.producer("wide").build();
        closing.add(p);
        p.declare(TableSchema.builder("wide_rows").column("host", ColumnType.STRING).column("a", ColumnType.STRING)
                .column("b", ColumnType.STRING).primaryKey("host").build());
        LinkedBlockingQueue<TableRow> rows = new LinkedBlockingQueue<>();
        try (ContinuousQuery q = consumer.continuous("SELECT * FROM wide_rows", rows::add)) {
            await().atMost(FOLLOW).until(() -> p.core().tables().subscriptionCounts().get("wide_rows") == 1);
            Row wide = Row.of("n1", "a".repeat(60_000), "b".repeat(65_535));
            p.insert("wide_rows", wide);
            p.insert("wide_rows", Row.of("n2", "small", "row"));
            assertEquals(wide, rows.poll(10, TimeUnit.SECONDS).row());
            assertEquals(Row.of("n2", "small", "row"), rows.poll(10, TimeUnit.SECONDS).row());
        }
    }

    @Test
    public void aProducerThatStartsLaterIsPickedUpAndOneThatLeavesIsDropped() throws Exception {
        Producer cardiff = producer("cardiff", "cardiff"); // its predicate cannot overlap: never asked
        LinkedBlockingQueue<TableRow> rows = new LinkedBlockingQueue<>();
        try (ContinuousQuery q = consumer.continuous("SELECT * FROM host_cpu WHERE site = 'lyon'", rows::add)) {
            assertEquals(Set.of(), q.producers());
            Producer lyon = producer("lyon", "lyon");
            await().atMost(FOLLOW).until(() -> q.producers().equals(Set.of(lyon.name())));
            // producers() names it once the subscription is sent; a row inserted before it arrives is not sent
            await().atMost(FOLLOW).until(() -> lyon.core().tables().subscriptionCounts().get("host_cpu") == 1);
            lyon.insert("host_cpu", Row.of("lyon", "l1", 1.0));
            cardiff.insert("host_cpu", Row.of("cardiff", "c1", 1.0));
            TableRow r = rows.poll(10, TimeUnit.SECONDS);
            assertEquals(lyon.name(), r.producer());
            assertEquals(Row.of("lyon", "l1", 1.0), r.row());
            assertEquals(Set.of(), cardiff.core().tables().subscriptionCounts().entrySet().stream()
                    .filter(e -> e.getValue() > 0).map(e -> e.getKey()).collect(java.util.stream.Collectors.toSet()));
            lyon.close();
            await().atMost(FOLLOW).until(() -> q.producers().isEmpty());
        }
    }

    @Test
    public void latestWithSeveralProducersGivesTheNewestRowPerKey() throws Exception {
        Producer a = producer("a", null);
        Producer b = producer("b", null);
        Producer c = producer("c", "lyon");
        a.insert("host_cpu", Row.of("cardiff", "n1", 1.0));
        a.insert("host_cpu", Row.of("cardiff", "n2", 2.0));
        Thread.sleep(5);
        b.insert("host_cpu", Row.of("cardiff", "n1", 3.0)); // newer than a's n1
        c.insert("host_cpu", Row.of("lyon", "n3", 4.0));
        b.insert("host_cpu", Row.of("cardiff", "n4", 0.5)); // does not match
        List<TableRow> rows = new ArrayList<>(consumer.latest("SELECT host, load1 FROM host_cpu WHERE load1 >= 1"));
        rows.sort(Comparator.comparing(r -> r.row().getString(0)));
        assertEquals(3, rows.size(), rows.toString());
        assertEquals(Row.of("n1", 3.0), rows.get(0).row());
        assertEquals(b.name(), rows.get(0).producer());
        assertEquals(Row.of("n2", 2.0), rows.get(1).row());
        assertEquals(a.name(), rows.get(1).producer());
        assertEquals(Row.of("n3", 4.0), rows.get(2).row());
        assertEquals(c.name(), rows.get(2).producer());
        // the predicate keeps the query from the producers that cannot hold lyon's rows
        List<TableRow> lyon = consumer.latest("SELECT * FROM host_cpu WHERE site = 'lyon'");
        assertEquals(1, lyon.size());
        assertEquals(c.name(), lyon.get(0).producer());

        // a fourth producer keeps its rows as latest for 4 s: its n1 is the newest while it lasts, then b's again
        Duration retention = Duration.ofSeconds(4);
        Producer d = producer("d", null, retention);
        long first = System.nanoTime();
        d.insert("host_cpu", Row.of("cardiff", "n1", 9.0));
        d.insert("host_cpu", Row.of("cardiff", "n5", 5.0));
        long last = System.nanoTime();
        String query = "SELECT host, load1 FROM host_cpu WHERE load1 >= 1";
        List<String> within = latestByHost(query);
        assertTrue(System.nanoTime() - first < retention.toNanos(), "the answer took longer than the retention");
        assertEquals(List.of("n1 9.0 " + d.name(), "n2 2.0 " + a.name(), "n3 4.0 " + c.name(),
                "n5 5.0 " + d.name()), within);
        Thread.sleep(Math.max(0, TimeUnit.NANOSECONDS.toMillis(last + retention.toNanos() - System.nanoTime()))
                + 100);
        assertEquals(List.of("n1 3.0 " + b.name(), "n2 2.0 " + a.name(), "n3 4.0 " + c.name()),
                latestByHost(query));
    }

    @Test
    public void onlyTheMatchingRowsCrossTheNetwork() throws Exception {
        Producer cpu = producer("cpu", null);
        LinkedBlockingQueue<TableRow> rows = new LinkedBlockingQueue<>();
        try (ContinuousQuery q = consumer.continuous("SELECT host FROM host_cpu WHERE load1 = 3", rows::add)) {
            long before = consumer.stats().bytesIn();
            long allRows = 0;
            long matchingRows = 0;
            for (int i = 0; i < 1000; i++) {
                Row row = Row.of("cardiff", "node-" + i, (double) (i % 10));
                cpu.insert("host_cpu", row);
                int bytes = RowCodec.encode(HOST_CPU, row).length;
                allRows += bytes;
                matchingRows += i % 10 == 3 ? bytes : 0;
            }
            await().atMost(Duration.ofSeconds(20)).until(() -> rows.size() >= 100);
            Thread.sleep(300);
            long crossed = consumer.stats().bytesIn() - before;
            assertEquals(100, rows.size());
            // the bytes of 1 row in 10 crossed, with their messages' headers (and a PING or an answer perhaps), not
            // those of all 1,000: the producer evaluated the WHERE (the consumer gives every row it gets)
            assertTrue(crossed >= matchingRows && crossed < allRows / 2, crossed + " bytes came in; the matching"
                    + " rows are " + matchingRows + " bytes, all rows " + allRows);
        }
    }

    @Test
    public void historyComesFromAProducerThatKeepsItInTimeOrder() throws Exception {
        Producer keeper = fixture.producer("keeper").build();
        closing.add(keeper);
        keeper.declare(TableSchema.builder("host_cpu").column("site", ColumnType.STRING)
                .column("host", ColumnType.STRING).column("load1", ColumnType.DOUBLE).primaryKey("host")
                .historyRetention(Duration.ofMinutes(5)).build());
        java.time.Instant before = java.time.Instant.now();
        for (int i = 0; i < 30; i++) {
            keeper.insert("host_cpu", Row.of("cardiff", "n" + (i % 3), (double) i));
        }
        List<TableRow> rows = consumer.history("SELECT load1 FROM host_cpu WHERE host <> 'n0'", before);
        assertEquals(20, rows.size(), rows.toString());
        for (int i = 1; i < rows.size(); i++) {
            assertTrue(rows.get(i - 1).row().getDouble(0) < rows.get(i).row().getDouble(0), rows.toString());
            assertEquals(keeper.name(), rows.get(i).producer());
        }
        assertEquals(List.of(Row.of(29.0), Row.of(28.0)), consumer.history("SELECT load1 FROM host_cpu ORDER BY"
                + " insert_time DESC LIMIT 2", before).stream().map(TableRow::row).toList());
    }

    @Test
    public void badQueriesAreRefusedNamingTheProblem() throws Exception {
        producer("cpu", null);
        TableException column = assertThrows(TableException.class,
                () -> consumer.latest("SELECT nosuch FROM host_cpu"));
        assertTrue(column.getMessage().contains("nosuch"), column.getMessage());
        TableException join = assertThrows(TableException.class,
                () -> consumer.continuous("SELECT * FROM host_cpu a, host_cpu b", r -> { }));
        assertTrue(join.getMessage().length() > 0);
        EndpointException table = assertThrows(EndpointException.class,
                () -> consumer.latest("SELECT * FROM host_mem"));
        assertEquals(ErrorCode.NO_ROUTE, table.code());
        assertTrue(table.getMessage().contains("host_mem"), table.getMessage());
    }
}
