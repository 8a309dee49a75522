package io.gma.pcservlet;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gma.client.Consumer;
import io.gma.client.Producer;
import io.gma.registry.Registry;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Stopping drains within its timeout and says how many messages it could not deliver. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class DrainTest {
    @Test
    void stopWaitsForTheDrainTimeoutThenCountsWhatIsLeft() throws Exception {
        CountDownLatch never = new CountDownLatch(1);
        CountDownLatch first = new CountDownLatch(1);
        try (Registry registry = Registry.builder().port(0).build().start();
                PcServer east = PcServer.builder("east", registry.url()).start()) {
            PcServer west = PcServer.builder("west", registry.url()).drainTimeout(Duration.ofMillis(700))
                    .start();
            try (Consumer stuck = Consumer.builder().registry(registry.url()).domain("west")
                    .pcServlet(west.uplink()).label("stuck").onMessage(m -> {
                        first.countDown();
                        never.await(); // reads nothing more: west's queue for it cannot drain
                    }).build();
                    Producer p = Producer.builder().registry(registry.url()).domain("east").pcServlet(east.uplink())
                            .label("p").build()) {
                for (int i = 0; i < 10; i++) {
                    p.send(stuck.name(), new byte[100]);
                }
                assertTrue(first.await(10, TimeUnit.SECONDS));
                await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(10))
                        .until(() -> queuedAtWest(west) >= 9);
                long start = System.nanoTime();
                int left = west.stop();
                long tookMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
                assertEquals(10, left, "the one being handled is unacknowledged too");
                assertTrue(tookMillis >= 650 && tookMillis < 5_000, "stop took " + tookMillis + " ms");
            } finally {
                never.countDown();
            }
        }
    }

    private static long queuedAtWest(PcServer west) throws Exception {
        String text = java.net.http.HttpClient.newHttpClient().send(java.net.http.HttpRequest.newBuilder(
                java.net.URI.create(west.url() + "/gma/v1/status")).build(),
                java.net.http.HttpResponse.BodyHandlers.ofString()).body();
        return new com.fasterxml.jackson.databind.ObjectMapper().readTree(text).path("clients").path(0)
                .path("queuedMessages").asLong();
    }
}
