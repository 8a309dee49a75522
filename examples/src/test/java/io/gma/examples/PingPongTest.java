package io.gma.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gma.client.Producer;
import io.gma.pcservlet.PcServer;
import io.gma.registry.Registry;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(value = 60, unit = TimeUnit.SECONDS)
class PingPongTest {
    @Test
    void pingMeasuresRoundTripsToPongInBothModes() throws Exception {
        try (Registry registry = Registry.builder().port(0).build().start();
                Producer pong = Pong.start(registry.url(), "lan", "pong");
                Ping ping = Ping.start(registry.url(), "lan")) {
            assertEquals("pong@lan", pong.name());
            for (boolean blocking : new boolean[] {true, false}) {
                long[] rtt = ping.run("pong@lan", 200, 1024, blocking);
                assertEquals(200, rtt.length);
                for (long t : rtt) {
                    assertTrue(t > 0);
                }
                String summary = Ping.summary(rtt);
                assertTrue(summary.matches(
                        "200 round trips: p50 [0-9.]+ us, p90 [0-9.]+ us, p99 [0-9.]+ us, max [0-9.]+ us"), summary);
            }
        }
    }

    @Test
    void pingReachesPongInAnotherDomainThroughTheirPcServlets() throws Exception {
        try (Registry registry = Registry.builder().port(0).build().start();
                PcServer east = PcServer.builder("east", registry.url()).start();
                PcServer west = PcServer.builder("west", registry.url()).start();
                Producer pong = Pong.start(registry.url(), "east", "pong", east.uplink());
                Ping ping = Ping.start(registry.url(), "west", west.uplink())) {
            for (boolean blocking : new boolean[] {true, false}) {
                long[] rtt = ping.run("pong@east", 50, 100, blocking);
                assertEquals(50, rtt.length);
            }
        }
    }
}
