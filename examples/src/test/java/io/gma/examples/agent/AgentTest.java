package io.gma.examples.agent;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gma.client.Consumer;
import io.gma.client.EndpointException;
import io.gma.client.Producer;
import io.gma.client.TableRow;
import io.gma.registry.Registry;
import io.gma.registry.api.RegistryClient;
import io.gma.tables.ColumnType;
import io.gma.tables.Row;
import io.gma.tables.TableException;
import io.gma.tables.TableSchema;
import io.gma.wire.ErrorCode;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import oshi.hardware.CentralProcessor.TickType;

/** The agent: what it samples, the rows it makes of it, and the tables it declares at a real registry. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class AgentTest {
    private static final List<TableSchema> TABLES = HostTables.schemas("lan", "testhost", Duration.ofSeconds(1));

    @Test
    void sharesOfCpuTimeAreTheDifferenceOfTwoReadingsOfTheTicks() {
        long[] before = ticks(100, 0, 100, 700, 100, 0, 0, 0);
        // 400 ticks more: user 50 and nice 10, system 20, irq 5, softirq 5, idle 250, iowait 50, steal 10
        long[] now = ticks(150, 10, 120, 950, 150, 5, 5, 10);
        double[] s = HostMetrics.shares(before, now);
        // busy (all but idle and iowait), usr, sys, iowait, steal, idle, in percent
        assertArrayEquals(new double[] {25.0, 15.0, 7.5, 12.5, 2.5, 62.5}, s, 1e-9);
        assertEquals(100.0, s[1] + s[2] + s[3] + s[4] + s[5], 1e-9);
        assertNull(HostMetrics.shares(now, now), "no time passed: no share");
        assertNull(HostMetrics.shares(now, before), "counters that went backwards");
    }

    private static long[] ticks(long user, long nice, long system, long idle, long iowait, long irq, long softirq,
            long steal) {
        long[] t = new long[TickType.values().length];
        t[TickType.USER.getIndex()] = user;
        t[TickType.NICE.getIndex()] = nice;
        t[TickType.SYSTEM.getIndex()] = system;
        t[TickType.IDLE.getIndex()] = idle;
        t[TickType.IOWAIT.getIndex()] = iowait;
        t[TickType.IRQ.getIndex()] = irq;
        t[TickType.SOFTIRQ.getIndex()] = softirq;
        t[TickType.STEAL.getIndex()] = steal;
        return t;
    }

    @Test
    void ratesArePerSecondAndUnknownWhenACounterWentBack() {
        assertEquals(4000.0, HostMetrics.perSecond(1000, 3000, 500_000_000L), 1e-9);
        assertEquals(0.0, HostMetrics.perSecond(3000, 3000, 500_000_000L), 1e-9);
        assertNull(HostMetrics.perSecond(3000, 1000, 500_000_000L), "a counter reset is no negative rate");
        assertNull(HostMetrics.perSecond(1000, 3000, 0), "no time passed");
    }

    @Test
    void theMachineIsSampledIntoValidRowsWithRatesFromTheSecondRound() throws Exception {
        HostMetrics m = new HostMetrics("lan", "testhost");
        Map<String, List<Row>> first = byTable(m.sample());
        Thread.sleep(300); // a deliberate pause, not a wait: a rate is counters over the time between two rounds
        Map<String, List<Row>> second = byTable(m.sample());
        for (Map<String, List<Row>> round : List.of(first, second)) {
            for (String t : List.of(HostTables.CPU, HostTables.MEMORY, HostTables.DISK)) {
                assertFalse(round.get(t).isEmpty(), "no rows of " + t); // host_net: a machine may have no network
            }
            for (Map.Entry<String, List<Row>> t : round.entrySet()) {
                for (Row r : t.getValue()) {
                    schema(t.getKey()).validate(r); // types, keys, and the agent's predicate
                }
            }
        }
        TableSchema cpu = schema(HostTables.CPU);
        Map<Long, Row> cpus = new HashMap<>();
        for (Row r : second.get(HostTables.CPU)) {
            assertNull(cpus.put(r.getLong(cpu.indexOf("cpu")), r), "two rows of one CPU");
        }
        assertTrue(cpus.size() >= 2 && cpus.containsKey(HostTables.ALL_CPUS) && cpus.containsKey(0L), cpus.toString());
        for (Row r : first.get(HostTables.CPU)) {
            assertTrue(r.isNull(cpu.indexOf("busy")), "a share of CPU time needs two rounds: " + r);
        }
        Row machine = cpus.get(HostTables.ALL_CPUS);
        double busy = machine.getDouble(cpu.indexOf("busy"));
        assertTrue(busy >= 0 && busy <= 100, "busy " + busy);
        double sum = 0;
        for (String share : new String[] {"usr", "sys", "iowait", "steal", "idle"}) {
            sum += machine.getDouble(cpu.indexOf(share));
        }
        assertEquals(100.0, sum, 1e-6, machine.toString());

        TableSchema memory = schema(HostTables.MEMORY);
        Row mem = second.get(HostTables.MEMORY).get(0);
        long total = mem.getLong(memory.indexOf("total"));
        assertTrue(total > 0 && mem.getLong(memory.indexOf("used")) <= total, mem.toString());

        TableSchema disk = schema(HostTables.DISK);
        assertFalse(second.get(HostTables.DISK).isEmpty(), "no file system");
        for (Row r : second.get(HostTables.DISK)) {
            assertTrue(r.getLong(disk.indexOf("total")) > 0, r.toString());
            if (!r.isNull(disk.indexOf("disk"))) {
                assertNotNull(r.get(disk.indexOf("read_bytes_s")), "the disk's rate, from the second round: " + r);
            }
        }
        TableSchema net = schema(HostTables.NET);
        Set<String> before = new TreeSet<>();
        for (Row r : first.get(HostTables.NET)) {
            before.add(r.getString(net.indexOf("iface")));
            assertTrue(r.isNull(net.indexOf("rx_bytes_s")), "a rate in the first round: " + r);
        }
        for (Row r : second.get(HostTables.NET)) {
            if (before.contains(r.getString(net.indexOf("iface")))) {
                assertTrue(r.getDouble(net.indexOf("rx_bytes_s")) >= 0, r.toString());
                assertTrue(r.getDouble(net.indexOf("tx_packets_s")) >= 0, r.toString());
            }
        }
    }

    private static TableSchema schema(String table) {
        return TABLES.stream().filter(s -> s.name().equals(table)).findFirst().orElseThrow();
    }

    private static Map<String, List<Row>> byTable(List<HostMetrics.Sample> samples) {
        Map<String, List<Row>> all = new HashMap<>();
        for (String t : List.of(HostTables.CPU, HostTables.MEMORY, HostTables.DISK, HostTables.NET)) {
            all.put(t, new ArrayList<>());
        }
        for (HostMetrics.Sample s : samples) {
            all.get(s.table()).add(s.row());
        }
        return all;
    }

    @Test
    void thePredicateStatesTheAgentsShareAndQuotesAHostName() {
        assertEquals("domain = 'lan' AND host = 'o''brien'", HostTables.predicate("lan", "o'brien"));
        TableSchema memory = HostTables.schemas("lan", "o'brien", Duration.ofSeconds(5)).get(1);
        Function<String, Row> row = host -> new HostTables.Values(memory).put("domain", "lan").put("host", host)
                .put("total", 1024L).row();
        memory.validate(row.apply("o'brien"));
        TableException outside = assertThrows(TableException.class, () -> memory.validate(row.apply("obrien")));
        assertTrue(outside.getMessage().contains("outside this producer's predicate"), outside.getMessage());
        assertEquals(Duration.ofSeconds(15), memory.latestRetention(), "three intervals");
        assertEquals(Duration.ofSeconds(10), HostTables.latestRetention(Duration.ofMillis(200)), "at least 10 s");
        assertEquals(Duration.ofSeconds(13), HostTables.latestRetention(Duration.ofMillis(4001)), "whole seconds");
    }

    @Test
    void theAgentDeclaresItsTablesAndItsRowsAnswerQueries() throws Exception {
        try (Registry registry = Registry.builder().port(0).build().start();
                Agent agent = Agent.start(registry.url(), "lan", null, "testhost", Duration.ofMillis(200));
                Consumer consumer = Consumer.builder().registry(registry.url()).domain("lan").label("reader")
                        .build()) {
            List<List<Object>> published = RegistryClient.create(registry.url()).query("SELECT table_name, predicate,"
                    + " latest_retention_s FROM publishers WHERE name = '" + agent.name() + "' ORDER BY table_name")
                    .rows();
            assertEquals(List.of(List.of("host_cpu", "domain = 'lan' AND host = 'testhost'", 10),
                    List.of("host_disk", "domain = 'lan' AND host = 'testhost'", 10),
                    List.of("host_memory", "domain = 'lan' AND host = 'testhost'", 10),
                    List.of("host_net", "domain = 'lan' AND host = 'testhost'", 10)), published.stream()
                            .map(r -> List.of(r.get(0), r.get(1), ((Number) r.get(2)).intValue())).toList());
            await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> {
                List<TableRow> rows = consumer.latest("SELECT host, busy FROM host_cpu WHERE cpu = -1");
                assertEquals(1, rows.size(), rows.toString());
                assertEquals(agent.name(), rows.get(0).producer());
                assertEquals("testhost", rows.get(0).row().getString(0));
                assertFalse(rows.get(0).row().isNull(1), "busy, from the second round on");
            });
            assertEquals(List.of(), consumer.latest("SELECT * FROM host_memory WHERE host = 'elsewhere'"));
        }
    }

    @Test
    void anAgentWhoseTableIsDeclaredOtherwiseDoesNotStart() throws Exception {
        try (Registry registry = Registry.builder().port(0).build().start();
                Producer other = Producer.builder().registry(registry.url()).domain("lan").label("other").build()) {
            other.declare(TableSchema.builder("host_memory").column("host", ColumnType.STRING)
                    .column("total", ColumnType.DOUBLE).primaryKey("host").build());
            EndpointException refused = assertThrows(EndpointException.class, () -> Agent.start(registry.url(), "lan",
                    null, "testhost", Duration.ofMillis(200)));
            assertEquals(ErrorCode.FORBIDDEN, refused.code(), refused.toString());
            assertTrue(refused.getMessage().contains("column total is INTEGER here, DOUBLE in the registry"),
                    refused.getMessage());
            RegistryClient client = RegistryClient.create(registry.url());
            await("the agent's producer closed").atMost(Duration.ofSeconds(10)).until(() -> client.query(
                    "SELECT name FROM producers WHERE label = 'agent'").rows().isEmpty());
        }
    }

    @Test
    void routesNameThePcServletsOnTheWay() {
        Map<String, String> vias = new HashMap<>();
        vias.put("bangor", "cardiff");
        assertEquals("direct", Collector.route("swansea", "swansea", vias));
        assertEquals("via pc@cardiff > pc@swansea", Collector.route("swansea", "cardiff", vias));
        assertEquals("via pc@bangor > pc@cardiff > pc@swansea", Collector.route("swansea", "bangor", vias));
        assertEquals("via pc@swansea > pc@cardiff > pc@bangor", Collector.route("bangor", "swansea", vias));
    }
}
