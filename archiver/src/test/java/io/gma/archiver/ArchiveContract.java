package io.gma.archiver;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gma.client.Consumer;
import io.gma.client.Producer;
import io.gma.client.TableRow;
import io.gma.tables.Row;
import java.sql.Connection;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The archive's round trip, for each database ({@link H2ArchiveTest}, {@link PostgresArchiveTest}): producers in
 * two domains, the archiver in one, a consumer in the other; rows come back from history queries in time order,
 * complete and each once, with their types; retention deletes what is older, in bounded batches; and a domain that
 * is cut off has its latest rows answered from the archive.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
abstract class ArchiveContract {
    TwoDomains domains;
    final List<AutoCloseable> closing = new ArrayList<>();

    /** {@code b} with the database under test. */
    abstract Archiver.Builder database(Archiver.Builder b) throws Exception;

    @BeforeEach
    void start() throws Exception {
        domains = new TwoDomains();
    }

    @AfterEach
    void stop() throws Exception {
        for (int i = closing.size() - 1; i >= 0; i--) {
            closing.get(i).close();
        }
        domains.close();
    }

    <T extends AutoCloseable> T closed(T c) {
        closing.add(c);
        return c;
    }

    Producer producer(String domain, Duration history) throws Exception {
        Producer p = closed(domains.producer(domain, "cpu").build());
        p.declare(Rows.schema(history));
        return p;
    }

    Archiver archiver(String domain, Duration retention) throws Exception {
        Archiver a = closed(database(domains.archiver(domain).tables(Rows.TABLE).retention(retention)).build());
        return a;
    }

    @Test
    void rowsOfTwoDomainsComeBackInTimeOrderCompleteAndOnce() throws Exception {
        Producer east = producer("east", Duration.ZERO);
        Producer west = producer("west", Duration.ofHours(1));
        Archiver archiver = archiver("west", Duration.ofHours(1));
        assertEquals(Set.of(east.name(), west.name()), archiver.following(Rows.TABLE));
        Instant before = Instant.now();
        Map<String, Row> inserted = new HashMap<>();
        for (int i = 0; i < 50; i++) {
            inserted.put(east.name() + "/" + i, Rows.row("east", i, 10));
            east.insert(Rows.TABLE, Rows.row("east", i, 10));
            inserted.put(west.name() + "/" + i, Rows.row("west", i, 10));
            west.insert(Rows.TABLE, Rows.row("west", i, 10));
        }
        Thread.sleep(20);
        long wavesApart = Micros.now();
        Thread.sleep(20);
        for (int i = 50; i < 100; i++) {
            inserted.put(east.name() + "/" + i, Rows.row("east", i, 10));
            east.insert(Rows.TABLE, Rows.row("east", i, 10));
            inserted.put(west.name() + "/" + i, Rows.row("west", i, 10));
            west.insert(Rows.TABLE, Rows.row("west", i, 10));
        }
        await().atMost(Duration.ofSeconds(30)).until(() -> Rows.stored(archiver) == 200);

        // from the other domain: every row once, in time order, as inserted, each saying where it came from
        Consumer reader = closed(domains.consumer("east", "reader").build());
        List<TableRow> rows = reader.history("SELECT * FROM host_cpu", before);
        assertEquals(200, rows.size());
        Map<String, Row> got = new HashMap<>();
        for (int i = 0; i < rows.size(); i++) {
            TableRow r = rows.get(i);
            assertTrue(i == 0 || rows.get(i - 1).insertMicros() <= r.insertMicros(), "out of time order at " + i);
            assertEquals(archiver.name(), r.archiver());
            assertTrue(got.put(r.producer() + "/" + r.row().getLong(2), r.row()) == null, "twice: " + r);
        }
        assertEquals(inserted, got);
        assertTrue(archiver.stats().rowsStored() >= 200, archiver.stats().toString());

        // narrowed by the key, in order; the newest first with a LIMIT
        assertEquals(List.of(3L, 13L, 23L, 33L, 43L, 53L, 63L, 73L, 83L, 93L), Rows.seqs(reader.history(
                "SELECT seq FROM host_cpu WHERE host = 'e3' AND seq >= 0", before), 0));
        assertEquals(List.of(99L, 98L, 97L), Rows.seqs(reader.history("SELECT seq FROM host_cpu WHERE site = 'west'"
                + " ORDER BY insert_time DESC LIMIT 3", before), 0));
        // a string that would break out of its quotes is a value like any other
        assertEquals(List.of(), reader.history("SELECT * FROM host_cpu WHERE host = 'x'' OR ''1'' = ''1'", before));
        assertEquals(List.of(List.of(archiver.name(), true, 3600L)), longs(reader.query("SELECT name, archive,"
                + " history_retention_s FROM publishers WHERE table_name = 'host_cpu' AND archive").rows()));

        // retention: what is older goes, in bounded batches, and nothing newer
        try (Connection c = archiver.database().connection()) {
            long some = archiver.table(Rows.TABLE).sweep(c, wavesApart, 7, 2);
            assertTrue(some >= 14 && some < 100, some + " rows deleted by 2 batches of 7");
        }
        long deleted = archiver.sweep(wavesApart + Duration.ofHours(1).toNanos() / 1000);
        assertTrue(deleted > 0 && deleted <= 100 - 14, deleted + " rows deleted");
        assertEquals(100, Rows.stored(archiver));
        List<TableRow> left = reader.history("SELECT seq FROM host_cpu", Instant.EPOCH);
        assertEquals(100, left.size());
        assertTrue(left.stream().allMatch(r -> r.row().getLong(0) >= 50), left.toString());
        assertEquals(0, archiver.sweep(wavesApart + Duration.ofHours(1).toNanos() / 1000));
    }

