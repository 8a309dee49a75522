package io.gma.pcservlet;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gma.client.Consumer;
import io.gma.client.FullQueuePolicy;
import io.gma.client.Producer;
import io.gma.registry.Registry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Several batches in flight (StreamOrder, Forwarder's go back N): a stream through a consumer whose queue at
 * west fills again and again, so that west refuses batches for now (429) while the batches after them are in
 * flight. Every message arrives once and in order, and the counters show that batches went back.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class PipelineOrderTest {
    private static final int N = 4000;

    @Test
    void batchesInFlightAreTakenInOrderThroughRefusals() throws Exception {
        List<Integer> got = new ArrayList<>();
        try (Registry registry = Registry.builder().port(0).build().start();
                PcServer east = PcServer.builder("east", registry.url()).maxBatchesInFlight(4).maxBatchBytes(8 * 1024)
                        .drainTimeout(Duration.ofMillis(500)).start();
                PcServer west = PcServer.builder("west", registry.url()).maxEndpointBytes(16 * 1024)
                        .drainTimeout(Duration.ofMillis(500)).start();
                Consumer sink = Consumer.builder().registry(registry.url()).domain("west").pcServlet(west.uplink())
                        .label("sink").onMessage(m -> {
                            if (ThreadLocalRandom.current().nextInt(500) == 0) {
                                Thread.sleep(250); // now and then a slow spell: its queue at west fills
                            }
                            synchronized (got) {
                                got.add(Integer.parseInt(new String(m.data(), 0, 8, UTF_8).trim()));
                            }
                        }).build();
                Producer p = Producer.builder().registry(registry.url()).domain("east").pcServlet(east.uplink())
                        .label("p").fullQueuePolicy(FullQueuePolicy.BLOCK).build()) {
            for (int i = 0; i < N; i++) {
                byte[] b = new byte[512];
                byte[] n = String.format("%-8d", i).getBytes(UTF_8);
                System.arraycopy(n, 0, b, 0, n.length);
                p.send(sink.name(), b);
            }
            await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(20)).until(() -> size(got) >= N);
            Thread.sleep(200); // a duplicate would come right behind
            synchronized (got) {
                assertEquals(N, got.size(), "lost or duplicated");
                for (int i = 0; i < N; i++) {
                    assertEquals(i, got.get(i), "out of order at " + i);
                }
            }
            String eastMetrics = TestPages.metrics(east);
            String westMetrics = TestPages.metrics(west);
            System.out.println("PIPELINE east went back " + TestPages.sample(eastMetrics, "gma_pc_went_back_total")
                    + ", batches " + TestPages.sample(eastMetrics, "gma_pc_batches_sent_total") + "; west 429 "
                    + TestPages.sample(westMetrics, "gma_pc_throttled_sent_total") + ", out of turn "
                    + TestPages.sample(westMetrics, "gma_pc_out_of_turn_total"));
            assertTrue(TestPages.sample(westMetrics, "gma_pc_throttled_sent_total") > 0,
                    "west never refused a batch: the test did not go back");
        }
    }

    private static int size(List<Integer> got) {
        synchronized (got) {
            return got.size();
        }
    }
}
