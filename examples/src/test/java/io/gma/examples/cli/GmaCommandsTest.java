package io.gma.examples.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gma.registry.Registry;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The gma commands against a real registry, each run as a user would, its output read back. */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class GmaCommandsTest {
    /** One run: its exit status and what it printed. */
    record Run(int status, String out, String err) {
    }

    static Run gma(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int status = Gma.run(args, new PrintWriter(out, true), new PrintWriter(err, true));
        return new Run(status, out.toString(), err.toString());
    }

    static CompletableFuture<Run> background(String... args) {
        return CompletableFuture.supplyAsync(() -> gma(args));
    }

    private static void waitFor(CompletableFuture<Run> run, String registry, String name) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (!gma("query", "--registry", registry, "SELECT name FROM producers").out().contains(name)) {
            assertTrue(System.nanoTime() < deadline && !run.isDone(), name + " did not register");
            Thread.sleep(100);
        }
    }

    @Test
    void pingPongQueryAndTail() throws Exception {
        try (Registry registry = Registry.builder().port(0).build().start()) {
            String url = registry.url();
            CompletableFuture<Run> pong = background("pong", "--registry", url, "--domain", "lan", "--duration", "8");
            waitFor(pong, url, "pong@lan");
            Run ping = gma("ping", "pong@lan", "--registry", url, "--domain", "lan", "-c", "3", "-i", "0");
            assertEquals(0, ping.status(), ping.err());
            assertTrue(ping.out().startsWith("PING pong@lan: 64 data bytes\n64 bytes from pong@lan: seq=1 time="),
                    ping.out());
            assertTrue(ping.out().matches("(?s).*seq=3 time=[0-9.]+ ms\n--- pong@lan ping statistics ---\n3 round"
                    + " trips: p50 .*"), ping.out());

            Run table = gma("query", "--registry", url, "SELECT name, domain FROM producers");
            assertEquals(0, table.status(), table.err());
            assertEquals("name      domain\n--------  ------\npong@lan  lan\n1 row\n", table.out());
            Run json = gma("query", "--json", "--registry", url, "SELECT name FROM producers");
            assertEquals("{\"columns\":[\"name\"],\"rows\":[[\"pong@lan\"]]}\n", json.out());
            Run refused = gma("query", "--registry", url, "DELETE FROM endpoints");
            assertEquals(1, refused.status());
            assertTrue(refused.err().startsWith("gma: ") && refused.err().lines().count() == 1, refused.err());

            CompletableFuture<Run> agent = background("agent", "--registry", url, "--domain", "lan", "--host",
                    "testhost", "--interval", "200", "--duration", "8");
            waitFor(agent, url, "agent-");
            Run tail = gma("tail", "--registry", url, "--domain", "lan", "--duration", "2",
                    "SELECT name FROM producers WHERE name LIKE 'agent-%'");
            assertEquals(0, tail.status(), tail.err());
            assertTrue(tail.out().matches("(?s)tail is tail-[a-z2-7]{6}@lan, subscribed to 1 producers\n.*"
                    + " agent-[a-z2-7]{6}@lan: host=testhost metric=memory\\.used value=.*"), tail.out());
            assertEquals(0, agent.get(20, TimeUnit.SECONDS).status());
            assertEquals(0, pong.get(20, TimeUnit.SECONDS).status());
        }
    }

    @Test
    void keysMakesTheDomainSecretAndCertificates(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir) {
        Run keys = gma("keys", "--dir", dir.toString(), "--client", "alice");
        assertEquals(0, keys.status(), keys.err());
        for (String file : new String[] {"domain.keys", "store.pass", "ca.p12", "ca.pem", "truststore.p12",
            "server.p12", "client-alice.p12"}) {
            assertTrue(keys.out().contains("wrote " + dir.resolve(file) + "\n"), keys.out());
        }
        Run again = gma("keys", "--dir", dir.toString());
        assertEquals(1, again.status());
        assertEquals("gma: " + dir.resolve("store.pass") + " exists already: not overwritten\n", again.err());
    }

    @Test
    void registryAndPcServletStartAndStop() throws Exception {
        Run registry = gma("registry", "--port", "0", "--duration", "1");
        assertEquals(0, registry.status(), registry.err());
        assertTrue(registry.out().matches("GMA registry at http://127\\.0\\.0\\.1:[0-9]+/registry/v1\n"),
                registry.out());
        try (Registry r = Registry.builder().port(0).build().start()) {
            Run pc = gma("pc", "--domain", "east", "--registry", r.url(), "--http-port", "0", "--uplink-port", "0",
                    "--duration", "1");
            assertEquals(0, pc.status(), pc.err());
            assertTrue(pc.out().matches("GMA PC servlet of east at http://127\\.0\\.0\\.1:[0-9]+, uplinks at"
                    + " 127\\.0\\.0\\.1:[0-9]+\n"), pc.out());
        }
        Run missing = gma("pc", "--registry", "http://127.0.0.1:1");
        assertEquals(2, missing.status());
        assertTrue(missing.err().startsWith("--domain is required (or GMA_PC_DOMAIN, GMA_DOMAIN, pc.domain)"),
                missing.err());
    }
}
