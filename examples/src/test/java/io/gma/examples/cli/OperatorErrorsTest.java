package io.gma.examples.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gma.pcservlet.PcServer;
import io.gma.registry.Registry;
import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * What a user who gets something wrong is told, by gma run as a process of its own (its log lines, its reading of
 * the environment): a misspelt setting, an uplink to nothing, an uplink to the PC servlet's HTTP port.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class OperatorErrorsTest {
    @Test
    void aMisspeltKeyOrVariableIsAWarningNamingTheNearestSetting(@TempDir Path dir) throws Exception {
        Path props = dir.resolve("gma.properties");
        Files.writeString(props, "registy=http://127.0.0.1:1\npc.http-port=9000\n");
        GmaProcess.Run run = GmaProcess.run(Map.of("GMA_CONFIG", props.toString(), "GMA_DOMIAN", "east",
                "GMA_PC_HTTP_PORT", "9001"), "query", "--help");
        String out = run.out();
        List<String> err = run.err().lines().toList();
        assertEquals(0, run.status(), "a warning is no failure: " + err);
        assertTrue(out.contains("Usage: gma query"), out);
        assertEquals(List.of("gma: warning: the environment variable GMA_DOMIAN is no setting of any command (did you"
                + " mean GMA_DOMAIN?); ignored", "gma: warning: the key registy in " + props + " is no setting of any"
                + " command (did you mean registry?); ignored"), err);
        assertFalse(err.toString().contains("http-port"), "settings a command takes are not warned of: " + err);
    }

    @Test
    void anUplinkToNothingSaysSoAtEachTry() throws Exception {
        try (Registry registry = Registry.builder().port(0).build().start()) {
            int dead = freePort();
            GmaProcess.Run run = GmaProcess.run(Map.of(), "pong", "--registry", registry.url(), "--domain", "east",
                    "--pc", "127.0.0.1:" + dead, "--duration", "3");
            assertEquals(0, run.status(), run.err());
            assertTrue(run.err().contains("cannot reach the PC servlet at 127.0.0.1:" + dead + " (Connection refused):"
                    + " is gma pc running there, and is that its --uplink-port? Trying again in "), run.err());
        }
    }

    @Test
    void anUplinkToTheHttpPortSaysWhichPortItWants() throws Exception {
        try (Registry registry = Registry.builder().port(0).build().start();
                PcServer east = PcServer.builder("east", registry.url()).start()) {
            GmaProcess.Run run = GmaProcess.run(Map.of(), "pong", "--registry", registry.url(), "--domain", "east",
                    "--pc", "127.0.0.1:" + east.httpPort(), "--duration", "3");
            assertEquals(0, run.status(), run.err());
            assertTrue(run.err().contains("cannot reach the PC servlet at 127.0.0.1:" + east.httpPort() + " (magic"
                    + " 0x4854 is not 0x474D (\"GM\"): this is an HTTP server, not a GMA stream (a PC servlet's"
                    + " uplinks are on its --uplink-port, not its --http-port))"), run.err());
        }
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }

    @Test
    void aPortInUseNamesTheAddressAndTheOptionToChange(@TempDir Path dir) throws Exception {
        try (Registry registry = Registry.builder().port(0).build().start();
                ServerSocket taken = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            int port = taken.getLocalPort();
            GmaProcess.Run http = GmaProcess.run(Map.of(), "pc", "--domain", "east", "--registry", registry.url(),
                    "--http-port", Integer.toString(port), "--uplink-port", "0", "--data-dir",
                    dir.resolve("east").toString());
            assertEquals(1, http.status(), http.err());
            assertTrue(http.err().contains("gma: cannot listen on 127.0.0.1:" + port + " (Address already in use):"
                    + " another process has it; stop that one, or give --http-port (PcServer.Builder.httpPort)"
                    + " another port (0 takes any free one)\n"), http.err());
            assertFalse(http.err().contains("drained"), "it never served: " + http.err());
            GmaProcess.Run uplink = GmaProcess.run(Map.of(), "pc", "--domain", "east", "--registry", registry.url(),
                    "--http-port", "0", "--uplink-port", Integer.toString(port), "--data-dir",
                    dir.resolve("east").toString());
            assertEquals(1, uplink.status(), uplink.err());
            assertTrue(uplink.err().contains("gma: cannot listen for uplinks on 127.0.0.1:" + port + " (Address"
                    + " already in use): another process has it; stop that one, or give --uplink-port"
                    + " (PcServer.Builder.uplinkPort) another port (0 takes any free one)\n"), uplink.err());
            GmaProcess.Run reg = GmaProcess.run(Map.of(), "registry", "--port", Integer.toString(port));
            assertEquals(1, reg.status(), reg.err());
            assertTrue(reg.err().contains("gma: cannot listen on 127.0.0.1:" + port + " (Address already in use):"
                    + " another process has it; stop that one, or give --port (Registry.Builder.port) another port"
                    + " (0 takes any free one)\n"), reg.err());
        }
    }

    @Test
    void logLevelChoosesWhatTheLogShows() throws Exception {
        try (Registry registry = Registry.builder().port(0).build().start()) {
            GmaProcess.Run warn = GmaProcess.run(Map.of(), "pong", "--registry", registry.url(), "--duration", "1");
            assertTrue(warn.err().contains(" WARN ") && warn.err().contains("runs INSECURE"), warn.err());
            GmaProcess.Run error = GmaProcess.run(Map.of(), "pong", "--registry", registry.url(), "--duration", "1",
                    "--log-level", "error");
            assertEquals(0, error.status(), error.err());
            assertEquals("", error.err(), "only errors");
            // a server logs at INFO, unless told otherwise
            GmaProcess.Run info = GmaProcess.run(Map.of(), "pc", "--domain", "east", "--registry", registry.url(),
                    "--http-port", "0", "--uplink-port", "0", "--memory", "--duration", "1");
            assertTrue(info.err().contains(" INFO PcNode - PC servlet of east at "), info.err());
            GmaProcess.Run quiet = GmaProcess.run(Map.of(), "pc", "--domain", "east", "--registry", registry.url(),
                    "--http-port", "0", "--uplink-port", "0", "--memory", "--duration", "1", "--log-level=warn");
            assertEquals(0, quiet.status(), quiet.err());
            assertFalse(quiet.err().contains(" INFO "), quiet.err());
        }
    }

    @Test
    void aBadValueFromTheEnvironmentOrTheFileIsNamedByItsSource(@TempDir Path dir) throws Exception {
        GmaProcess.Run fromEnv = GmaProcess.run(Map.of("GMA_PING_COUNT", "abc"), "ping", "pong@lan", "--registry",
                "http://127.0.0.1:1");
        assertEquals(2, fromEnv.status(), fromEnv.err());
        assertEquals("Invalid value for option '--count': 'abc' is not an int, from the environment variable"
                + " GMA_PING_COUNT (see gma ping --help)\n", fromEnv.err());
        Path props = dir.resolve("gma.properties");
        Files.writeString(props, "ping.size = big\n");
        GmaProcess.Run fromFile = GmaProcess.run(Map.of("GMA_CONFIG", props.toString()), "ping", "pong@lan",
                "--registry", "http://127.0.0.1:1");
        assertEquals(2, fromFile.status(), fromFile.err());
        assertEquals("Invalid value for option '--size': 'big' is not an int, from the key ping.size in the"
                + " properties file (see gma ping --help)\n", fromFile.err());
        GmaProcess.Run typed = GmaProcess.run(Map.of("GMA_PING_COUNT", "5"), "ping", "pong@lan", "--registry",
                "http://127.0.0.1:1", "--count", "abc");
        assertEquals("Invalid value for option '--count': 'abc' is not an int (see gma ping --help)\n", typed.err());
    }
}
