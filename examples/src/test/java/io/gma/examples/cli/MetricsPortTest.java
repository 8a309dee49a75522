package io.gma.examples.cli;

import static io.gma.examples.cli.GmaCommandsTest.gma;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gma.examples.cli.GmaCommandsTest.Run;
import io.gma.registry.Registry;
import io.gma.registry.Scrape;
import io.gma.registry.api.RegistryClient;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** {@code --metrics-port} of {@code gma pong} and {@code gma agent}: the page served, found, read, moving. */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class MetricsPortTest {
    /** The URL {@code name} registered as its attribute metrics, once it has. */
    private static String metricsOf(RegistryClient registry, String name, CompletableFuture<?> run) {
        String sql = "SELECT value FROM attributes WHERE key = 'metrics' AND name LIKE '" + name + "'";
        List<List<Object>> rows = await(name + " did not register its metrics").atMost(Duration.ofSeconds(20))
                .failFast(name + " ended before it registered", run::isDone)
                .until(() -> registry.query(sql).rows(), r -> !r.isEmpty());
        return (String) rows.get(0).get(0);
    }

    @Test
    void pongServesItsCountersAtTheUrlItPrintsAndRegisters() throws Exception {
        try (Registry registry = Registry.builder().port(0).build().start()) {
            String url = registry.url();
            LiveGma pong = new LiveGma("pong", "--registry", url, "--metrics-port", "0");
            String metrics = metricsOf(RegistryClient.create(url), "pong@lan", pong.status);
            assertTrue(metrics.matches("http://127\\.0\\.0\\.1:[0-9]+/metrics"), metrics);
            double before = Scrape.get(metrics).value("gma_endpoint_messages_in_total", "endpoint", "pong@lan");

            Run ping = gma("ping", "pong@lan", "--registry", url, "-c", "3", "-i", "0");
            assertEquals(0, ping.status(), ping.err());
            Scrape after = Scrape.get(metrics);
            assertTrue(after.value("gma_endpoint_messages_in_total", "endpoint", "pong@lan") >= before + 3,
                    after.text());
            assertTrue(after.value("gma_endpoint_messages_out_total", "endpoint", "pong@lan") >= 3, after.text());

            assertEquals(0, pong.interrupt(), pong.err.toString());
            assertEquals("pong is pong@lan\nmetrics at " + metrics + "\n", pong.out.toString());
        }
    }

    @Test
    void agentServesItsCountersToo() throws Exception {
        try (Registry registry = Registry.builder().port(0).build().start()) {
            String url = registry.url();
            LiveGma agent = new LiveGma("agent", "--registry", url, "--host", "testhost", "--interval", "200",
                    "--metrics-port", "127.0.0.1:0");
            String metrics = metricsOf(RegistryClient.create(url), "agent-%@lan", agent.status);
            Scrape page = Scrape.get(metrics);
            String name = (String) page.family("gma_endpoint_queued_messages").getMetrics().get(0).getLabels()
                    .get("endpoint");
            assertTrue(name.matches("agent-[a-z2-7]{6}@lan"), name);
            agent.awaitOut("metrics at "); // running: its tables declared after it registered, and its lines out
            assertEquals(0, agent.interrupt(), agent.err.toString());
            assertEquals("agent is " + name + "\nmetrics at " + metrics + "\n", agent.out.toString());
        }
    }

    @Test
    void aBadValueIsAUsageErrorAndAPortInUseFailsNamingIt() throws Exception {
        Run bad = gma("pong", "--metrics-port", "localhost:x");
        assertEquals(2, bad.status());
        assertEquals("--metrics-port localhost:x is not [HOST:]PORT with PORT 0..65535 (see gma pong --help)\n",
                bad.err());
        try (Registry registry = Registry.builder().port(0).build().start();
                ServerSocket taken = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
            int port = taken.getLocalPort();
            Run busy = gma("agent", "--registry", registry.url(), "--metrics-port", Integer.toString(port),
                    "--duration", "1");
            assertEquals(1, busy.status());
            assertEquals("gma: cannot listen on 127.0.0.1:" + port + " for metrics (Address already in use): another"
                    + " process has it; stop that one, or give --metrics-port (EndpointBuilder.metrics) another port"
                    + " (0 takes any free one)\n", busy.err());
        }
    }

    @Test
    void onlyTheLongRunningEndpointsTakeIt() {
        for (String command : new String[] {"pong", "agent"}) {
            Run help = gma(command, "--help");
            assertTrue(help.out().contains("--metrics-port=[HOST:]PORT"), help.out());
        }
        for (String command : new String[] {"ping", "tail", "query"}) {
            Run help = gma(command, "--help");
            assertFalse(help.out().contains("--metrics-port"), command + ": " + help.out());
        }
    }
}
