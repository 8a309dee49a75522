package io.gma.examples.agent;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class AgentTest {
    @Test
    void hostMetricsSampleTheMachineAndNetworkRatesFromTheSecondSample(@TempDir Path dir) throws Exception {
        Path netDev = dir.resolve("dev");
        Files.writeString(netDev, "Inter-|   Receive |  Transmit\n face |bytes packets|bytes\n"
                + "    lo: 5000 1 0 0 0 0 0 0 5000 1 0 0 0 0 0 0\n"
                + "  eth0: 1000 1 0 0 0 0 0 0 2000 1 0 0 0 0 0 0\n");
        Path stat = dir.resolve("stat");
        Files.writeString(stat, "cpu  100 0 100 700 100 0 0 0 0 0\ncpu0 50 0 50 350 50 0 0 0 0 0\n");
        HostMetrics m = new HostMetrics(netDev, stat, new File("/"));
        Map<String, HostMetrics.Sample> first = byMetric(m.sample());
        assertTrue(first.containsKey("memory.used") && first.containsKey("disk.free"), first.toString());
        assertTrue(!first.containsKey("net.in") && !first.containsKey("cpu"), "a rate needs two samples");
        // 400 ticks more, 100 of them busy (user 60, system 40), 300 idle or waiting: 25%
        Files.writeString(stat, "cpu  160 0 140 950 150 0 0 0 0 0\n");
        Files.writeString(netDev, "  eth0: 3000 1 0 0 0 0 0 0 2500 1 0 0 0 0 0 0\n"
                + "    lo: 9000 1 0 0 0 0 0 0 9000 1 0 0 0 0 0 0\n");
        Thread.sleep(100); // a deliberate pause, not a wait: a rate is bytes over the time between two samples
        Map<String, HostMetrics.Sample> second = byMetric(m.sample());
        double in = second.get("net.in").value();
        double out = second.get("net.out").value();
        assertTrue(in > 0 && in <= 2000 / 0.1, "net.in " + in); // 2000 bytes in about 0.1 s, loopback left out
        assertEquals(4.0, in / out, 0.01);
        assertEquals(25.0, second.get("cpu").value(), 1e-9);
        double used = second.get("memory.used").value();
        assertTrue(used > 0 && used <= 100, "memory.used " + used);
    }

    private static Map<String, HostMetrics.Sample> byMetric(List<HostMetrics.Sample> samples) {
        return samples.stream().collect(Collectors.toMap(HostMetrics.Sample::metric, s -> s));
    }

    @Test
    void twoSamplersOfOneMachineReportTheSameCpuOverTheSameTicks(@TempDir Path dir) throws Exception {
        Path stat = dir.resolve("stat");
        Files.writeString(stat, "cpu  100 0 100 800 0 0 0 0 0 0\n");
        HostMetrics a = new HostMetrics(dir.resolve("no-net"), stat, new File("/"));
        HostMetrics b = new HostMetrics(dir.resolve("no-net"), stat, new File("/"));
        a.sample();
        b.sample();
        Files.writeString(stat, "cpu  200 0 200 1400 0 0 0 0 0 0\n");
        // a asks first: with the JVM's getCpuLoad() shared by both, b would have measured since a's call
        assertEquals(25.0, byMetric(a.sample()).get("cpu").value(), 1e-9);
        assertEquals(25.0, byMetric(b.sample()).get("cpu").value(), 1e-9);
    }

    @Test
    void routesNameThePcServletsOnTheWay() {
        Map<String, String> vias = new java.util.HashMap<>();
        vias.put("bangor", "cardiff");
        assertEquals("direct", Collector.route("swansea", "swansea", vias));
        assertEquals("via pc@cardiff > pc@swansea", Collector.route("swansea", "cardiff", vias));
        assertEquals("via pc@bangor > pc@cardiff > pc@swansea", Collector.route("swansea", "bangor", vias));
        assertEquals("via pc@swansea > pc@cardiff > pc@bangor", Collector.route("bangor", "swansea", vias));
    }
}
