package io.gma.archiver;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gma.client.Consumer;
import io.gma.client.EndpointException;
import io.gma.client.TableRow;
import io.gma.wire.ErrorCode;
import java.nio.file.Path;
import java.sql.Connection;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@link ArchiveContract} on H2 on file, the default; and what is the same on any database, once. */
class H2ArchiveTest extends ArchiveContract {
    @TempDir
    Path dir;

    @Override
    Archiver.Builder database(Archiver.Builder b) {
        return b.dataDir(dir);
    }

    @Test
    void anAnswerOverTheRowBoundGetsTheDocumentedError() throws Exception {
        producer("east", Duration.ZERO);
        Archiver archiver = archiver("west", Duration.ofHours(1));
        long t = Micros.now() - 60_000_000L;
        List<TableRow> many = new ArrayList<>();
        for (int i = 0; i <= Consumer.MAX_HISTORY_ROWS; i++) {
            many.add(new TableRow("cpu-aaaaaa@far", t + i, Rows.row("far", i, 1000)));
        }
        try (Connection c = archiver.database().connection()) {
            c.setAutoCommit(false);
            archiver.table(Rows.TABLE).write(c, many);
            c.commit();
        }
        Consumer reader = closed(domains.consumer("east", "reader").build());
        Instant since = Instant.now().minusSeconds(120);
        EndpointException ex = assertThrows(EndpointException.class, () -> reader.history("SELECT seq FROM host_cpu",
                since));
        assertEquals(ErrorCode.TOO_LARGE, ex.code());
        assertTrue(ex.getMessage().startsWith(archiver.name() + " answered ERROR TOO_LARGE the history of host_cpu"
                + " since " + since.toString().substring(0, 10)), ex.getMessage());
        assertTrue(ex.getMessage().contains("that match the query are more than 100000 rows, the most the consumer"
                + " takes in one answer; narrow the WHERE, shorten the period or add a LIMIT"), ex.getMessage());
        // within the bound: a LIMIT, or a key
        assertEquals(100_000, reader.history("SELECT seq FROM host_cpu LIMIT 100000", since).size());
        assertEquals(List.of(7L, 1007L), Rows.seqs(reader.history("SELECT seq FROM host_cpu WHERE host = 'f7' AND"
                + " seq < 2000", since), 0));
    }

    @Test
    void anArchiverOfAnotherProcessOnTheSameDataDirectoryIsRefusedNamingIt() throws Exception {
        archiver("west", Duration.ofHours(1));
        // in one process, archivers given one directory share its database, as they may share one PostgreSQL;
        // another process cannot open it while this one has it
        try (io.gma.client.ChildJvm other = io.gma.client.ChildJvm.start(List.of("-Xmx128m"),
                ArchiveCommand.class.getName(), List.of("--registry", domains.registry.url(), "--tables", Rows.TABLE,
                        "--data-dir", dir.toString()))) {
            java.util.regex.Matcher m = other.await(java.util.regex.Pattern.compile(
                    "gma-archive: cannot open the archive's database .*"), 60_000);
            assertTrue(m != null, other.output());
            assertTrue(m.group().startsWith("gma-archive: cannot open the archive's database jdbc:h2:file:"
                    + dir.toAbsolutePath()), m.group());
            assertTrue(m.group().endsWith("(another archiver holds this data directory; give each its own"
                    + " --data-dir)"), m.group());
        }
    }

    @Test
    void aDatabaseThatFailsGetsAClearErrorAndTheArchiverKeepsServing() throws Exception {
        producer("west", Duration.ZERO);
        Archiver archiver = archiver("west", Duration.ofHours(1));
        Consumer reader = closed(domains.consumer("west", "reader").build());
        archiver.database().close(); // as a database that went away for good
        EndpointException ex = assertThrows(EndpointException.class, () -> reader.historyFrom(archiver.name(),
                "SELECT * FROM host_cpu", Instant.now()));
        assertEquals(ErrorCode.INTERNAL, ex.code());
        assertTrue(ex.getMessage().contains("the archive of host_cpu cannot read its database jdbc:h2:file:"
                + dir.toAbsolutePath()), ex.getMessage());
        // it still answers, and says so again
        EndpointException again = assertThrows(EndpointException.class, () -> reader.historyFrom(archiver.name(),
                "SELECT * FROM host_cpu", Instant.now()));
        assertEquals(ErrorCode.INTERNAL, again.code());
    }
}
