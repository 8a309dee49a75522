package io.gma.pcservlet;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
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
import java.util.List;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Head of line across domains (issue 22): one producer in east alternates 4 KiB messages between a slow and a
 * fast consumer, both in west. Every message to fast arrives, once and in order, while slow's queues are full;
 * each message to slow arrives or fails to its sender with QUEUE_FULL (at once, or as an ERROR back: its
 * receipt fails), and none is lost or comes twice.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class SlowDestinationTest {
    /** Messages to each consumer: many times what slow's queues hold (about 60 at east, 16 at west). */
    private static final int N = 1500;
    private static final int SIZE = 4096;

    @Test
    void aSlowDestinationDoesNotHoldUpAnotherAcrossDomains() throws Exception {
        List<Integer> slowGot = new ArrayList<>();
        List<Integer> fastGot = new ArrayList<>();
        try (Registry registry = Registry.builder().port(0).build().start();
                PcServer east = PcServer.builder("east", registry.url()).maxQueuedBytes(1 << 20)
                        .drainTimeout(Duration.ofMillis(500)).start();
                PcServer west = PcServer.builder("west", registry.url()).maxEndpointBytes(64 * 1024)
                        .drainTimeout(Duration.ofMillis(500)).start();
                Consumer slow = Consumer.builder().registry(registry.url()).domain("west").pcServlet(west.uplink())
                        .label("slow").onMessage(m -> {
                            Thread.sleep(10); // a slow handler: about 100 messages a second
                            add(slowGot, m.data());
                        }).build();
                Consumer fast = Consumer.builder().registry(registry.url()).domain("west").pcServlet(west.uplink())
                        .label("fast").onMessage(m -> add(fastGot, m.data())).build();
                Producer p = Producer.builder().registry(registry.url()).domain("east").pcServlet(east.uplink())
                        .label("p").fullQueuePolicy(FullQueuePolicy.FAIL).maxQueuedBytes(512 * 1024)
                        .receipts(Duration.ofSeconds(60)).build()) {
            List<Sent> toSlow = new ArrayList<>();
            List<Integer> slowSentAs = new ArrayList<>();
            List<Sent> toFast = new ArrayList<>();
            int slowRefusedAtOnce = 0;
            List<String> fastRefused = new ArrayList<>();
            String slowRefusal = null;
            for (int i = 0; i < N; i++) {
                try {
                    toSlow.add(p.send(slow.name(), payload(i)));
                    slowSentAs.add(i);
                } catch (EndpointException e) {
                    assertEquals(ErrorCode.QUEUE_FULL, e.code(), e.getMessage());
                    slowRefusedAtOnce++;
                    slowRefusal = e.getMessage();
                }
                try {
                    toFast.add(p.send(fast.name(), payload(i)));
                } catch (EndpointException e) {
                    fastRefused.add(i + ": " + e.getMessage());
                }
                Thread.sleep(1); // a deliberate pause, not a wait: about 1,000 messages a second to each
            }
            int fastAccepted = toFast.size();
            await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(20))
                    .until(() -> size(fastGot) >= fastAccepted);
            assertTrue(fastRefused.isEmpty(), () -> "fast received " + size(fastGot) + " of " + N + "; "
                    + fastRefused.size() + " sends to it failed, the first: " + fastRefused.get(0));

            // every message to fast: delivered, once, in order
            for (Sent s : toFast) {
                s.delivered().get(30, TimeUnit.SECONDS);
            }
            await().pollDelay(Duration.ZERO).during(Duration.ofMillis(200)).atMost(Duration.ofSeconds(2))
                    .until(() -> size(fastGot) == N);
            synchronized (fastGot) {
                for (int i = 0; i < N; i++) {
                    assertEquals(i, fastGot.get(i), "fast's message at " + i);
                }
            }

            // every message to slow: delivered, or refused with QUEUE_FULL; none lost, none twice
            List<Integer> delivered = new ArrayList<>();
            int refusedLater = 0;
            for (int k = 0; k < toSlow.size(); k++) {
                try {
                    toSlow.get(k).delivered().join();
                    delivered.add(slowSentAs.get(k));
                    toSlow.get(k).acknowledged().join();
                } catch (CompletionException e) {
                    EndpointException why = (EndpointException) e.getCause();
                    assertEquals(ErrorCode.QUEUE_FULL, why.code(), "message " + slowSentAs.get(k) + " to slow was"
                            + " lost: " + why.getMessage());
                    // refused by east's PC servlet: its ERROR came before the uplink's ACK, so the message was
                    // never acknowledged either (a sender without receipts learns it from acknowledged())
                    Sent refused = toSlow.get(k);
                    CompletionException ack = assertThrows(CompletionException.class,
                            () -> refused.acknowledged().join(), "message " + slowSentAs.get(k) + " to slow"
                            + " was refused (" + why.getMessage() + ") and yet acknowledged");
                    assertEquals(ErrorCode.QUEUE_FULL, ((EndpointException) ack.getCause()).code());
                    refusedLater++;
                }
            }
            await().pollDelay(Duration.ZERO).during(Duration.ofMillis(300)).atMost(Duration.ofSeconds(5))
                    .until(() -> size(slowGot) == delivered.size());
            synchronized (slowGot) {
                assertEquals(delivered, slowGot, "slow received what its receipts say, once each, in order");
            }
            int refused = slowRefusedAtOnce + refusedLater;
            assertEquals(N, delivered.size() + refused, "sent = delivered + refused");
            System.out.println("slow: " + delivered.size() + " delivered, " + slowRefusedAtOnce + " refused at once, "
                    + refusedLater + " refused by its PC servlet; fast: " + size(fastGot) + " of " + N);
            assertTrue(slowRefusedAtOnce > 0, "slow's queues never filled: the test proves nothing");
            assertTrue(slowRefusal.contains(slow.name()) && slowRefusal.contains("maxQueuedBytes"),
                    "the refusal names neither the destination nor the limit: " + slowRefusal);
        }
    }

    private static byte[] payload(int i) {
        byte[] b = new byte[SIZE];
        byte[] n = String.format("%-8d", i).getBytes(UTF_8);
        System.arraycopy(n, 0, b, 0, n.length);
        return b;
    }

    private static void add(List<Integer> got, byte[] data) {
        synchronized (got) {
            got.add(Integer.parseInt(new String(data, 0, 8, UTF_8).trim()));
        }
    }

    private static int size(List<Integer> got) {
        synchronized (got) {
            return got.size();
        }
    }
}
