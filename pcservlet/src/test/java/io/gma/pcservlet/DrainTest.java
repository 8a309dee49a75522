package io.gma.pcservlet;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gma.client.Consumer;
import io.gma.client.EndpointException;
import io.gma.client.Producer;
import io.gma.registry.Registry;
import io.gma.wire.ErrorCode;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Stopping drains within its timeout, says how many messages it could not deliver, and tells their senders; two
 * stops at once drain once.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class DrainTest {
    /**
     * Without a spool: stop() waits out the drain timeout, counts what is left, and sends each of its senders an
     * ERROR SHUTTING_DOWN with the reason (on east's side, by one last POST), long before their own timeouts. A
     * second stop at the same time (a signal's hook beside the end of --duration) waits for it and says the same.
     */
    @Test
    void stopWaitsForTheDrainTimeoutCountsWhatIsLeftAndTellsItsSenders() throws Exception {
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
                            .label("p").requestTimeout(Duration.ofSeconds(60)).build()) {
                List<CompletableFuture<byte[]>> asked = new ArrayList<>();
                for (int i = 0; i < 10; i++) {
                    asked.add(p.requestAsync(stuck.name(), new byte[100]));
                }
                assertTrue(first.await(10, TimeUnit.SECONDS));
                await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(10))
                        .until(() -> queuedAtWest(west) >= 9);
                long start = System.nanoTime();
                CompletableFuture<Integer> beside = CompletableFuture.supplyAsync(() -> stop(west));
                int left = west.stop();
                long tookMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
                assertEquals(10, left, "the one being handled is unacknowledged too");
                assertEquals(10, beside.get(10, TimeUnit.SECONDS), "a stop beside it waits for the same drain");
                assertTrue(tookMillis >= 650 && tookMillis < 5_000, "stop took " + tookMillis + " ms");
                for (CompletableFuture<byte[]> f : asked) {
                    ExecutionException e = assertThrows(ExecutionException.class, () -> f.get(10, TimeUnit.SECONDS));
                    EndpointException why = (EndpointException) e.getCause();
                    assertEquals(ErrorCode.SHUTTING_DOWN, why.code(), why.getMessage());
                    assertTrue(why.getMessage().contains("west's PC servlet stopped, without a spool, before it could"
                            + " deliver this within its drain time of 700 ms"), why.getMessage());
                }
            } finally {
                never.countDown();
            }
        }
    }

    private static int stop(PcServer server) {
        try {
            return server.stop();
        } catch (Exception e) {
            throw new IllegalStateException(e);
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
