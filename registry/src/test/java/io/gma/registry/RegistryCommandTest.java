package io.gma.registry;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gma.cli.Cli;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import picocli.CommandLine;

/**
 * {@code java -jar gma-registry.jar}: {@link RegistryCommand} run as the jar's main runs it, in this JVM: exit
 * status 0 after a run, 2 for bad arguments with one line naming what is wrong, 1 when it cannot start.
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class RegistryCommandTest {
    private static final String SEE_HELP = " (see java -jar gma-registry.jar --help)\n";

    private final StringWriter out = new StringWriter();
    private final StringWriter err = new StringWriter();

    /** What {@link RegistryCommand#main} does, without exiting the JVM. */
    private int run(String... args) {
        err.getBuffer().setLength(0);
        return Cli.run("gma-registry", RegistryCommand.standalone().setOut(new PrintWriter(out, true))
                .setErr(new PrintWriter(err, true)), args);
    }

    private String err() {
        return err.toString();
    }

    @Test
    void helpPrintsEveryOptionAndExitsZero() {
        assertEquals(0, run("--help"));
        String usage = out.toString();
        assertTrue(usage.startsWith("Runs a registry.\nUsage: java -jar gma-registry.jar [-hV] [--insecure]"), usage);
        for (String option : new String[] {"--host", "--port", "--jdbc", "--jdbc-user", "--jdbc-query-user",
                "--max-rows", "--query-timeout", "--default-lease", "--max-lease", "GMA_JDBC_PASSWORD",
                "GMA_JDBC_QUERY_PASSWORD", "--security", "--identity", "--client-auth", "--rules", "--insecure",
                "--duration", "--verbose", "GMA_<COMMAND>_<OPTION>", "Here <COMMAND> is registry", "Exit status"}) {
            assertTrue(usage.contains(option), option);
        }
        assertEquals("", err());
    }

    @Test
    void runsForItsDurationAndExitsZero() {
        assertEquals(0, run("--port", "8080", "--port", "0", "--duration", "1"), err()); // as before: the last wins
        assertTrue(out.toString().matches("GMA registry at http://127\\.0\\.0\\.1:[0-9]+/registry/v1\n"),
                out.toString());
    }

    @Test
    void badArgumentsExitTwoWithOneClearLine() {
        assertEquals(2, run("--port", "http"));
        assertEquals("Invalid value for option '--port': 'http' is not an int" + SEE_HELP, err());
        assertEquals(2, run("--max-rows", "0"));
        assertEquals("maxRows 0 is outside 1..1000000" + SEE_HELP, err());
        assertEquals(2, run("--frobnicate", "1"));
        assertTrue(err().startsWith("Unknown options: '--frobnicate', '1'") && err().endsWith(SEE_HELP), err());
        assertEquals(2, run("--port", "0", "--frobnicate"));
        assertEquals("Unknown option: '--frobnicate'" + SEE_HELP, err());
        assertEquals(2, run("--port"));
        assertEquals("Missing required parameter for option '--port' (<port>)" + SEE_HELP, err());
        assertEquals(2, run("--jdbc", "jdbc:mysql://x/y"));
        assertTrue(err().contains("is not H2 (jdbc:h2:) or PostgreSQL (jdbc:postgresql:)"), err());
        assertEquals(2, run("--jdbc", "jdbc:mysql://x/y?user=gma&PASSWORD=s3cret"));
        assertTrue(err().contains("PASSWORD=***") && !err().contains("s3cret"), err()); // whatever the key's case
        assertEquals(1, err().lines().count(), err());
        assertEquals(2, run("--jdbc-user", "me"));
        assertEquals("--jdbc-user needs --jdbc: the default in-memory database has its own" + SEE_HELP, err());
        assertEquals("", out.toString());
    }

    @Test
    void portInUseExitsOne() throws Exception {
        try (ServerSocket taken = new ServerSocket(0, 1, InetAddress.getByName("127.0.0.1"))) {
            assertEquals(1, run("--port", "" + taken.getLocalPort()));
            assertTrue(err().startsWith("gma-registry: "), err());
            assertEquals(1, err().lines().count(), err());
        }
    }

    @Test
    void optionsReachTheBuilder() {
        RegistryCommand command = new RegistryCommand();
        new CommandLine(command).parseArgs("--host", "::1", "--port", "0", "--max-rows", "7", "--query-timeout",
                "2", "--default-lease", "10", "--max-lease", "20");
        Registry registry = command.configured();
        assertEquals(7, registry.settings().maxRows());
        assertEquals(2, registry.settings().queryTimeout().toSeconds());
        assertEquals(10, registry.settings().defaultLease().toSeconds());
        assertEquals(20, registry.settings().maxLease().toSeconds());
    }

    @Test
    void theDefaultsShownAreTheBuilders() {
        RegistryCommand command = new RegistryCommand();
        new CommandLine(command).parseArgs();
        Settings shown = command.configured().settings();
        Settings builder = Registry.builder().build().settings();
        assertEquals(builder.maxRows(), shown.maxRows());
        assertEquals(builder.queryTimeout(), shown.queryTimeout());
        assertEquals(builder.defaultLease(), shown.defaultLease());
        assertEquals(builder.maxLease(), shown.maxLease());
        assertEquals(builder.jdbcUser(), shown.jdbcUser());
    }

    @Test
    void securityOptionsAreCheckedBeforeAnythingStarts() {
        assertEquals(2, run("--rules", "r"));
        assertEquals("--rules r needs --security DIR" + SEE_HELP, err());
        assertEquals(2, run("--security", "d", "--insecure"));
        assertEquals("--security and --insecure exclude each other: give one" + SEE_HELP, err());
        assertEquals(2, run("--security", "no-such-dir", "--client-auth", "maybe"));
        assertEquals("--client-auth maybe is not none, want or need" + SEE_HELP, err());
        assertEquals(2, run("--security", "no-such-dir"));
        assertEquals("--security no-such-dir: no file no-such-dir/store.pass" + SEE_HELP, err());
        assertEquals(2, run("--host", "0.0.0.0"));
        assertEquals("java -jar gma-registry.jar --host 0.0.0.0 listens beyond this machine: give --security DIR"
                + " (see gma keys) or --insecure" + SEE_HELP, err());
    }
}
