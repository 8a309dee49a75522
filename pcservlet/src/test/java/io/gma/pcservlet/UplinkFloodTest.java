package io.gma.pcservlet;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gma.client.ChildJvm;
import io.gma.client.Consumer;
import io.gma.client.PreAuthFlood;
import io.gma.client.Producer;
import io.gma.registry.Registry;
import io.gma.security.HttpClients;
import io.gma.security.Keys;
import io.gma.security.Security;
import io.gma.security.Tls;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.BitSet;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.Response;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * 200 peers that do the TLS handshake and then announce 16 MiB in HELLO, against the uplinks of a secured PC
 * servlet (west) in a JVM of its own with a 64 MiB heap, while a producer of domain east streams numbered
 * messages through east's PC servlet (in this JVM), the HTTP tunnel and west to a consumer of west: west does
 * not run out of memory, refuses each of them TOO_LARGE and counts them in /metrics, and the stream loses
 * nothing and delivers nothing twice.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class UplinkFloodTest {
    static final int FLOOD = 200;
    static final int STREAM = 3000;
    private static final Pattern READY = Pattern.compile(".*GMA PC servlet of west at (\\S+), uplinks at (\\S+)");
    @TempDir
    Path keys;
    private final BitSet received = new BitSet();
    private int duplicates;

    private synchronized void record(long n) {
        if (received.get((int) n)) {
            duplicates++;
        }
        received.set((int) n);
    }

    private synchronized int distinct() {
        return received.cardinality();
    }

    private static String get(OkHttpClient http, String url) throws Exception {
        try (Response r = http.newCall(new Request.Builder().url(url).build()).execute()) {
            assertEquals(200, r.code(), url);
            return r.body().string();
        }
    }

    private static long sample(String metrics, String line) {
        Matcher m = Pattern.compile("(?m)^" + Pattern.quote(line) + " (\\d+)$").matcher(metrics);
        assertTrue(m.find(), "no " + line + " in\n" + metrics);
        return Long.parseLong(m.group(1));
    }

    @Test
    void aSecuredPcServletIn64MiBSurvives200UplinksAnnouncing16MiBAndLosesNothing() throws Exception {
        Keys.make(keys, List.of("localhost", "127.0.0.1"), List.of("alice", "bob", "east", "west"));
        Files.writeString(keys.resolve("rules"), """
                register alice,bob      *
                domain   east,west      east,west
                send     alice,bob,east,west *
                post     east,west      east,west
                query    *              endpoints,domains,attributes
                """);
        Security bob = Security.fromDirectory(keys, "bob", Tls.ClientAuth.WANT).build();
        Security alice = Security.fromDirectory(keys, "alice", Tls.ClientAuth.WANT).build();
        try (Registry registry = Registry.builder().port(0).security(Security.fromDirectory(keys, "registry",
                Tls.ClientAuth.NONE).build()).build().start();
                ChildJvm west = ChildJvm.start(List.of("-Xmx64m"), PcServer.class.getName(), List.of("--domain",
                        "west", "--registry", registry.url(), "--host", "127.0.0.1", "--http-port", "0",
                        "--uplink-port", "0", "--security", keys.toString(), "--identity", "west", "--data-dir",
                        keys.resolve("west-spool").toString()));
                PcServer east = PcServer.builder("east", registry.url())
                        .security(Security.fromDirectory(keys, "east", Tls.ClientAuth.WANT).build()).start();
                PreAuthFlood flood = new PreAuthFlood()) {
            try {
                Matcher ready = west.await(READY, 60_000);
                String westUrl = ready.group(1);
                String westUplink = ready.group(2);
                try (Consumer consumer = Consumer.builder().registry(registry.url()).domain("west").label("collector")
                        .pcServlet(westUplink).security(bob).onMessage(m -> record(ByteBuffer.wrap(m.data())
                                .getLong())).build();
                        Producer producer = Producer.builder().registry(registry.url()).domain("east")
                                .label("sensor").pcServlet(east.uplink()).security(alice).build()) {
                    String to = consumer.name();
                    producer.send(to, ByteBuffer.allocate(8).putLong(0).array());
                    awaitDelivered(() -> distinct() == 1, "the first message", west);

                    Thread stream = new Thread(() -> {
                        try {
                            for (long i = 1; i <= STREAM; i++) {
                                producer.send(to, ByteBuffer.allocate(8).putLong(i).array());
                                if (i % 2 == 0) {
                                    Thread.sleep(1); // a deliberate pause, not a wait: a stream beside the flood
                                }
                            }
                        } catch (Exception e) {
                            throw new IllegalStateException(e);
                        }
                    }, "legitimate-stream");
                    stream.start();
                    Tls trustOnly = Tls.builder().trustStore(keys.resolve("truststore.p12"), Files.readString(keys
                            .resolve("store.pass")).strip().toCharArray()).build();
                    int uplinkPort = Integer.parseInt(westUplink.substring(westUplink.lastIndexOf(':') + 1));
                    PreAuthFlood.Outcome outcome = flood.run(trustOnly.socketFactory(), uplinkPort, FLOOD,
                            "flood@west", 10_000, () -> null);
                    stream.join(60_000);
                    assertFalse(stream.isAlive(), "the stream is stuck");
                    awaitDelivered(() -> distinct() == STREAM + 1, "the whole stream", west);

                    OkHttpClient http = HttpClients.configure(new OkHttpClient.Builder(), bob).build();
                    String tooLargeSample = "gma_pc_uplink_refused_total{reason=\"too_large\"}";
                    String metrics = await().atMost(Duration.ofSeconds(10)).pollDelay(Duration.ZERO)
                            .until(() -> get(http, westUrl + "/metrics"),
                                    m -> sample(m, tooLargeSample) >= outcome.count(PreAuthFlood.TOO_LARGE));
                    long tooLarge = sample(metrics, tooLargeSample);
                    System.out.printf(Locale.ROOT, "flood of %d on west's uplinks: %s; %d TLS handshakes in %d ms;"
                            + " west counts %d too_large, %d over_cap, %d timeout%n", FLOOD, outcome.byAnswer(),
                            FLOOD, outcome.handshakesMillis(), tooLarge,
                            sample(metrics, "gma_pc_uplink_refused_total{reason=\"over_cap\"}"),
                            sample(metrics, "gma_pc_uplink_refused_total{reason=\"timeout\"}"));
                    assertFalse(west.output().contains("OutOfMemoryError"), west.output());
                    assertTrue(west.isAlive(), west.output());
                    synchronized (this) {
                        assertEquals(0, duplicates, "delivered twice");
                    }
                    assertTrue(outcome.count(PreAuthFlood.TOO_LARGE) > 0, outcome.toString());
                    assertEquals(FLOOD, outcome.count(PreAuthFlood.TOO_LARGE)
                            + outcome.count("refused before the header") + outcome.count("closed without an answer"),
                            "none may stay open, nor be answered otherwise: " + outcome);
                    assertTrue(tooLarge >= outcome.count(PreAuthFlood.TOO_LARGE), metrics);
                    http.dispatcher().executorService().shutdown();
                    http.connectionPool().evictAll();
                }
            } finally {
                west.stop();
            }
        }
    }

    private void awaitDelivered(java.util.function.BooleanSupplier done, String what, ChildJvm west) {
        await().atMost(Duration.ofSeconds(30)).pollDelay(Duration.ZERO).pollInterval(Duration.ofMillis(20))
                .untilAsserted(() -> assertTrue(done.getAsBoolean(), () -> what + " did not arrive: " + distinct()
                        + " numbers of " + (STREAM + 1) + "; west's output:\n" + west.output()));
    }
}