    @Test
    void latestComesFromTheArchiveWhenADomainIsCutOff() throws Exception {
        Producer east = producer("east", Duration.ZERO);
        Producer west = producer("west", Duration.ZERO);
        Archiver archiver = archiver("west", Duration.ofHours(1));
        for (int i = 0; i < 8; i++) {
            east.insert(Rows.TABLE, Rows.row("east", i, 5)); // e0..e4; e0, e1 and e2 again, newer
        }
        for (int i = 0; i < 3; i++) {
            west.insert(Rows.TABLE, Rows.row("west", i, 3));
        }
        await().atMost(Duration.ofSeconds(30)).until(() -> Rows.stored(archiver) == 11);
        Consumer reader = closed(domains.consumer("west", "reader").requestTimeout(Duration.ofSeconds(3)).build());
        domains.cutEast();
        List<TableRow> rows = new ArrayList<>(reader.latest("SELECT host, seq FROM host_cpu"));
        rows.sort(Comparator.comparing(r -> r.row().getString(0)));
        assertEquals(List.of("e0", "e1", "e2", "e3", "e4", "w0", "w1", "w2"), rows.stream().map(r -> r.row()
                .getString(0)).toList());
        assertEquals(List.of(5L, 6L, 7L, 3L, 4L, 0L, 1L, 2L), Rows.seqs(rows, 1));
        for (TableRow r : rows) {
            boolean ofEast = r.row().getString(0).startsWith("e");
            assertEquals(ofEast ? east.name() : west.name(), r.producer());
            // east's from the archive, saying so; west's from its producer
            assertEquals(ofEast, r.archived(), r.toString());
            if (ofEast) {
                assertEquals(archiver.name(), r.archiver());
            }
        }
        assertFalse(rows.isEmpty());
    }

    /** The JSON numbers of a registry answer as longs. */
    static List<List<Object>> longs(List<List<Object>> rows) {
        List<List<Object>> out = new ArrayList<>();
        for (List<Object> row : rows) {
            out.add(row.stream().map(v -> v instanceof Number n ? (Object) n.longValue() : v).toList());
        }
        return out;
    }
}
