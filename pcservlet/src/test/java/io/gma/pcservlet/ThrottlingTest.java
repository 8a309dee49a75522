package io.gma.pcservlet;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gma.client.Consumer;
import io.gma.client.EndpointException;
import io.gma.client.FullQueuePolicy;
import io.gma.client.Producer;
import io.gma.client.Sent;
import io.gma.registry.Registry;
import io.gma.wire.ErrorCode;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Throttling end to end (protocol.md section 6): a consumer in west that stops reading fills its queue at
 * west's PC servlet, west answers 429, east's queue for west fills, east stops reading its uplinks, and the
 * producers' own queues fill: FAIL fails at once, BLOCK waits and then fails, both with QUEUE_FULL. Every hop
 * stays within its bound; once the consumer reads again, everything accepted arrives, once, in order, but what
 * east refused past the consumer's share of its queue for west (ERROR QUEUE_FULL, which the receipts report).
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class ThrottlingTest {
    private static final long EAST_QUEUE = 64 * 1024;
    private static final long WEST_ENDPOINT_QUEUE = 16 * 1024;
    private static final int BATCH = 32 * 1024;
    /** Past its bound, a queue refuses: what it may hold beyond is the odd ERROR a PC servlet makes. */
    private static final long SLACK = 2 * 1024;

    @Test
    void aSlowConsumerThrottlesProducersInAnotherDomain() throws Exception {
        CountDownLatch reading = new CountDownLatch(1);
        Map<String, List<Integer>> got = new HashMap<>();
        try (Registry registry = Registry.builder().port(0).build().start();
                PcServer east = PcServer.builder("east", registry.url()).maxQueuedBytes(EAST_QUEUE)
                        .maxBatchBytes(BATCH).start();
                PcServer west = PcServer.builder("west", registry.url()).maxEndpointBytes(WEST_ENDPOINT_QUEUE)
                        .maxBatchBytes(BATCH).start();
                Consumer slow = Consumer.builder().registry(registry.url()).domain("west").pcServlet(west.uplink())
                        .label("slow").onMessage(m -> {
                            reading.await(); // stops reading: its link's thread waits here
                            synchronized (got) {
                                got.computeIfAbsent(m.from(), k -> new ArrayList<>())
                                        .add(Integer.parseInt(new String(m.data(), 0, 8, UTF_8).trim()));
                            }
                        }).build();
                Producer failing = producer(registry, east, "failing", FullQueuePolicy.FAIL);
                Producer blocking = producer(registry, east, "blocking", FullQueuePolicy.BLOCK)) {
            List<Sent> failingSent = sendUntilFull(failing, slow.name());
            EndpointException full = fullAfter(failing, slow.name(), failingSent);
            assertEquals(ErrorCode.QUEUE_FULL, full.code(), full.getMessage());

            List<Sent> blockingSent = sendUntilFull(blocking, slow.name());
            long start = System.nanoTime();
            EndpointException waited = fullAfter(blocking, slow.name(), blockingSent);
            assertEquals(ErrorCode.QUEUE_FULL, waited.code(), waited.getMessage());
            assertTrue(System.nanoTime() - start >= TimeUnit.MILLISECONDS.toNanos(400), "BLOCK did not wait");
            assertTrue(blocking.stats().waits() > 0);

            MetricsPage eastView = new MetricsPage(east);
            MetricsPage westView = new MetricsPage(west);
            assertTrue(westView.counter("gma_pc_throttled_sent_total") > 0, "west never answered 429");
            assertTrue(eastView.counter("gma_pc_throttled_received_total") > 0, "east never got 429");
            double eastQueued = eastView.gauge("gma_pc_outbound_queue_bytes{domain=\"west\"}");
            assertTrue(eastQueued <= EAST_QUEUE + SLACK, "east's queue for west holds " + eastQueued);
            double westQueued = westView.gauge("gma_pc_endpoint_queue_bytes{endpoint=\"" + slow.name() + "\"}");
            assertTrue(westQueued <= WEST_ENDPOINT_QUEUE + BATCH, "west's queue for the consumer holds " + westQueued);

            reading.countDown();
            // each message taken is delivered, or refused by east past the consumer's share of the queue for west
            // (ERROR QUEUE_FULL after send returned: its receipt fails), and nothing else
            List<Integer> failingDelivered = delivered(failingSent);
            List<Integer> blockingDelivered = delivered(blockingSent);
            int accepted = failingDelivered.size() + blockingDelivered.size();
            await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(20))
                    .until(() -> count(got) >= accepted);
            // a duplicate would come now
            await().pollDelay(Duration.ZERO).during(Duration.ofMillis(300)).atMost(Duration.ofSeconds(2))
                    .until(() -> count(got) == accepted);
            synchronized (got) {
                assertEquals(failingDelivered, got.getOrDefault(failing.name(), List.of()));
                assertEquals(blockingDelivered, got.getOrDefault(blocking.name(), List.of()));
            }
        }
    }

    /**
     * The numbers of the messages whose receipts say they were delivered, in order; every other one must have
     * been refused with QUEUE_FULL.
     */
    private static List<Integer> delivered(List<Sent> sent) throws InterruptedException {
        List<Integer> delivered = new ArrayList<>();
        for (int i = 0; i < sent.size(); i++) {
            try {
                sent.get(i).delivered().get(60, TimeUnit.SECONDS);
                delivered.add(i);
            } catch (ExecutionException e) {
                EndpointException why = (EndpointException) e.getCause();
                assertEquals(ErrorCode.QUEUE_FULL, why.code(), "message " + i + ": " + why.getMessage());
            } catch (java.util.concurrent.TimeoutException e) {
                throw new AssertionError("message " + i + " was neither delivered nor refused within 60 s", e);
            }
        }
        return delivered;
    }

    private static Producer producer(Registry registry, PcServer pc, String label, FullQueuePolicy policy)
            throws EndpointException {
        return Producer.builder().registry(registry.url()).domain("east").pcServlet(pc.uplink()).label(label)
                .maxQueuedBytes(EAST_QUEUE).fullQueuePolicy(policy).blockTimeout(Duration.ofMillis(500))
                .receipts(Duration.ofSeconds(120)).build();
    }

    /**
     * Sends 1 KB messages numbered from 0 until the queue stays full: three refusals in a row, 100 ms apart (a
     * fast producer fills its queue before the PC servlets and the sockets downstream are full, and their
     * ACKs then make room for a while), or ten in all (once east refuses the consumer's messages past its share,
     * the producer lets one through now and then, to see whether there is room again). Returns what was taken.
     */
    private static List<Sent> sendUntilFull(Producer p, String to) throws InterruptedException {
        List<Sent> sent = new ArrayList<>();
        for (int refusedInARow = 0, refused = 0; refusedInARow < 3 && refused < 10;) {
            try {
                sent.add(p.send(to, payload(sent.size())));
                refusedInARow = 0;
            } catch (EndpointException e) {
                assertEquals(ErrorCode.QUEUE_FULL, e.code(), e.getMessage());
                refusedInARow++;
                refused++;
                Thread.sleep(100); // a deliberate pause, not a wait: the queue must stay full for a while
            }
            if (sent.size() == 100_000) {
                throw new AssertionError("100,000 messages and no QUEUE_FULL: nothing throttled " + p.name());
            }
        }
        return sent;
    }

    /** The refusal of a send while the consumer waits; what a probe let through meanwhile joins {@code sent}. */
    private static EndpointException fullAfter(Producer p, String to, List<Sent> sent) {
        for (int tries = 0; tries < 3; tries++) {
            try {
                sent.add(p.send(to, payload(sent.size())));
            } catch (EndpointException e) {
                return e;
            }
        }
        throw new AssertionError("the queue of " + p.name() + " had room again while the consumer still waited");
    }

    private static byte[] payload(int i) {
        byte[] b = new byte[1024];
        byte[] n = String.format("%-8d", i).getBytes(UTF_8);
        System.arraycopy(n, 0, b, 0, n.length);
        return b;
    }

    private static int count(Map<String, List<Integer>> got) {
        synchronized (got) {
            return got.values().stream().mapToInt(List::size).sum();
        }
    }

    /** Reads a PC servlet's /metrics page. */
    private static final class MetricsPage {
        private final String text;

        MetricsPage(PcServer pc) throws Exception {
            java.net.http.HttpResponse<String> r = java.net.http.HttpClient.newHttpClient().send(
                    java.net.http.HttpRequest.newBuilder(java.net.URI.create(pc.url() + "/metrics")).build(),
                    java.net.http.HttpResponse.BodyHandlers.ofString());
            assertEquals(200, r.statusCode());
            text = r.body();
        }

        double counter(String name) {
            return gauge(name);
        }

        double gauge(String sample) {
            for (String line : text.split("\n")) {
                if (line.startsWith(sample + " ")) {
                    return Double.parseDouble(line.substring(sample.length() + 1));
                }
            }
            assertNotNull(null, sample + " not in /metrics:\n" + text);
            return 0;
        }
    }
}
