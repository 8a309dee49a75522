package io.gma.archiver;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gma.client.ChildJvm;
import io.gma.client.Consumer;
import io.gma.client.Producer;
import io.gma.client.TableRow;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.LongStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Two archivers of one table, one killed (SIGKILL: its registration stays until its lease runs out, and nothing
 * answers at its address): history queries still answer, from the other. The killed one is a process of its own,
 * {@code gma archive} as {@link ArchiveCommand}; its longer retention puts it first, so the failover is certain.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class TwoArchiversTest {
    @TempDir
    Path dir;
    private TwoDomains domains;
    private ChildJvm child;
    private Producer producer;
    private Archiver survivor;
    private Consumer reader;

    @BeforeEach
    void start() throws Exception {
        domains = new TwoDomains();
    }

    @AfterEach
    void stop() throws Exception {
        if (reader != null) {
            reader.close();
        }
        if (survivor != null) {
            survivor.close();
        }
        if (child != null) {
            child.close();
        }
        if (producer != null) {
            producer.close();
        }
        domains.close();
    }

    @Test
    void historyStillAnswersWithOneArchiverStopped() throws Exception {
        producer = domains.producer("east", "cpu").build();
        producer.declare(Rows.schema(Duration.ZERO));
        child = ChildJvm.start(List.of("-Xmx256m"), ArchiveCommand.class.getName(), List.of("--registry",
                domains.registry.url(), "--domain", "west", "--pc", domains.west.uplink(), "--tables", Rows.TABLE,
                "--data-dir", dir.resolve("first").toString(), "--retention", "2h"));
        Matcher started = child.await(Pattern.compile("archiver is (\\S+), archiving host_cpu .*"), 60_000);
        assertTrue(started != null, "the archiver did not start:\n" + child.output());
        String first = started.group(1);
        survivor = domains.archiver("east").tables(Rows.TABLE).dataDir(dir.resolve("second"))
                .retention(Duration.ofHours(1)).build();
        for (int i = 0; i < 20; i++) {
            producer.insert(Rows.TABLE, Rows.row("east", i, 4));
        }
        reader = domains.consumer("west", "reader").requestTimeout(Duration.ofSeconds(2)).build();
        Instant longAgo = Instant.now().minus(Duration.ofMinutes(90));
        await().atMost(Duration.ofSeconds(30)).until(() -> Rows.stored(survivor) == 20);
        await().atMost(Duration.ofSeconds(30)).until(() -> reader.historyFrom(first, "SELECT seq FROM host_cpu",
                longAgo).rows().size() == 20);
        // both answer, the one that keeps two hours first (it covers the period)
        assertEquals(first, reader.history("SELECT seq FROM host_cpu", longAgo).get(0).archiver());

        child.kill();
        for (int i = 0; i < 2; i++) {
            List<TableRow> rows = reader.history("SELECT seq FROM host_cpu", longAgo);
            assertEquals(LongStream.range(0, 20).boxed().toList(), Rows.seqs(rows, 0));
            for (TableRow r : rows) {
                assertEquals(survivor.name(), r.archiver());
                assertEquals(producer.name(), r.producer());
            }
        }
    }
}
