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
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A consumer that stops reading does not hold up its neighbours: west's 429 names it (X-Gma-Full), east holds
 * its messages back and posts the others; when it reads again, all of its messages arrive, in order.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class NeighboursTest {
    @Test
    void aStuckConsumerDoesNotHoldUpTheOthersOfItsDomain() throws Exception {
        CountDownLatch reading = new CountDownLatch(1);
        List<Integer> slowGot = new ArrayList<>();
        LinkedBlockingQueue<String> fastGot = new LinkedBlockingQueue<>();
        int n = 150;
        try (Registry registry = Registry.builder().port(0).build().start();
                PcServer east = PcServer.builder("east", registry.url()).drainTimeout(Duration.ofMillis(500))
                        .start();
                PcServer west = PcServer.builder("west", registry.url()).maxEndpointBytes(16 * 1024)
                        .drainTimeout(Duration.ofMillis(500)).start();
                Consumer slow = Consumer.builder().registry(registry.url()).domain("west").pcServlet(west.uplink())
                        .label("slow").onMessage(m -> {
                            reading.await();
                            synchronized (slowGot) {
                                slowGot.add(Integer.parseInt(new String(m.data(), 0, 8, UTF_8).trim()));
                            }
                        }).build();
                Consumer fast = Consumer.builder().registry(registry.url()).domain("west").pcServlet(west.uplink())
                        .label("fast").onMessage(m -> fastGot.add(new String(m.data(), UTF_8))).build();
                Producer p = Producer.builder().registry(registry.url()).domain("east").pcServlet(east.uplink())
                        .label("p").build()) {
            for (int i = 0; i < n; i++) { // a steady stream, batch after batch, into a 16 KiB queue
                byte[] b = new byte[1024];
                byte[] number = String.format("%-8d", i).getBytes(UTF_8);
                System.arraycopy(number, 0, b, 0, number.length);
                p.send(slow.name(), b);
                Thread.sleep(2); // a deliberate pause, not a wait: a stream, not one burst
            }
            p.send(fast.name(), "hello".getBytes(UTF_8));
            long start = System.nanoTime();
            assertEquals("hello", fastGot.poll(20, TimeUnit.SECONDS), "fast got nothing while slow was stuck");
            long waited = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            assertTrue(waited < 5_000, "fast waited " + waited + " ms behind slow");
            String status = java.net.http.HttpClient.newHttpClient().send(java.net.http.HttpRequest.newBuilder(
                    java.net.URI.create(west.url() + "/metrics")).build(),
                    java.net.http.HttpResponse.BodyHandlers.ofString()).body();
            assertTrue(status.lines().anyMatch(l -> l.matches("gma_pc_throttled_sent_total [1-9][0-9]*")),
                    "west never answered 429: the test did not fill slow's queue");
            reading.countDown();
            await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(20)).until(() -> size(slowGot) >= n);
            synchronized (slowGot) {
                assertEquals(n, slowGot.size());
                for (int i = 0; i < n; i++) {
                    assertEquals(i, slowGot.get(i));
                }
            }
        }
    }

    private static int size(List<Integer> got) {
        synchronized (got) {
            return got.size();
        }
    }
}
