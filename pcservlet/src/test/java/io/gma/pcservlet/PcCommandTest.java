package io.gma.pcservlet;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gma.cli.Cli;
import io.gma.registry.Registry;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * {@code java -jar gma-pcservlet.jar}: {@link PcCommand} run as the jar's main runs it, in this JVM: exit status
 * 0 for --help and after a run, 2 for bad arguments with one line naming what is wrong, 1 when it cannot start.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class PcCommandTest {
    /** Nobody listens on port 1 of loopback: registering the domain fails at once. */
    private static final String DEAD_REGISTRY = "http://127.0.0.1:1";
    private static final String SEE_HELP = " (see java -jar gma-pcservlet.jar --help)";

    /** What one run printed and returned. */
    private record Run(int status, String out, String err) {
    }

    /** What {@link PcCommand#main} does, without exiting the JVM. */
    private static Run run(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int status = Cli.run("gma-pcservlet", PcCommand.standalone().setOut(new PrintWriter(out, true))
                .setErr(new PrintWriter(err, true)), args);
        return new Run(status, out.toString(), err.toString());
    }

    private static void assertBadArguments(Run r, String error) {
        assertEquals(2, r.status(), r.err());
        assertEquals(List.of(error + SEE_HELP), r.err().lines().toList(), r.err());
        assertEquals("", r.out());
    }

    private static PcCommand parse(String... args) {
        PcCommand command = new PcCommand();
        new CommandLine(command).parseArgs(args);
        return command;
    }

    @Test
    void helpPrintsTheUsageAndExitsZero() {
        Run r = run("--help");
        assertEquals(0, r.status(), r.err());
        assertTrue(r.out().startsWith("Runs the PC servlet of a domain.\nUsage: java -jar gma-pcservlet.jar [-hV]"),
                r.out());
        for (String option : new String[] {"--domain", "--registry", "--host", "--http-port", "--uplink-port",
                "--url", "--via", "--max-queued-bytes", "--max-queued-messages", "--max-total-bytes",
                "--max-endpoint-bytes", "--max-batch-bytes", "--max-links", "--linger-ms", "--drain-seconds",
                "--security", "--identity", "--client-auth", "--rules", "--insecure", "--duration", "--verbose",
                "Here <COMMAND> is pc", "Exit status"}) {
            assertTrue(r.out().contains(option), option);
        }
        assertEquals("", r.err());
        assertEquals(0, run("--domain", "east", "-h").status());
    }

    @Test
    void unknownOptionIsNamed() {
        // the 1 is taken for a word without an option (a domain without --domain, say), refused after this
        assertBadArguments(run("--domain", "east", "--registry", DEAD_REGISTRY, "--bogus", "1"),
                "Unknown option: '--bogus'");
    }

    @Test
    void unknownOptionAtTheEndIsNamedAsUnknown() {
        assertBadArguments(run("--domain", "east", "--registry", DEAD_REGISTRY, "--bogus"),
                "Unknown option: '--bogus'");
    }

    @Test
    void missingDomainIsRefused() {
        assertBadArguments(run("--registry", DEAD_REGISTRY),
                "--domain is required (or GMA_PC_DOMAIN, GMA_DOMAIN, pc.domain)");
    }

    @Test
    void optionWithoutItsValueIsRefused() {
        assertBadArguments(run("--registry", DEAD_REGISTRY, "--domain"),
                "Missing required parameter for option '--domain' (<domain>)");
    }

    @Test
    void badNumbersAndValuesAreNamed() {
        assertBadArguments(run("--domain", "east", "--registry", DEAD_REGISTRY, "--http-port", "x"),
                "Invalid value for option '--http-port': 'x' is not an int");
        assertBadArguments(run("--domain", "east", "--registry", DEAD_REGISTRY, "--http-port", "70000"),
                "httpPort 70000 is outside 0..65535");
        assertBadArguments(run("--domain", "east", "--registry", DEAD_REGISTRY, "--max-batch-bytes", "10"),
                "maxBatchBytes 10 is under 1024");
        assertBadArguments(run("--domain", "east", "--registry", DEAD_REGISTRY, "--max-links", "0"),
                "maxLinks 0 is outside 1..1000000 (default 10000)");
        assertBadArguments(run("--domain", "east", "--registry", DEAD_REGISTRY, "--linger-ms", "2000"),
                "linger PT2S is outside 0..1 s");
        assertBadArguments(run("--domain", "no such domain", "--registry", DEAD_REGISTRY),
                "domain \"no such domain\" is not 1..64 of [A-Za-z0-9.-]");
        assertBadArguments(run("--domain", "east", "--registry", DEAD_REGISTRY, "--via", "east"),
                "via \"east\" is not another domain, 1..64 of [A-Za-z0-9.-]");
    }

    @Test
    void securityOptionsAreCheckedAndNamed(@TempDir Path dir) {
        assertBadArguments(run("--domain", "east", "--registry", DEAD_REGISTRY, "--insecure", "--security",
                dir.toString()), "--security and --insecure exclude each other: give one");
        assertBadArguments(run("--domain", "east", "--registry", DEAD_REGISTRY, "--rules", "r"),
                "--rules r needs --security DIR");
        assertBadArguments(run("--domain", "east", "--registry", DEAD_REGISTRY, "--security", dir.toString(),
                "--client-auth", "maybe"), "--client-auth maybe is not none, want or need");
        assertBadArguments(run("--domain", "east", "--registry", DEAD_REGISTRY, "--host", "0.0.0.0"),
                "java -jar gma-pcservlet.jar --host 0.0.0.0 listens beyond this machine: give --security DIR (see gma"
                        + " keys) or --insecure");
        Run r = run("--domain", "east", "--registry", DEAD_REGISTRY, "--security", dir.toString());
        assertEquals(2, r.status(), r.err());
        assertTrue(r.err().startsWith("--security " + dir + ": "), r.err());
        assertTrue(r.err().contains("store.pass"), "names the missing file: " + r.err());
    }

    @Test
    void unreachableRegistryExitsOneWithOneLine(@TempDir Path dir) {
        Run r = run("--domain", "east", "--registry", DEAD_REGISTRY, "--http-port", "0", "--uplink-port", "0",
                "--data-dir", dir.resolve("east").toString());
        assertEquals(1, r.status(), r.err());
        List<String> lines = r.err().lines().toList();
        assertEquals(1, lines.size(), r.err());
        assertTrue(lines.get(0).startsWith("gma-pcservlet: "), r.err());
        assertEquals("", r.out());
    }

    @Test
    void theSpoolsOptionsAreCheckedAndNamed() {
        assertBadArguments(run("--domain", "east", "--registry", DEAD_REGISTRY, "--fsync", "sometimes"),
                "Invalid value for option '--fsync': \"sometimes\" is not always, batch or never");
        assertBadArguments(run("--domain", "east", "--registry", DEAD_REGISTRY, "--max-age", "3w"),
                "Invalid value for option '--max-age': \"3w\" is not an age: seconds, or a number with s, m, h or d"
                        + " after it (90s, 15m, 24h, 7d)");
        assertBadArguments(run("--domain", "east", "--registry", DEAD_REGISTRY, "--memory", "--fsync", "always",
                "--max-age", "1h"), "--memory keeps no spool: --fsync, --max-age would have no effect");
        assertBadArguments(run("--domain", "east", "--registry", DEAD_REGISTRY, "--max-spool-bytes", "1000"),
                "maxSpoolBytes 1000 is under 1 MiB (1048576)");
    }

    @Test
    void theProxysOptionsAreCheckedAndNamed(@TempDir Path dir) throws Exception {
        assertBadArguments(run("--domain", "east", "--registry", DEAD_REGISTRY, "--proxy", "https://p:443"),
                "proxy URL https://p:443 is not http://host:port (an HTTP proxy; https destinations go through it by"
                        + " CONNECT)");
        assertBadArguments(run("--domain", "east", "--registry", DEAD_REGISTRY, "--proxy-user", "gma"),
                "the proxy's user, password file or no-proxy hosts are given without the proxy (--proxy"
                        + " http://HOST:PORT)");
        assertBadArguments(run("--domain", "east", "--registry", DEAD_REGISTRY, "--proxy", "http://p:3128",
                "--proxy-user", "gma"), "the proxy's user and password file go together: give both or neither");
        Path empty = java.nio.file.Files.createFile(dir.resolve("empty.pass"));
        assertBadArguments(run("--domain", "east", "--registry", DEAD_REGISTRY, "--proxy", "http://p:3128",
                "--proxy-user", "gma", "--proxy-password-file", empty.toString()),
                "the proxy's password file " + empty + " is empty");
        assertEquals("http://p:3128 (user gma), not for [registry.lan]", parse("--domain", "east", "--proxy",
                "http://p:3128", "--proxy-user", "gma", "--proxy-password-file", java.nio.file.Files.writeString(
                        dir.resolve("p.pass"), "x\n").toString(), "--no-proxy", "registry.lan").configured()
                .settings().proxy().toString());
    }

    @Test
    void theSpoolsOptionsReachTheBuilder() {
        SpoolOptions s = parse("--domain", "east", "--data-dir", "/var/lib/gma/east", "--fsync", "ALWAYS",
                "--max-spool-bytes", "2097152", "--max-age", "24h").configured().settings().spool();
        assertEquals(new SpoolOptions(Path.of("/var/lib/gma/east"), SpoolOptions.Fsync.ALWAYS, 2_097_152,
                Duration.ofHours(24)), s);
        assertEquals(new SpoolOptions(Path.of("east"), SpoolOptions.Fsync.BATCH, SpoolOptions.DEFAULT_MAX_BYTES,
                Duration.ZERO), parse("--domain", "east").configured().settings().spool(), "the defaults");
        assertEquals(null, parse("--domain", "east", "--memory").configured().settings().spool());
    }

    @Test
    void compressionIsAutoOrOff() {
        assertEquals(Compression.Mode.AUTO, parse("--domain", "east").configured().settings().compression());
        assertEquals(Compression.Mode.OFF, parse("--domain", "east", "--compression", "OFF").configured().settings()
                .compression());
        assertBadArguments(run("--domain", "east", "--registry", DEAD_REGISTRY, "--compression", "gzip"),
                "compression \"gzip\" is not auto or off");
        assertTrue(run("--help").out().contains("--compression"));
    }

    @Test
    void runsForItsDurationAndExitsZero(@TempDir Path dir) throws Exception {
        try (Registry registry = Registry.builder().port(0).build().start()) {
            Path spool = dir.resolve("spool-east");
            Run r = run("--domain", "east", "--registry", registry.url(), "--http-port", "0", "--uplink-port", "0",
                    "--duration", "1", "--data-dir", spool.toString());
            assertEquals(0, r.status(), r.err());
            assertTrue(r.out().matches("GMA PC servlet of east at http://127\\.0\\.0\\.1:[0-9]+, uplinks at"
                    + " 127\\.0\\.0\\.1:[0-9]+\nspool in " + Pattern.quote(spool.toAbsolutePath().toString())
                    + " \\(fsync batch\\)\n"), r.out());
            assertTrue(Files.exists(spool.resolve("spool.lock")), "the spool is there");
            Run memory = run("--domain", "east", "--registry", registry.url(), "--http-port", "0", "--uplink-port",
                    "0", "--duration", "1", "--memory");
            assertEquals(0, memory.status(), memory.err());
            assertTrue(memory.out().endsWith("\nin memory only (--memory): what it holds is lost if the process"
                    + " dies\n"), memory.out());
        }
    }

    @Test
    void theQueueOptionsReachTheBuilder() {
        Settings s = parse("--domain", "east", "--registry", DEAD_REGISTRY, "--host", "::1", "--http-port", "0",
                "--uplink-port", "0", "--url", "http://east.example:80/", "--max-queued-bytes", "5000",
                "--max-queued-messages", "6", "--max-total-bytes", "7000", "--max-endpoint-bytes", "8000",
                "--max-batch-bytes", "9000", "--max-links", "12", "--linger-ms", "10", "--drain-seconds", "11")
                .configured().settings();
        assertEquals("::1", s.host());
        assertEquals("http://east.example:80", s.publicUrl());
        assertEquals(5000, s.maxQueuedBytes());
        assertEquals(6, s.maxQueuedMessages());
        assertEquals(7000, s.maxTotalBytes());
        assertEquals(8000, s.maxEndpointBytes());
        assertEquals(9000, s.maxBatchBytes());
        assertEquals(12, s.maxLinks());
        assertEquals(Duration.ofMillis(10), s.linger());
        assertEquals(Duration.ofSeconds(11), s.drainTimeout());
        assertEquals("east", parse("--domain", "lab", "--via", "east").configured().settings().via());
    }

    @Test
    void theDefaultsShownAreTheBuilders() {
        Settings shown = parse("--domain", "east", "--registry", DEAD_REGISTRY).configured().settings();
        Settings builder = PcServer.builder("east", DEAD_REGISTRY).settings();
        assertEquals(8081, shown.httpPort());
        assertEquals(8082, shown.uplinkPort());
        assertEquals(builder.host(), shown.host());
        assertEquals(builder.maxQueuedBytes(), shown.maxQueuedBytes());
        assertEquals(builder.maxQueuedMessages(), shown.maxQueuedMessages());
        assertEquals(builder.maxTotalBytes(), shown.maxTotalBytes());
        assertEquals(builder.maxEndpointBytes(), shown.maxEndpointBytes());
        assertEquals(builder.maxBatchBytes(), shown.maxBatchBytes());
        assertEquals(builder.maxLinks(), shown.maxLinks());
        assertEquals(builder.linger(), shown.linger());
        assertEquals(builder.drainTimeout(), shown.drainTimeout());
    }
}
