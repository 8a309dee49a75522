package io.gma.examples.agent;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gma.registry.Registry;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The collector against a real registry and agent: its continuous queries start once an agent has declared the
 * tables, and it keeps the latest row of each key. (Across domains and PC servlets: GmaTest's and SecureDemoTest's
 * demo.)
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class CollectorTest {
    @Test
    void itsQueriesStartOnceAnAgentDeclaredTheTablesAndItKeepsTheLatestRowPerKey() throws Exception {
        try (Registry registry = Registry.builder().port(0).build().start();
                Collector collector = Collector.start(registry.url(), "lan", null, Duration.ofMillis(200))) {
            Thread.sleep(500); // a deliberate pause, not a wait: rounds that find no table declared yet
            assertEquals(List.of(), collector.readings());
            try (Agent agent = Agent.start(registry.url(), "lan", null, "testhost", Duration.ofMillis(200))) {
                await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> {
                    Set<String> metrics = new TreeSet<>();
                    for (Collector.Reading r : collector.readings()) {
                        assertEquals(agent.name(), r.agent());
                        assertEquals("testhost", r.host());
                        assertEquals("direct", r.route(), "one domain");
                        metrics.add(r.metric().split(" ")[0]);
                    }
                    assertTrue(metrics.containsAll(Set.of("cpu", "memory", "disk")), metrics.toString());
                    Collector.Reading cpu = collector.readings().stream().filter(r -> r.metric().equals("cpu"))
                            .findFirst().orElseThrow();
                    assertTrue(cpu.values().matches("busy \\d+\\.\\d% \\(usr \\d+\\.\\d%, sys \\d+\\.\\d%\\).*"),
                            cpu.values());
                });
                long before = collector.readings().get(0).insertMicros();
                await("a newer row replaces the one of its key").atMost(Duration.ofSeconds(10))
                        .until(() -> collector.readings().get(0).insertMicros() > before);
                long cpuRows = collector.readings().stream().filter(r -> r.metric().equals("cpu")).count();
                assertEquals(1, cpuRows, "the collector asks for the whole machine's row (cpu = -1) only");
                String table = Collector.table(collector.readings(), System.currentTimeMillis());
                assertTrue(table.startsWith("agent "), table);
                assertTrue(table.matches("(?s).*\n" + agent.name() + " +testhost +memory +used \\d+\\.\\d% of .*"
                        + " \\d+\\.\\d s  direct\n.*"), table);
            }
        }
    }

    @Test
    void aLongMountPointIsShownByItsEnd() {
        assertEquals("/var/lib/docker", Collector.shortened("/var/lib/docker"));
        assertEquals("...l_tools_env/v1/python", Collector.shortened("/mnt/sandboxing/model_tools_env/v1/python"));
        assertEquals(Collector.MOUNT_SHOWN, Collector.shortened("/mnt/sandboxing/model_tools_env/v1/python").length());
    }
}
