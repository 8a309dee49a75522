package io.gma.pcservlet;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gma.client.Consumer;
import io.gma.client.Producer;
import io.gma.registry.Registry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The remote PC servlet stopped for 5 s in the middle of a stream and started again on the same ports: every
 * message is delivered once, in order. The sending side keeps its batch and retries; the stopped side drains
 * what it accepted before it goes, and takes nothing new from its uplinks (their endpoints send it again).
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class RemoteRestartTest {
    @Test
    void everyMessageOnceAndInOrderAcrossARestart() throws Exception {
        int n = 20_000;
        List<Integer> got = new ArrayList<>();
        try (Registry registry = Registry.builder().port(0).build().start();
                PcServer east = PcServer.builder("east", registry.url()).start()) {
            PcServer west = PcServer.builder("west", registry.url()).start();
            int httpPort = west.httpPort();
            int uplinkPort = west.uplinkPort();
            try (Consumer sink = Consumer.builder().registry(registry.url()).domain("west").pcServlet(west.uplink())
                    .label("sink").onMessage(m -> {
                        synchronized (got) {
                            got.add(Integer.parseInt(new String(m.data(), UTF_8)));
                        }
                    }).build();
                    Producer source = Producer.builder().registry(registry.url()).domain("east")
                            .pcServlet(east.uplink()).label("source").build()) {
                AtomicReference<Exception> failed = new AtomicReference<>();
                Thread sender = new Thread(() -> {
                    try {
                        for (int i = 0; i < n; i++) {
                            source.send(sink.name(), Integer.toString(i).getBytes(UTF_8));
                            if (i % 100 == 0) {
                                // a deliberate pause, not a wait: a stream, not a burst, so that the restart
                                // falls in its middle
                                Thread.sleep(2);
                            }
                        }
                    } catch (Exception e) {
                        failed.set(e);
                    }
                });
                sender.start();
                waitFor(got, n / 4);
                assertEquals(0, west.stop(), "west drains what it accepted before it stops");
                int before = size(got);
                // west stays down for 5 s, on purpose: all that while, next to nothing arrives
                await().pollDelay(Duration.ZERO).during(Duration.ofSeconds(5)).atMost(Duration.ofSeconds(7))
                        .untilAsserted(() -> assertTrue(size(got) - before < 100,
                                "west is down, yet " + (size(got) - before) + " arrived"));
                west = PcServer.builder("west", registry.url()).httpPort(httpPort).uplinkPort(uplinkPort).start();
                waitFor(got, n);
                sender.join();
                assertEquals(null, failed.get());
                // a duplicate would come now
                await().pollDelay(Duration.ZERO).during(Duration.ofMillis(300)).atMost(Duration.ofSeconds(2))
                        .until(() -> size(got) == n);
                synchronized (got) {
                    assertEquals(n, got.size(), "delivered");
                    for (int i = 0; i < n; i++) {
                        assertEquals(i, got.get(i), "message at " + i);
                    }
                }
                assertTrue(before < n, "the restart fell after the stream ended");
            } finally {
                west.close();
            }
        }
    }

    private static int size(List<Integer> got) {
        synchronized (got) {
            return got.size();
        }
    }

    private static void waitFor(List<Integer> got, int count) {
        await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(10)).until(() -> size(got) >= count);
    }
}
