package io.gma.archiver;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gma.client.Consumer;
import io.gma.client.Producer;
import io.gma.client.TableRow;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.LongStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * An archiver stopped and started again on its data directory: no row is stored twice, and what producers inserted
 * while it was down is caught up from the one that keeps history, and counted as a gap for the one that keeps none
 * (whose latest rows it still gets).
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class ArchiverRestartTest {
    @TempDir
    Path dir;
    private TwoDomains domains;
    private final List<AutoCloseable> closing = new ArrayList<>();

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

    private Producer producer(String domain, Duration history) throws Exception {
        Producer p = domains.producer(domain, "cpu").build();
        closing.add(p);
        p.declare(Rows.schema(history));
        return p;
    }

    private static void insert(Producer p, String site, int from, int to) {
        for (int i = from; i < to; i++) {
            p.insert(Rows.TABLE, Rows.row(site, i, 5));
        }
    }

    @Test
    void aRestartStoresNoRowTwiceAndCatchesUpOrCountsTheGap() throws Exception {
        Producer forgetful = producer("east", Duration.ZERO);
        Producer keeper = producer("west", Duration.ofHours(1));
        Instant before = Instant.now();
        Archiver first = domains.archiver("west").tables(Rows.TABLE).dataDir(dir).build();
        closing.add(first); // closed below; again, harmlessly, if the test fails before
        insert(forgetful, "east", 0, 10);
        insert(keeper, "west", 0, 10);
        await().atMost(Duration.ofSeconds(30)).until(() -> Rows.stored(first) == 20);
        assertEquals(0, first.stats().gaps());
        first.close();

        // while it is down: each inserts 10 more, on the same 5 hosts
        insert(forgetful, "east", 10, 20);
        insert(keeper, "west", 10, 20);

        Archiver again = domains.archiver("west").tables(Rows.TABLE).dataDir(dir).build();
        closing.add(again);
        // the keeper's 10 from its history; of the forgetful one's, its latest row per host (15..19)
        await().atMost(Duration.ofSeconds(30)).until(() -> Rows.stored(again) == 35);
        await().atMost(Duration.ofSeconds(10)).until(() -> again.stats().gaps() == 1);
        ArchiverStats s = again.stats();
        assertEquals(15, s.rowsCaughtUp(), s.toString());
        // the newest row the archive had of the keeper came again in its history, and was not stored again
        assertTrue(s.rowsDuplicate() >= 1, s.toString());

        // and what comes live from then on
        insert(forgetful, "east", 20, 30);
        insert(keeper, "west", 20, 30);
        await().atMost(Duration.ofSeconds(30)).until(() -> Rows.stored(again) == 55);

        Consumer reader = domains.consumer("east", "reader").build();
        closing.add(reader);
        List<TableRow> rows = reader.history("SELECT seq FROM host_cpu", before);
        List<Long> keepers = new ArrayList<>();
        List<Long> forgotten = new ArrayList<>();
        for (TableRow r : rows) {
            (r.producer().equals(keeper.name()) ? keepers : forgotten).add(r.row().getLong(0));
        }
        // each once, in time order: all of the keeper's; the forgetful one's but the 5 overwritten while down
        assertEquals(LongStream.range(0, 30).boxed().toList(), keepers);
        List<Long> expected = new ArrayList<>(LongStream.range(0, 10).boxed().toList());
        expected.addAll(LongStream.range(15, 30).boxed().toList());
        assertEquals(expected, forgotten);
        assertEquals(Set.of(forgetful.name(), keeper.name()), again.following(Rows.TABLE));
    }
}
