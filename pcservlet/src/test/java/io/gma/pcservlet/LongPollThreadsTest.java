package io.gma.pcservlet;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gma.client.Producer;
import io.gma.registry.Registry;
import io.gma.registry.api.RegistryClient;
import io.gma.wire.Message;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import okhttp3.Call;
import okhttp3.Callback;
import okhttp3.Dispatcher;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.Response;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Long polls of the outbound-only domains a PC servlet relays for wait without a thread: many of them cannot take
 * the threads (64) that its POSTs and pages need, and each is still answered when its batch comes.
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class LongPollThreadsTest {
    private static final int DOMAINS = 10;

    @Test
    void eightyPollsWaitingLeaveTheHubServingAndEachIsAnsweredWhenItsBatchComes() throws Exception {
        Dispatcher dispatcher = new Dispatcher();
        dispatcher.setMaxRequests(200);
        dispatcher.setMaxRequestsPerHost(200);
        OkHttpClient http = new OkHttpClient.Builder().dispatcher(dispatcher).readTimeout(Duration.ofSeconds(60))
                .build();
        try (Registry registry = Registry.builder().port(0).build().start();
                PcServer hub = PcServer.builder("hub", registry.url()).drainTimeout(Duration.ofMillis(200)).start();
                Producer p = Producer.builder().registry(registry.url()).domain("hub").pcServlet(hub.uplink())
                        .label("p").build()) {
            RegistryClient client = RegistryClient.create(registry.url());
            for (int d = 0; d < DOMAINS; d++) {
                client.registerDomain("far" + d, null, "hub", Duration.ofMinutes(5));
            }
            // the most each domain may have waiting, 8 of 10 domains: 80 polls, more than the hub's 64 threads
            List<CompletableFuture<Polled>> polls = new ArrayList<>();
            for (int d = 0; d < DOMAINS; d++) {
                for (int i = 0; i < Relay.MAX_WAITING_POLLS; i++) {
                    polls.add(poll(http, hub, "far" + d, 50));
                }
            }
            // the hub still answers at once (before, each waiting poll held one of its threads for its wait)
            OkHttpClient quick = http.newBuilder().readTimeout(Duration.ofSeconds(10)).build();
            try (Response status = quick.newCall(new Request.Builder().url(hub.url() + "/gma/v1/status").build())
                    .execute()) {
                assertEquals(200, status.code());
            }
            // one poll more of a domain is refused at once, naming the limit
            try (Response ninth = quick.newCall(pollRequest(hub, "far0", 50)).execute()) {
                assertEquals(503, ninth.code());
                assertTrue(ninth.body().string().contains(Relay.MAX_WAITING_POLLS + " polls of domain far0 wait"
                        + " already"));
            }
            // a message for far3 is handed to far3's first poll; it had no thread waiting for it
            p.send("sink-aaaaaa@far3", "hello".getBytes(UTF_8)).acknowledged().get(10, TimeUnit.SECONDS);
            Polled first = polls.get(3 * Relay.MAX_WAITING_POLLS).get(10, TimeUnit.SECONDS);
            assertEquals(200, first.status);
            List<Message> batch = new ArrayList<>();
            assertTrue(new BatchCodec("test", 1 << 20).read(new ByteArrayInputStream(first.body), batch));
            assertEquals(1, batch.size());
            assertEquals("hello", batch.get(0).dataAsString());
            // the next poll of far3 is handed the same batch again (not acknowledged yet), under the same id
            Polled second = polls.get(3 * Relay.MAX_WAITING_POLLS + 1).get(10, TimeUnit.SECONDS);
            assertEquals(200, second.status);
            assertEquals(first.batchId, second.batchId);
            for (int i = 0; i < polls.size(); i++) {
                int d = i / Relay.MAX_WAITING_POLLS;
                if (d != 3) {
                    assertTrue(!polls.get(i).isDone(), "poll " + i + " of far" + d + " was answered with nothing to"
                            + " give: " + (polls.get(i).isDone() ? polls.get(i).get().status : 0));
                }
            }
            // a stop answers every waiting poll at once
            hub.stop();
            for (CompletableFuture<Polled> f : polls) {
                int status = f.get(20, TimeUnit.SECONDS).status;
                assertTrue(status == 200 || status == 204, "a poll answered " + status);
            }
        } finally {
            http.dispatcher().executorService().shutdown();
            http.connectionPool().evictAll();
        }
    }

    @Test
    void aPollThatWaitsForNothingTakesTheBatchThereAndOneBehindTheFirstGivesUpAtItsTime() throws Exception {
        OkHttpClient http = new OkHttpClient();
        try (Registry registry = Registry.builder().port(0).build().start();
                PcServer hub = PcServer.builder("hub", registry.url()).drainTimeout(Duration.ofMillis(200)).start();
                Producer p = Producer.builder().registry(registry.url()).domain("hub").pcServlet(hub.uplink())
                        .label("p").build()) {
            RegistryClient.create(registry.url()).registerDomain("far", null, "hub", Duration.ofMinutes(5));
            p.send("sink-aaaaaa@far", "x".getBytes(UTF_8)).acknowledged().get(10, TimeUnit.SECONDS);
            Polled batch = poll(http, hub, "far", 0).get(10, TimeUnit.SECONDS);
            assertEquals(200, batch.status, "wait=0 with a batch waiting");
            // acknowledged: the queue is empty now; the first poll waits 30 s, the one behind it 1 s
            CompletableFuture<Polled> first = poll(http, hub, "far&ack=" + batch.batchId, 30);
            Thread.sleep(200); // a window, on purpose: the first poll is in before the second
            CompletableFuture<Polled> second = poll(http, hub, "far", 1);
            assertEquals(204, second.get(10, TimeUnit.SECONDS).status);
            assertTrue(!first.isDone(), "the first poll had nothing to take");
            assertEquals(0, sample(hub, "gma_pc_relay_queue_messages{domain=\"far\"}"), "the ack dropped the batch");
            p.send("sink-aaaaaa@far", "y".getBytes(UTF_8)).acknowledged().get(10, TimeUnit.SECONDS);
            Polled next = first.get(10, TimeUnit.SECONDS);
            assertEquals(200, next.status);
            assertTrue(!next.batchId.equals(batch.batchId), "a new batch has a new id");
        } finally {
            http.dispatcher().executorService().shutdown();
            http.connectionPool().evictAll();
        }
    }

    private static double sample(PcServer pc, String series) throws IOException {
        try (Response r = new OkHttpClient().newCall(new Request.Builder().url(pc.url() + "/metrics").build())
                .execute()) {
            for (String line : r.body().string().split("\n")) {
                if (line.startsWith(series + " ")) {
                    return Double.parseDouble(line.substring(series.length() + 1));
                }
            }
        }
        throw new AssertionError(series + " is missing");
    }

    /** A poll's status, batch id and body. */
    private record Polled(int status, String batchId, byte[] body) {
    }

    private static Request pollRequest(PcServer hub, String domain, int waitSeconds) {
        return new Request.Builder().url(hub.url() + Tunnel.MESSAGES_PATH + "?domain=" + domain + "&wait="
                + waitSeconds).build();
    }

    private static CompletableFuture<Polled> poll(OkHttpClient http, PcServer hub, String domain, int waitSeconds) {
        CompletableFuture<Polled> f = new CompletableFuture<>();
        http.newCall(pollRequest(hub, domain, waitSeconds)).enqueue(new Callback() {
            @Override
            public void onFailure(Call call, IOException e) {
                f.completeExceptionally(e);
            }

            @Override
            public void onResponse(Call call, Response r) throws IOException {
                try (r) {
                    f.complete(new Polled(r.code(), r.header(Tunnel.BATCH_HEADER), r.body().bytes()));
                }
            }
        });
        return f;
    }
}
