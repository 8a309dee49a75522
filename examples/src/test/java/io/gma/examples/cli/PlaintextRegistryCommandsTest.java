package io.gma.examples.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gma.client.SniffingListener;
import io.gma.examples.cli.GmaCommandsTest.Run;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A sniffing listener stands where the registry would be, behind an {@code http://} URL, and every gma command
 * that calls the registry is run against it with {@code --security}: each refuses the URL before it connects
 * (the listener sees no connection, so no {@code Authorization} header and no token) and says so in one line
 * naming the option and the URL, a usage error. Without security the same URL is called, and the listener sees
 * the request: it would see a credential too. The listener is checked before the command's answer, so that a
 * leak fails with what leaked.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class PlaintextRegistryCommandsTest {
    /** Long enough for a call that was going to be made anyway to reach the listener. */
    private static final Duration QUIET = Duration.ofMillis(500);

    @TempDir
    static Path keys;
    private SniffingListener sniffer;

    @BeforeAll
    static void makeKeys() {
        Run made = GmaCommandsTest.gma("keys", "--dir", keys.toString(), "--client", "alice,east");
        assertEquals(0, made.status(), made.err());
    }

    @BeforeEach
    void listen() throws Exception {
        sniffer = SniffingListener.start();
    }

    @AfterEach
    void stopListening() throws Exception {
        sniffer.close();
    }

    /**
     * Runs {@code command} with {@code args}, the sniffer as its registry and security as {@code identity}, and
     * asserts that the sniffer got nothing and the command said why, in one line, as a usage error.
     */
    private void assertRefusedBeforeSending(String command, String identity, String... args) throws Exception {
        List<String> line = new ArrayList<>(List.of(command));
        line.addAll(List.of(args));
        line.addAll(List.of("--registry", sniffer.url(), "--security", keys.toString(), "--identity", identity));
        Run run = GmaCommandsTest.gma(line.toArray(new String[0]));
        sniffer.assertNothingReceived(QUIET);
        assertEquals("--registry " + sniffer.url() + ": expected scheme 'https' but was 'http' (security is on:"
                + " credentials must not cross the network in plaintext) (see gma " + command + " --help)\n",
                run.err());
        assertEquals(2, run.status());
        assertEquals("", run.out());
    }

    @Test
    void queryRefusesAnHttpRegistryWithSecurity() throws Exception {
        assertRefusedBeforeSending("query", "alice", "SELECT name FROM endpoints");
    }

    @Test
    void pingRefusesAnHttpRegistryWithSecurity() throws Exception {
        assertRefusedBeforeSending("ping", "alice", "pong@lan", "-c", "1");
    }

    @Test
    void pongRefusesAnHttpRegistryWithSecurity() throws Exception {
        assertRefusedBeforeSending("pong", "alice", "--duration", "1");
    }

    @Test
    void tailRefusesAnHttpRegistryWithSecurity() throws Exception {
        assertRefusedBeforeSending("tail", "alice", "--duration", "1", "SELECT name FROM producers");
    }

    @Test
    void agentRefusesAnHttpRegistryWithSecurity() throws Exception {
        assertRefusedBeforeSending("agent", "alice", "--duration", "1", "--interval", "200");
    }

    @Test
    void pcRefusesAnHttpRegistryWithSecurity() throws Exception {
        assertRefusedBeforeSending("pc", "east", "--domain", "east", "--http-port", "0", "--uplink-port", "0",
                "--duration", "1", "--memory");
    }

    @Test
    void queryWithoutSecurityCallsTheSameUrlAndTheListenerSeesIt() throws Exception {
        Run run = GmaCommandsTest.gma("query", "--registry", sniffer.url(), "SELECT name FROM endpoints");
        assertTrue(sniffer.received().contains("POST /registry/v1/query HTTP/1.1"), sniffer.received());
        assertTrue(sniffer.received().contains("SELECT name FROM endpoints"), sniffer.received());
        assertFalse(sniffer.received().contains("Authorization"), "insecure: no credentials to show");
        assertTrue(run.err().startsWith("gma: registry at " + sniffer.url() + "/registry/v1 did not answer POST"
                + " /registry/v1/query"), run.err());
        assertEquals(1, run.status());
    }

    @Test
    void pongWithoutSecurityCallsTheSameUrlAndTheListenerSeesIt() throws Exception {
        Run run = GmaCommandsTest.gma("pong", "--registry", sniffer.url(), "--duration", "1");
        assertTrue(sniffer.received().contains("POST /registry/v1/endpoints HTTP/1.1"), sniffer.received());
        assertFalse(sniffer.received().contains("Authorization"), "insecure: no credentials to show");
        assertTrue(run.err().startsWith("gma: register pong@lan: registry at " + sniffer.url()
                + "/registry/v1 did not answer POST /registry/v1/endpoints"), run.err());
        assertEquals(1, run.status());
    }
}
