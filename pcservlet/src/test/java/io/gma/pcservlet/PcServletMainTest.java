package io.gma.pcservlet;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The standalone PC servlet's command line: exit status 0 for --help, 2 for bad arguments with one line
 * naming what is wrong, 1 when it cannot start. Nothing here starts successfully (run would block).
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class PcServletMainTest {
    /** Nobody listens on port 1 of loopback: registering the domain fails at once. */
    private static final String DEAD_REGISTRY = "http://127.0.0.1:1";

    /** What one run printed and returned. */
    private record Run(int status, String out, String err) {
        /** The error lines, without the "Try --help." hint. */
        List<String> errorLines() {
            return err.lines().filter(l -> !l.equals("Try --help.")).toList();
        }
    }

    private static Run run(String... args) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int status;
        try (PrintStream o = new PrintStream(out, true, UTF_8); PrintStream e = new PrintStream(err, true, UTF_8)) {
            status = PcServletMain.run(args, o, e);
        }
        return new Run(status, out.toString(UTF_8), err.toString(UTF_8));
    }

    private static void assertBadArguments(Run r, String error) {
        assertEquals(2, r.status(), r.err());
        assertEquals(List.of("gma-pcservlet: " + error), r.errorLines(), r.err());
        assertEquals("", r.out());
    }

    @Test
    void helpPrintsTheUsageAndExitsZero() {
        Run r = run("--help");
        assertEquals(0, r.status(), r.err());
        assertEquals(PcServletMain.USAGE + System.lineSeparator(), r.out());
        assertTrue(r.out().startsWith("Usage: java -jar gma-pcservlet.jar --domain DOMAIN --registry URL"), r.out());
        assertEquals("", r.err());
        assertEquals(0, run("--domain", "east", "-h").status());
    }

    @Test
    void unknownOptionIsNamed() {
        assertBadArguments(run("--domain", "east", "--registry", DEAD_REGISTRY, "--bogus", "1"),
                "unknown option --bogus");
    }

    @Test
    void unknownOptionAtTheEndIsNamedAsUnknown() {
        assertBadArguments(run("--domain", "east", "--registry", DEAD_REGISTRY, "--bogus"),
                "unknown option --bogus");
    }

    @Test
    void missingDomainIsRefused() {
        assertBadArguments(run("--registry", DEAD_REGISTRY), "--domain and --registry are required");
        assertBadArguments(run("--domain", "east"), "--domain and --registry are required");
    }

    @Test
    void optionWithoutItsValueIsRefused() {
        assertBadArguments(run("--registry", DEAD_REGISTRY, "--domain"), "--domain needs a value");
    }

    @Test
    void badNumbersAndValuesAreNamed() {
        assertBadArguments(run("--domain", "east", "--registry", DEAD_REGISTRY, "--http-port", "x"),
                "--http-port x is not a whole number");
        assertBadArguments(run("--domain", "east", "--registry", DEAD_REGISTRY, "--http-port", "70000"),
                "httpPort 70000 is outside 0..65535");
        assertBadArguments(run("--domain", "east", "--registry", DEAD_REGISTRY, "--max-batch-bytes", "10"),
                "maxBatchBytes 10 is under 1024");
        assertBadArguments(run("--domain", "no such domain", "--registry", DEAD_REGISTRY),
                "domain \"no such domain\" is not 1..64 of [A-Za-z0-9.-]");
    }

    @Test
    void securityOptionsAreCheckedAndNamed(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir) {
        assertBadArguments(run("--domain", "east", "--registry", DEAD_REGISTRY, "--insecure", "--security",
                dir.toString()), "--insecure and --security exclude each other");
        assertBadArguments(run("--domain", "east", "--registry", DEAD_REGISTRY, "--rules", "r"),
                "--rules needs --security DIR");
        assertBadArguments(run("--domain", "east", "--registry", DEAD_REGISTRY, "--security", dir.toString(),
                "--client-auth", "maybe"), "--client-auth maybe is not none, want or need");
        Run r = run("--domain", "east", "--registry", DEAD_REGISTRY, "--security", dir.toString());
        assertEquals(2, r.status(), r.err());
        assertTrue(r.err().startsWith("gma-pcservlet: --security " + dir + ": "), r.err());
        assertTrue(r.err().contains("store.pass"), "names the missing file: " + r.err());
    }

    @Test
    void unreachableRegistryExitsOneWithCannotStart() {
        Run r = run("--domain", "east", "--registry", DEAD_REGISTRY, "--http-port", "0", "--uplink-port", "0");
        assertEquals(1, r.status(), r.err());
        List<String> lines = r.err().lines().toList();
        assertEquals(1, lines.size(), r.err());
        assertTrue(lines.get(0).startsWith("gma-pcservlet: cannot start: "), r.err());
        assertEquals("", r.out());
    }
}
