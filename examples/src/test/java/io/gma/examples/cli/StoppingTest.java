package io.gma.examples.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gma.cli.CommandProcess;
import io.gma.registry.Registry;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The long-running commands stopped as a service manager or a user stops them, each gma a process of its own:
 * SIGTERM and Ctrl-C (SIGINT) are a clean stop, exit status 0, not the JVM's 143 and 130.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class StoppingTest {
    @Test
    void registryPcServletAndPongStopCleanlyOnSigtermAndSigint(@TempDir Path dir) throws Exception {
        try (CommandProcess registry = GmaProcess.start(Map.of(), "registry", "--port", "0")) {
            String url = registry.await("GMA registry at ").substring("GMA registry at ".length())
                    .replace(Registry.API_PATH, "");
            try (CommandProcess pc = GmaProcess.start(Map.of(), "pc", "--domain", "east", "--registry", url,
                    "--http-port", "0", "--uplink-port", "0", "--data-dir", dir.resolve("east").toString());
                    CommandProcess pong = GmaProcess.start(Map.of(), "pong", "--registry", url)) {
                pong.await("pong is pong@lan");
                String signal = pong.interrupt();
                CommandProcess.Ended stopped = pong.exit();
                assertEquals(0, stopped.status(), stopped.output());
                assertTrue(stopped.output().contains("INFO Running - SIG" + signal + ": stopping (another SIGINT or"
                        + " SIGTERM stops at once)"), stopped.output());

                pc.await("spool in ");
                pc.signal("TERM");
                stopped = pc.exit();
                assertEquals(0, stopped.status(), stopped.output());
                assertTrue(stopped.output().contains("INFO Running - SIGTERM: stopping"), stopped.output());
                assertTrue(stopped.output().contains("INFO PcNode - east: stopped; every queue was drained"),
                        stopped.output());
            }
            String signal = registry.interrupt();
            CommandProcess.Ended stopped = registry.exit();
            assertEquals(0, stopped.status(), stopped.output());
            assertTrue(stopped.output().contains("INFO Running - SIG" + signal + ": stopping"), stopped.output());
        }
    }

    @Test
    void aBadDomainIsAUsageErrorNamingTheValueAndTheRule() {
        for (String command : new String[] {"pc", "pong", "agent", "ping pong@lan", "tail SELECT"}) {
            StringWriter err = new StringWriter();
            String[] args = Stream.concat(Stream.of(command.split(" ")), Stream.of("--domain", "bad domain!"))
                    .toArray(String[]::new);
            int status = Gma.run(args, new PrintWriter(new StringWriter(), true), new PrintWriter(err, true));
            assertEquals(2, status, command + ": " + err);
            assertTrue(err.toString().contains("domain \"bad domain!\" is not 1..64 of [A-Za-z0-9.-]"), err.toString());
            assertEquals(1, err.toString().lines().count(), err.toString());
        }
        StringWriter err = new StringWriter();
        assertEquals(2, Gma.run(new String[] {"pc", "bad domain!"}, new PrintWriter(new StringWriter(), true),
                new PrintWriter(err, true)));
        assertEquals("'bad domain!' is no option, and no domain either (1..64 of [A-Za-z0-9.-]); the domain is given"
                + " as --domain DOMAIN (see gma pc --help)\n", err.toString());
        err.getBuffer().setLength(0);
        assertEquals(2, Gma.run(new String[] {"pc", "east"}, new PrintWriter(new StringWriter(), true),
                new PrintWriter(err, true)));
        assertEquals("the domain is given as --domain east, not as 'east' alone (see gma pc --help)\n", err.toString());
    }
}
