package io.gma.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** One runner for every command line: exit statuses, one-line errors naming the program, --verbose. */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class CliTest {
    private final StringWriter out = new StringWriter();
    private final StringWriter err = new StringWriter();

    /** A server-like command: port 7 is a usage error, port 9 fails at run time. */
    @Command(name = "serve", mixinStandardHelpOptions = true, description = "Serves nothing, for the test.")
    static final class Serve implements Callable<Integer> {
        @Option(names = "--port", defaultValue = "8080", description = "The port (default ${DEFAULT-VALUE}).")
        int port;

        @Option(names = "--host", defaultValue = "127.0.0.1")
        String host;

        @Mixin
        SecurityOptions security;

        @Mixin
        DurationOption duration;

        @Spec
        CommandLine.Model.CommandSpec spec;

        @Override
        public Integer call() throws Exception {
            Cli.check(spec, port != 7, "--port 7 is reserved");
            security.security(spec, "serve", host);
            if (port == 9) {
                throw new IOException("Failed to bind to /127.0.0.1:9");
            }
            spec.commandLine().getOut().println("serving on " + port + " for " + duration.seconds() + " s");
            return 0;
        }
    }

    @Command(name = "top", subcommands = Serve.class)
    static final class Top {
    }

    private int standalone(String... args) {
        return Cli.run("gma-serve", Cli.standalone(new Serve(), "java -jar gma-serve.jar")
                .setOut(new PrintWriter(out, true)).setErr(new PrintWriter(err, true)), args);
    }

    @Test
    void aCommandThatRunsExitsZero() {
        assertEquals(Cli.OK, standalone("--port", "1", "--duration", "3"), err.toString());
        assertEquals("serving on 1 for 3 s\n", out.toString());
        assertEquals("", err.toString());
    }

    @Test
    void aProgramOfItsOwnTakesTheLastOfAnOptionGivenTwice() {
        assertEquals(Cli.OK, standalone("--port", "1", "--port", "2"), err.toString());
        assertEquals("serving on 2 for 0 s\n", out.toString());
    }

    @Test
    void helpShowsTheProgramsNameTheEnvironmentAndVerboseAndExitsZero() {
        assertEquals(Cli.OK, standalone("--help"));
        String help = out.toString();
        assertTrue(help.startsWith("Usage: java -jar gma-serve.jar [-hV] [--insecure] [--verbose]"), help);
        assertTrue(help.matches("(?s).*--verbose +Stack traces with errors\\..*"), help);
        assertTrue(help.contains("GMA_<COMMAND>_<OPTION>"), help);
        assertTrue(help.contains("Here <COMMAND> is serve, as for gma serve."), help);
    }

    @Test
    void aUsageErrorIsOneLinePointingToTheHelpAndExitsTwo() {
        assertEquals(Cli.USAGE, standalone("--port", "x"));
        assertEquals("Invalid value for option '--port': 'x' is not an int (see java -jar gma-serve.jar --help)\n",
                err.toString());
        err.getBuffer().setLength(0);
        assertEquals(Cli.USAGE, standalone("--port", "7"));
        assertEquals("--port 7 is reserved (see java -jar gma-serve.jar --help)\n", err.toString());
        err.getBuffer().setLength(0);
        assertEquals(Cli.USAGE, standalone("--frobnicate"));
        assertEquals("Unknown option: '--frobnicate' (see java -jar gma-serve.jar --help)\n", err.toString());
        assertEquals("", out.toString());
    }

    @Test
    void anExposedHostWithoutSecurityIsAUsageErrorNamingTheProgram() {
        assertEquals(Cli.USAGE, standalone("--host", "0.0.0.0"));
        assertEquals("java -jar gma-serve.jar --host 0.0.0.0 listens beyond this machine: give --security DIR (see"
                + " gma keys) or --insecure (see java -jar gma-serve.jar --help)\n", err.toString());
    }

    @Test
    void aFailureIsOneLineAfterTheProgramsNameAndExitsOne() {
        assertEquals(Cli.FAILED, standalone("--port", "9"));
        assertEquals("gma-serve: Failed to bind to /127.0.0.1:9\n", err.toString());
    }

    @Test
    void verboseAddsTheStackTrace() {
        assertEquals(Cli.FAILED, standalone("--port", "9", "--verbose"));
        String[] lines = err.toString().split("\n");
        assertEquals("gma-serve: Failed to bind to /127.0.0.1:9", lines[0]);
        assertEquals("java.io.IOException: Failed to bind to /127.0.0.1:9", lines[1]);
        assertTrue(err.toString().contains("at io.gma.cli.CliTest$Serve.call"), err.toString());
    }

    @Test
    void aSubcommandIsNamedAfterItsProgramAndInheritsVerbose() {
        CommandLine top = new CommandLine(new Top()).setOut(new PrintWriter(out, true))
                .setErr(new PrintWriter(err, true));
        assertEquals(Cli.USAGE, Cli.run("top", top, new String[] {"serve", "--port", "7"}));
        assertEquals("--port 7 is reserved (see top serve --help)\n", err.toString());
        err.getBuffer().setLength(0);
        top = new CommandLine(new Top()).setOut(new PrintWriter(out, true)).setErr(new PrintWriter(err, true));
        assertEquals(Cli.FAILED, Cli.run("top", top, new String[] {"serve", "--port", "9", "--verbose"}));
        assertTrue(err.toString().startsWith("top: Failed to bind to /127.0.0.1:9\njava.io.IOException: "),
                err.toString());
    }

    @Test
    void logLevelIsTakenCheckedAndReadFromTheArgumentsBeforeAnyLogger() {
        assertEquals(Cli.OK, standalone("--port", "1", "--log-level", "debug"), err.toString());
        assertEquals(Cli.USAGE, standalone("--port", "1", "--log-level", "loud"));
        assertEquals("--log-level loud is not one of trace, debug, info, warn, error, off (see java -jar"
                + " gma-serve.jar --help)\n", err.toString());
        assertEquals("error", Cli.logLevel(new String[] {"serve", "--log-level", "debug", "--log-level=error"}));
        assertEquals(null, Cli.logLevel(new String[] {"serve", "--log-level"}));
    }
}
