package io.gma.pcservlet;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gma.client.Consumer;
import io.gma.client.Producer;
import io.gma.registry.Registry;
import io.gma.registry.api.RegistryClient;
import io.gma.wire.Command;
import io.gma.wire.Message;
import java.io.ByteArrayInputStream;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Cases a review of the PC servlet found failing, each kept as it was written then: threads per unknown
 * domain, the relay queue's bound, an uplink whose messages wait while its endpoint must still be served, a
 * POST that outlives the drain, and ERROR answers larger than a batch.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class HardCasesTest {

    /** Unknown domains named by an endpoint leave no forwarder threads behind. */
    @Test
    void unknownDomainsLeaveNoForwarderThreads() throws Exception {
        try (Registry registry = Registry.builder().port(0).build().start();
                PcServer east = PcServer.builder("east", registry.url()).registryGrace(Duration.ZERO).start();
                Producer p = Producer.builder().registry(registry.url()).domain("east").pcServlet(east.uplink())
                        .label("p").build()) {
            long before = p.stats().messagesIn();
            for (int i = 0; i < 300; i++) {
                p.send("x@nowhere" + i, new byte[1]);
            }
            // every message gets its NO_ROUTE, from the forwarder of its domain
            await().atMost(Duration.ofSeconds(10)).until(() -> p.stats().messagesIn() - before >= 300);
            // and then the forwarders go (one that found no domain waits for no more than a second)
            await().atMost(Duration.ofSeconds(3)).untilAsserted(() -> {
                long forwarders = Thread.getAllStackTraces().keySet().stream()
                        .filter(t -> t.getName().startsWith("gma-pc-east-to-nowhere")).count();
                assertEquals(0, forwarders, "forwarder threads still alive for domains that do not exist");
            });
        }
    }

    /** A relayed domain's queue keeps its bound when its messages come from local uplinks too. */
    @Test
    void relayQueueFilledFromUplinksKeepsItsBound() throws Exception {
        long bound = 64 * 1024;
        try (Registry registry = Registry.builder().port(0).build().start();
                PcServer hub = PcServer.builder("hub", registry.url()).maxQueuedBytes(bound)
                        .drainTimeout(Duration.ofMillis(200)).start();
                Producer p = Producer.builder().registry(registry.url()).domain("hub").pcServlet(hub.uplink())
                        .label("p").build()) {
            // an outbound-only domain relayed by hub whose PC servlet is not polling (down, say)
            RegistryClient.create(registry.url()).registerDomain("far", null, "hub", Duration.ofMinutes(5));
            for (int i = 0; i < 3000; i++) {
                p.send("x-aaaaaa@far", new byte[1024]);
            }
            // a window, on purpose: all the while its messages come, the relay queue keeps its bound
            await().pollDelay(Duration.ZERO).during(Duration.ofSeconds(2)).atMost(Duration.ofSeconds(4))
                    .untilAsserted(() -> {
                        long queued = (long) sample(hub, "gma_pc_relay_queue_bytes{domain=\"far\"}");
                        assertTrue(queued <= 2 * bound, "relay queue for far holds " + queued + " bytes, bound "
                                + bound);
                    });
        }
    }

    /**
     * An endpoint whose messages wait (it sent into a full queue for a domain that is down) still has its ACKs
     * read: deliveries to it from other domains go on, and so does everything else west sends to east.
     */
    @Test
    void anEndpointWhoseMessagesWaitIsStillServed() throws Exception {
        AtomicInteger toA = new AtomicInteger();
        AtomicInteger toB = new AtomicInteger();
        try (Registry registry = Registry.builder().port(0).build().start();
                PcServer east = PcServer.builder("east", registry.url()).maxQueuedBytes(16 * 1024)
                        .maxEndpointBytes(16 * 1024).drainTimeout(Duration.ofMillis(200)).start();
                PcServer west = PcServer.builder("west", registry.url()).start();
                Consumer a = Consumer.builder().registry(registry.url()).domain("east").pcServlet(east.uplink())
                        .label("a").onMessage(m -> toA.incrementAndGet()).build();
                Consumer b = Consumer.builder().registry(registry.url()).domain("east").pcServlet(east.uplink())
                        .label("b").onMessage(m -> toB.incrementAndGet()).build();
                Producer w = Producer.builder().registry(registry.url()).domain("west").pcServlet(west.uplink())
                        .label("w").build()) {
            // domain north is registered at a URL where nobody answers
            RegistryClient.create(registry.url()).registerDomain("north", "http://127.0.0.1:9", null,
                    Duration.ofMinutes(5));
            for (int i = 0; i < 400; i++) { // 400 KiB into a 16 KiB queue: a's messages wait
                try {
                    a.send("x-aaaaaa@north", new byte[1024]);
                } catch (Exception full) {
                    break;
                }
            }
            // a's messages wait once east's queue for north has no room for another of them
            await().atMost(Duration.ofSeconds(10))
                    .until(() -> sample(east, "gma_pc_outbound_queue_bytes{domain=\"north\"}") > 15 * 1024);
            for (int i = 0; i < 100; i++) {
                w.send(a.name(), new byte[1024]);
            }
            w.send(b.name(), new byte[10]);
            await().atMost(Duration.ofSeconds(15)).pollInterval(Duration.ofMillis(50)).untilAsserted(() -> {
                assertEquals(100, toA.get(), "a got only " + toA.get() + ", b got " + toB.get());
                assertEquals(1, toB.get(), "b got nothing");
            });
        }
    }

    /** A POST whose body was still being read when stop() drained is refused, not answered 200 and lost. */
    @Test
    void aPostThatOutlivesTheDrainIsRefused() throws Exception {
        try (Registry registry = Registry.builder().port(0).build().start()) {
            RegistryClient.create(registry.url()).registerDomain("far", null, "hub", Duration.ofMinutes(5));
            PcNode node = new PcNode(PcServer.builder("hub", registry.url()).drainTimeout(Duration.ZERO)
                    .settings());
            node.start("http://127.0.0.1:1");
            Message m = Message.of(Command.DATA, "x-aaaaaa@east", "y-aaaaaa@far", 1, new byte[10]);
            ByteBuffer buf = ByteBuffer.allocate(m.encodedLength());
            BatchCodec.CODEC.encode(m, buf);
            CountDownLatch reading = new CountDownLatch(1);
            CountDownLatch stopped = new CountDownLatch(1);
            InputStream slowBody = new InputStream() {
                final InputStream rest = new ByteArrayInputStream(buf.array());
                boolean waited;

                @Override
                public int read() throws java.io.IOException {
                    return rest.read();
                }

                @Override
                public int read(byte[] b, int off, int len) throws java.io.IOException {
                    if (!waited) {
                        waited = true;
                        reading.countDown();
                        try {
                            stopped.await(); // the network is slow: the body arrives after stop() returned
                        } catch (InterruptedException e) {
                            throw new java.io.InterruptedIOException();
                        }
                    }
                    return rest.read(b, off, len);
                }
            };
            Answer[] answer = new Answer[1];
            Thread post = new Thread(() -> {
                try {
                    answer[0] = node.inbound().accept("east", "", Tunnel.MEDIA_TYPE, null, -1, slowBody, null);
                } catch (Exception e) {
                    throw new RuntimeException(e);
                }
            });
            post.start();
            assertTrue(reading.await(10, TimeUnit.SECONDS), "the POST did not begin to read its body");
            int left = node.shutdown();
            stopped.countDown();
            post.join();
            assertTrue(answer[0].status() != 200, "answered " + answer[0].status() + " after the drain (left="
                    + left + ", now in the closed relay queue: " + node.relay().queue("far").messages() + ")");
        }
    }

    /** A sample of a PC servlet's /metrics, 0 while it has none. */
    private static double sample(PcServer pc, String name) throws Exception {
        String text = java.net.http.HttpClient.newHttpClient().send(java.net.http.HttpRequest.newBuilder(
                java.net.URI.create(pc.url() + "/metrics")).build(),
                java.net.http.HttpResponse.BodyHandlers.ofString()).body();
        double value = 0;
        for (String line : text.split("\n")) {
            if (line.startsWith(name + " ")) {
                value = Double.parseDouble(line.substring(name.length() + 1));
            }
        }
        return value;
    }

    /** ERRORs that answer a batch are longer than its messages: they all arrive, past maxBatchBytes too. */
    @Test
    void errorsLargerThanTheBatchAllReachTheirSenders() throws Exception {
        try (Registry registry = Registry.builder().port(0).build().start();
                PcServer east = PcServer.builder("east", registry.url()).registryGrace(Duration.ZERO)
                        .maxBatchBytes(1024).linger(Duration.ofMillis(300)).start();
                PcServer west = PcServer.builder("west", registry.url()).registryGrace(Duration.ZERO).start();
                Producer p = Producer.builder().registry(registry.url()).domain("east").pcServlet(east.uplink())
                        .label("p").requestTimeout(Duration.ofSeconds(4)).build()) {
            java.util.List<java.util.concurrent.CompletableFuture<byte[]>> replies = new java.util.ArrayList<>();
            int n = 15;
            for (int i = 0; i < n; i++) {
                replies.add(p.requestAsync("nobody-aaaaaa@west", new byte[10]));
            }
            int noRoute = 0;
            StringBuilder how = new StringBuilder();
            for (java.util.concurrent.CompletableFuture<byte[]> r : replies) {
                try {
                    r.get(10, TimeUnit.SECONDS);
                } catch (java.util.concurrent.ExecutionException e) {
                    io.gma.client.EndpointException ee = (io.gma.client.EndpointException) e.getCause();
                    how.append(ee.code()).append(' ');
                    noRoute += ee.code() == io.gma.wire.ErrorCode.NO_ROUTE ? 1 : 0;
                }
            }
            assertEquals(n, noRoute, "codes: " + how);
        }
    }
}
