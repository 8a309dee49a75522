package io.gma.pcservlet;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gma.client.Consumer;
import io.gma.client.Producer;
import io.gma.client.Sent;
import io.gma.internal.spool.SpoolHooks;
import io.gma.registry.Registry;
import io.gma.registry.api.Kind;
import io.gma.registry.api.Registration;
import io.gma.registry.api.RegistryClient;
import io.gma.wire.Command;
import io.gma.wire.Packed;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * An acknowledgement is a promise that the message survives a crash, so it follows the fsync that covers the
 * message, or the acknowledgement of the hop ahead, whichever comes first: the spool's committer is held after a
 * force and before it says the records are durable, and while it is held, neither an uplink's ACK nor a POST's
 * 200 goes out for messages that nobody ahead took; once it goes on, both do. A POST whose endpoint took its
 * batch is answered meanwhile.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class DurableAcknowledgementTest {
    @TempDir
    Path dir;

    private final AtomicBoolean armed = new AtomicBoolean();
    private final CountDownLatch holding = new CountDownLatch(1);
    private final CountDownLatch release = new CountDownLatch(1);

    @BeforeEach
    void holdTheCommitterOnceArmed() {
        SpoolHooks.onPoint(point -> {
            if (point.equals("forced") && armed.compareAndSet(true, false)) {
                holding.countDown();
                try {
                    release.await(30, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        });
    }

    @AfterEach
    void letGo() {
        release.countDown();
        SpoolHooks.clear();
    }

    @Test
    void anUplinksAckWaitsForTheForceThatCoversItsMessage() throws Exception {
        try (Registry registry = Registry.builder().port(0).build().start();
                PcServer east = PcServer.builder("east", registry.url()).spool(SpoolOptions.in(dir.resolve("east")))
                        .start();
                Producer p = Producer.builder().registry(registry.url()).domain("east").pcServlet(east.uplink())
                        .label("p").build()) {
            p.send("x-aaaaaa@west", new byte[10]).acknowledged().get(10, TimeUnit.SECONDS); // the uplink is up
            armed.set(true);
            Sent s = p.send("x-aaaaaa@west", new byte[10]);
            assertTrue(holding.await(10, TimeUnit.SECONDS), "the committer forced the message's record");
            await().during(Duration.ofMillis(500)).atMost(Duration.ofSeconds(2))
                    .until(() -> !s.acknowledged().isDone());
            release.countDown();
            s.acknowledged().get(10, TimeUnit.SECONDS);
        }
    }

    @Test
    void aPostForAnEndpointNotConnectedIsAnswered200OnlyOnceItsBatchIsOnDisk() throws Exception {
        try (Registry registry = Registry.builder().port(0).build().start();
                PcServer west = PcServer.builder("west", registry.url()).spool(SpoolOptions.in(dir.resolve("west")))
                        .start()) {
            // registered, its uplink not open: nobody ahead can take the batch, only the disk
            String sink = RegistryClient.create(registry.url()).register(Registration.builder(Kind.CONSUMER, "sink",
                    "west").port(1).build()).name();
            armed.set(true);
            CompletableFuture<HttpResponse<String>> answer = post(west, sink);
            assertTrue(holding.await(10, TimeUnit.SECONDS), "the committer forced the batch's record");
            await().during(Duration.ofMillis(500)).atMost(Duration.ofSeconds(2)).until(() -> !answer.isDone());
            assertFalse(answer.isDone());
            release.countDown();
            assertEquals(200, answer.get(10, TimeUnit.SECONDS).statusCode());
        }
    }

    @Test
    void aPostIsAnswered200AsSoonAsItsEndpointHasTheBatchWithoutWaitingForTheDisk() throws Exception {
        try (Registry registry = Registry.builder().port(0).build().start();
                PcServer west = PcServer.builder("west", registry.url()).spool(SpoolOptions.in(dir.resolve("west")))
                        .start();
                Consumer sink = Consumer.builder().registry(registry.url()).domain("west").pcServlet(west.uplink())
                        .label("sink").onMessage(m -> { }).build()) {
            armed.set(true);
            CompletableFuture<HttpResponse<String>> answer = post(west, sink.name());
            assertTrue(holding.await(10, TimeUnit.SECONDS), "the committer forced the batch's record");
            // held there, it has not said the record is durable: the endpoint's ACK is what the answer waited for
            assertEquals(200, answer.get(10, TimeUnit.SECONDS).statusCode());
            release.countDown(); // before the PC servlet closes: it waits for its committer, which writes on
        }
    }

    /**
     * A message that fails at the PC servlet (its endpoint is gone) goes from the spool only once the ERROR that
     * tells its sender is safe: until then a crash brings the message back, rather than losing both.
     */
    @Test
    void aFailedMessageStaysInTheSpoolUntilTheErrorThatTellsItsSenderIsSafe() throws Exception {
        try (Registry registry = Registry.builder().port(0).build().start();
                PcServer west = PcServer.builder("west", registry.url()).spool(SpoolOptions.in(dir.resolve("west")))
                        .registryGrace(Duration.ZERO).start()) {
            RegistryClient client = RegistryClient.create(registry.url());
            String sink = client.register(Registration.builder(Kind.CONSUMER, "sink", "west").port(1).build())
                    .name();
            // the sender's domain, whose PC servlet does not answer: the ERROR waits in west's queue for it
            client.registerDomain("east", "http://127.0.0.1:1/gma", null, Duration.ofMinutes(5));
            assertEquals(200, post(west, sink).get(10, TimeUnit.SECONDS).statusCode()); // on disk, not taken
            armed.set(true);
            client.unregister(sink); // within 10 s, west fails the message: an ERROR for its sender in east
            await().atMost(Duration.ofSeconds(20)).until(() -> metric(west, "gma_pc_spool_appended_total") == 2);
            assertTrue(holding.await(10, TimeUnit.SECONDS), "the committer forced a record");
            // held: the ERROR is not safe, so the message's record stays with it
            await().during(Duration.ofMillis(500)).atMost(Duration.ofSeconds(2))
                    .until(() -> metric(west, "gma_pc_spool_records") == 2);
            release.countDown();
            // the ERROR safe, the message's record goes; the ERROR's waits for domain east
            await().atMost(Duration.ofSeconds(10)).until(() -> metric(west, "gma_pc_spool_records") == 1);
        }
    }

    private static long metric(PcServer pc, String name) throws Exception {
        String text = HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create(pc.url() + "/metrics"))
                .build(), HttpResponse.BodyHandlers.ofString()).body();
        for (String line : text.split("\n")) {
            if (line.startsWith(name + " ")) {
                return (long) Double.parseDouble(line.substring(name.length() + 1).trim());
            }
        }
        throw new AssertionError(name + " is not among the metrics:\n" + text);
    }

    private static CompletableFuture<HttpResponse<String>> post(PcServer west, String to) {
        byte[] batch = Packed.make(1, Command.DATA, "p-aaaaaa@east", to, new byte[10]);
        return HttpClient.newHttpClient().sendAsync(HttpRequest.newBuilder(URI.create(west.url()
                + Tunnel.MESSAGES_PATH)).header("Content-Type", Tunnel.MEDIA_TYPE).header(Tunnel.DOMAIN_HEADER, "east")
                .POST(HttpRequest.BodyPublishers.ofByteArray(batch)).build(), HttpResponse.BodyHandlers.ofString());
    }
}
