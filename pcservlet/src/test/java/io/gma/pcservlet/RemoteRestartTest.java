package io.gma.pcservlet;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gma.client.Consumer;
import io.gma.client.Producer;
import io.gma.registry.Registry;
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
                                Thread.sleep(2); // a stream, not a burst: the restart falls in its middle
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
                Thread.sleep(5_000);
                assertTrue(size(got) - before < 100, "west is down, yet " + (size(got) - before) + " arrived");
                west = PcServer.builder("west", registry.url()).httpPort(httpPort).uplinkPort(uplinkPort).start();
                waitFor(got, n);
                sender.join();
                assertEquals(null, failed.get());
                Thread.sleep(300); // a duplicate would come now
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

    private static void waitFor(List<Integer> got, int count) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (size(got) < count && System.nanoTime() < deadline) {
            Thread.sleep(10);
        }
    }
}
