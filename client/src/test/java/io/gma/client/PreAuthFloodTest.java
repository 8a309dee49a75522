package io.gma.client;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gma.registry.Registry;
import io.gma.registry.api.RegistryClient;
import io.gma.security.Tls;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.awaitility.core.ConditionTimeoutException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * 200 peers that do the TLS handshake and then announce 16 MiB in HELLO, against a secured endpoint in a JVM
 * of its own with a 64 MiB heap, while a legitimate producer streams numbered messages to it over a direct
 * link: the endpoint does not run out of memory, refuses each of them TOO_LARGE (and counts them), still
 * serves, and the stream loses nothing and delivers nothing twice. Before the handshake limit, each such
 * peer cost 16 MiB, and each pending handshake about 560 KiB.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class PreAuthFloodTest {
    static final int FLOOD = 200;
    static final int STREAM = 3000;
    private static final Pattern READY = Pattern.compile("ready (\\S+)");
    private static final Pattern COUNT = Pattern.compile("count distinct=(\\d+) duplicates=(\\d+) heapUsed=(\\d+)"
            + " heapMax=(\\d+) stats=(.*)");

    private static long stat(Matcher count, String name) {
        Matcher m = Pattern.compile(name + "=(\\d+)").matcher(count.group(5));
        assertTrue(m.find(), count.group());
        return Long.parseLong(m.group(1));
    }

    private static long heapKiB(Matcher count) {
        return Long.parseLong(count.group(3)) / 1024;
    }

    private static Matcher count(ChildJvm target) throws Exception {
        target.tell("count");
        return target.await(COUNT, 15_000);
    }

    @Test
    void aSecuredEndpointIn64MiBSurvives200PeersAnnouncing16MiBAndLosesNothing() throws Exception {
        Path keys = TestKeys.main();
        String rules = HandshakeLimitsTest.RULES;
        try (Registry registry = TestKeys.registry(keys);
                ChildJvm target = ChildJvm.start(List.of("-Xmx64m", "-Dorg.slf4j.simpleLogger.defaultLogLevel=error"),
                        FloodTargetMain.class.getName(), List.of(registry.url(), keys.toString(), "bob",
                                rules.replace('\n', ';')));
                Producer p = Producer.builder().registry(registry.url()).domain("lan").label("stream")
                        .security(TestKeys.security(keys, "alice", rules)).build();
                PreAuthFlood flood = new PreAuthFlood()) {
            String name = target.await(READY, 60_000).group(1);
            int port = RegistryClient.builder(registry.url()).security(TestKeys.security(keys, "alice", rules)).build()
                    .lookup(name).port();
            p.send(name, ByteBuffer.allocate(8).putLong(0).array()).acknowledged().get(30, TimeUnit.SECONDS);

            // the stream goes on beside the flood, a message about every millisecond
            List<CompletableFuture<Void>> acks = new ArrayList<>();
            Thread stream = new Thread(() -> {
                try {
                    for (long i = 1; i <= STREAM; i++) {
                        acks.add(p.send(name, ByteBuffer.allocate(8).putLong(i).array()).acknowledged());
                        if (i % 2 == 0) {
                            Thread.sleep(1); // a deliberate pause, not a wait: the stream is spread beside the flood
                        }
                    }
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            }, "legitimate-stream");
            stream.start();
            Tls trustOnly = Tls.builder().trustStore(keys.resolve("truststore.p12"), SecureLinkTest.password(keys))
                    .build();
            Matcher[] pending = new Matcher[1];
            PreAuthFlood.Outcome outcome = flood.run(trustOnly.socketFactory(), port, FLOOD, "flood@lan", 10_000,
                    () -> pending[0] = count(target));
            Matcher refused = count(target);
            stream.join(60_000);
            assertFalse(stream.isAlive(), "the stream is stuck");
            CompletableFuture.allOf(acks.toArray(new CompletableFuture<?>[0])).get(30, TimeUnit.SECONDS);

            // everything counted: the stream's numbers and the refusals; else the assertions below say what is not
            Matcher[] counted = new Matcher[1];
            try {
                await().atMost(Duration.ofSeconds(15)).pollInSameThread().pollDelay(Duration.ZERO)
                        .pollInterval(Duration.ofMillis(100)).until(() -> {
                            counted[0] = count(target);
                            return Integer.parseInt(counted[0].group(1)) >= STREAM + 1
                                    && stat(counted[0], "handshakesTooLarge") >= outcome.count(PreAuthFlood.TOO_LARGE);
                        });
            } catch (ConditionTimeoutException e) {
                // not within 15 s: the last count is checked below
            }
            Matcher after = counted[0];
            System.out.printf(Locale.ROOT, "flood of %d: %s; %d TLS handshakes in %d ms; the target's heap after"
                    + " a GC: %d KiB with them all pending, %d KiB once refused, of %d KiB%n", FLOOD,
                    outcome.byAnswer(), FLOOD, outcome.handshakesMillis(), heapKiB(pending[0]), heapKiB(refused),
                    Long.parseLong(refused.group(4)) / 1024);
            assertFalse(target.output().contains("OutOfMemoryError"), target.output());
            assertTrue(target.isAlive(), target.output());
            assertEquals(STREAM + 1, Integer.parseInt(after.group(1)), "distinct numbers received: " + after.group());
            assertEquals(0, Integer.parseInt(after.group(2)), "delivered twice: " + after.group());
            assertTrue(outcome.count(PreAuthFlood.TOO_LARGE) > 0, outcome.toString());
            assertEquals(FLOOD, outcome.count(PreAuthFlood.TOO_LARGE) + outcome.count("refused before the header")
                    + outcome.count("closed without an answer"), "none may stay open, nor be answered otherwise: "
                    + outcome);
            assertTrue(stat(after, "handshakesTooLarge") >= outcome.count(PreAuthFlood.TOO_LARGE), after.group());
        }
    }
}
