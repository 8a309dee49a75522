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
        HostMetrics m = new HostMetrics(netDev, new File("/"));
        Map<String, HostMetrics.Sample> first = byMetric(m.sample());
        assertTrue(first.containsKey("memory.used") && first.containsKey("disk.free"), first.toString());
        assertTrue(!first.containsKey("net.in"), "a rate needs two samples");
        Files.writeString(netDev, "  eth0: 3000 1 0 0 0 0 0 0 2500 1 0 0 0 0 0 0\n"
                + "    lo: 9000 1 0 0 0 0 0 0 9000 1 0 0 0 0 0 0\n");
        Thread.sleep(100); // a deliberate pause, not a wait: a rate is bytes over the time between two samples
        Map<String, HostMetrics.Sample> second = byMetric(m.sample());
        double in = second.get("net.in").value();
        double out = second.get("net.out").value();
        assertTrue(in > 0 && in <= 2000 / 0.1, "net.in " + in); // 2000 bytes in about 0.1 s, loopback left out
        assertEquals(4.0, in / out, 0.01);
        double used = second.get("memory.used").value();
        assertTrue(used > 0 && used <= 100, "memory.used " + used);
    }

    private static Map<String, HostMetrics.Sample> byMetric(List<HostMetrics.Sample> samples) {
        return samples.stream().collect(Collectors.toMap(HostMetrics.Sample::metric, s -> s));
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
