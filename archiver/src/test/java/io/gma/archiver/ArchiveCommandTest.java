package io.gma.archiver;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gma.cli.Cli;
import io.gma.registry.Registry;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code gma archive} ({@link ArchiveCommand}) run in this JVM: --help, a usage error (exit 2) naming each option
 * given wrong, a run with --duration (exit 0), and a database it cannot open (exit 1, one line).
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ArchiveCommandTest {
    private static final String SEE_HELP = " (see gma archive --help)";
    @TempDir
    Path dir;

    private record Run(int status, String out, String err) {
    }

    private static Run run(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int status = Cli.run("gma", Cli.standalone(new ArchiveCommand(), "gma archive")
                .setOut(new PrintWriter(out, true)).setErr(new PrintWriter(err, true)), args);
        return new Run(status, out.toString(), err.toString());
    }

    private static void assertBadArguments(String error, String... args) {
        Run r = run(args);
        assertEquals(2, r.status(), r.err());
        assertEquals(List.of(error + SEE_HELP), r.err().lines().toList(), r.err());
    }

    @Test
    void helpNamesEveryOption() {
        Run r = run("--help");
        assertEquals(0, r.status(), r.err());
        for (String option : new String[] {"--tables=TABLE[,TABLE...]", "--jdbc=URL", "--jdbc-user=USER",
            "--retention=AGE", "--data-dir=DIR", "--label=", "--domain=", "--pc=HOST:PORT", "--registry=",
            "--security=DIR", "--identity=NAME", "--duration=SECONDS", "--http=[HOST:]PORT"}) {
            assertTrue(r.out().contains(option), option + ": " + r.out());
        }
    }

    @Test
    void badArgumentsAreUsageErrorsNamingThem() {
        assertBadArguments("--tables is required (or GMA_ARCHIVE_TABLES, archive.tables): the tables to archive,"
                + " separated by commas");
        assertBadArguments("table \"Host-CPU\" is not a table's name: 1..64 of a-z, 0-9 and _, starting with a letter",
                "--tables", "host_cpu,Host-CPU");
        assertBadArguments("--data-dir keeps the H2 database when no --jdbc is given; with --jdbc it would not be used",
                "--tables", "host_cpu", "--jdbc", "jdbc:h2:mem:x", "--data-dir", "x");
        assertBadArguments("Invalid value for option '--retention': \"1w\" is not an age: seconds, or a number with"
                + " s, m, h or d after it (90s, 15m, 24h, 7d)", "--tables", "host_cpu", "--retention", "1w");
        assertBadArguments("retention PT0S is not whole seconds from 1 s to 366 days", "--tables", "host_cpu",
                "--retention", "0");
        assertBadArguments("retention PT8928H is not whole seconds from 1 s to 366 days", "--tables", "host_cpu",
                "--retention", "372d");
        assertBadArguments("jdbc URL jdbc:mysql://db/gma?password=*** is not H2 (jdbc:h2:) or PostgreSQL"
                + " (jdbc:postgresql:)", "--tables", "host_cpu", "--jdbc", "jdbc:mysql://db/gma?password=secret");
        assertBadArguments("--domain \"no domain\" is not 1..64 of [A-Za-z0-9.-]", "--tables", "host_cpu", "--domain",
                "no domain");
        for (String http : new String[] {"localhost", "127.0.0.1:99999", "127.0.0.1:80/x", "a b:1"}) {
            assertBadArguments("--http " + http + " is not [HOST:]PORT with PORT 0..65535", "--tables", "host_cpu",
                    "--http", http);
        }
    }

    @Test
    void runsUntilItsDurationAndStopsCleanly() throws Exception {
        try (Registry registry = Registry.builder().port(0).build().start()) {
            Run r = run("--registry", registry.url(), "--tables", "host_cpu", "--data-dir", dir.toString(),
                    "--retention", "36h", "--duration", "1", "--http", "0");
            assertEquals(0, r.status(), r.err());
            assertTrue(r.out().matches("archiver is archiver-[a-z2-7]{6}@lan, archiving host_cpu into jdbc:h2:file:"
                    + dir.toAbsolutePath().normalize() + "/archive for PT36H\nmetrics at http://127\\.0\\.0\\.1:"
                    + "[0-9]+/metrics, chart data for the dashboard at http://127\\.0\\.0\\.1:[0-9]+/data/v1/\n"),
                    r.out());
        }
    }

    @Test
    void aDatabaseItCannotOpenIsOneLineAndExitOne() {
        Run r = run("--registry", "http://127.0.0.1:1", "--tables", "host_cpu", "--jdbc",
                "jdbc:postgresql://127.0.0.1:1/gma?connectTimeout=1");
        assertEquals(1, r.status(), r.err());
        assertEquals(1, r.err().lines().count(), r.err());
        assertTrue(r.err().startsWith("gma: cannot open the archive's database jdbc:postgresql://127.0.0.1:1/gma"),
                r.err());
    }
}
