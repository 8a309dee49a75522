package io.gma.pcservlet;

import static io.gma.pcservlet.TestPages.freePort;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gma.client.Consumer;
import io.gma.client.FullQueuePolicy;
import io.gma.client.Producer;
import io.gma.client.Sent;
import io.gma.registry.Registry;
import io.gma.registry.api.RegistryClient;
import io.gma.registry.api.RegistryException;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The registry, in memory, stopped for 1, 8 and 20 s under a cross-domain stream and started again on the same
 * port, empty: every PC servlet and endpoint registers again at its next renewal (a third of the default 30 s
 * lease), and meanwhile a name or domain it does not know is unknown for now, not gone. Of everything
 * acknowledged to the producer, nothing is lost nor duplicated; a subscription across domains is not dropped,
 * and what is published after the restart reaches it.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class RegistryRestartTest {
    private static Registry registry(int port) throws Exception {
        return Registry.builder().port(port).build().start();
    }

    /** Whether the registry at {@code url} knows {@code name} (again). */
    private static boolean registered(String url, String name) {
        try {
            RegistryClient.create(url).lookup(name);
            return true;
        } catch (RegistryException e) {
            return false;
        }
    }

    /** What a consumer got: each number once, and how many came again. */
    private static final class Counts {
        final Set<Long> got = ConcurrentHashMap.newKeySet();
        final AtomicLong duplicates = new AtomicLong();

        void take(byte[] data) {
            if (!got.add(ByteBuffer.wrap(data).getLong())) {
                duplicates.incrementAndGet();
            }
        }
    }

    private static byte[] numbered(long n) {
        return ByteBuffer.allocate(64).putLong(n).array();
    }

    @ParameterizedTest(name = "registry down {0} s")
    @ValueSource(ints = {1, 8, 20})
    void aCrossDomainStreamLosesNothingWhileTheRegistryRestarts(int outageSeconds) throws Exception {
        int port = freePort();
        Registry registry = registry(port);
        String url = registry.url();
        Counts counts = new Counts();
        Set<Long> acked = ConcurrentHashMap.newKeySet();
        AtomicLong failed = new AtomicLong();
        AtomicLong sent = new AtomicLong();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        try (PcServer east = PcServer.builder("east", url).start();
                PcServer west = PcServer.builder("west", url).start();
                Consumer sink = Consumer.builder().registry(url).domain("west").pcServlet(west.uplink())
                        .label("sink").onMessage(m -> counts.take(m.data())).build();
                Producer source = Producer.builder().registry(url).domain("east").pcServlet(east.uplink())
                        .label("source").fullQueuePolicy(FullQueuePolicy.BLOCK)
                        .blockTimeout(Duration.ofMinutes(2)).build()) {
            AtomicBoolean stop = new AtomicBoolean();
            Thread sender = new Thread(() -> {
                try {
                    for (long n = 1; !stop.get(); n++) {
                        long number = n;
                        Sent s = source.send(sink.name(), numbered(n));
                        sent.set(n);
                        s.acknowledged().whenComplete((ok, e) -> {
                            if (e == null) {
                                acked.add(number);
                            } else {
                                failed.incrementAndGet();
                                failure.compareAndSet(null, e);
                            }
                        });
                        if (n % 50 == 0) {
                            Thread.sleep(1); // a deliberate pause: a stream across the outage, not one burst
                        }
                    }
                } catch (Exception e) {
                    failure.compareAndSet(null, e);
                }
            }, "registry-restart-sender");
            sender.start();
            await().atMost(Duration.ofSeconds(30)).until(() -> counts.got.size() > 2000);
            registry.close();
            Thread.sleep(TimeUnit.SECONDS.toMillis(outageSeconds)); // the outage itself, a deliberate pause
            registry = registry(port);
            await().atMost(Duration.ofSeconds(30)).until(() -> registered(url, sink.name()));
            long before = counts.got.size();
            await().atMost(Duration.ofSeconds(60)).until(() -> counts.got.size() > before + 2000);
            stop.set(true);
            sender.join();
            // every send settles first: its acknowledgement may come after what was acknowledged before it arrived
            await().atMost(Duration.ofSeconds(60)).untilAsserted(() -> assertEquals(sent.get(),
                    acked.size() + failed.get(), "sends settled"));
            assertEquals(null, failure.get(), failed.get() + " sends failed, e.g.");
            await().atMost(Duration.ofSeconds(60)).untilAsserted(() -> assertEquals(0,
                    acked.stream().filter(n -> !counts.got.contains(n)).count(), "lost"));
            assertEquals(0, counts.duplicates.get(), "duplicates");
        } finally {
            registry.close();
        }
    }

    @ParameterizedTest(name = "registry down {0} s")
    @ValueSource(ints = {1, 8, 20})
    void aSubscriptionAcrossDomainsResumesAfterTheRegistryRestarts(int outageSeconds) throws Exception {
        int port = freePort();
        Registry registry = registry(port);
        String url = registry.url();
        Counts counts = new Counts();
        try (PcServer east = PcServer.builder("east", url).start();
                PcServer west = PcServer.builder("west", url).start();
                Producer cpu = Producer.builder().registry(url).domain("east").pcServlet(east.uplink())
                        .label("cpu").fullQueuePolicy(FullQueuePolicy.BLOCK).build();
                Consumer collector = Consumer.builder().registry(url).domain("west").pcServlet(west.uplink())
                        .label("collector").onMessage(m -> counts.take(m.data())).build()) {
            collector.subscribe(cpu.name(), null).acknowledged().get(10, TimeUnit.SECONDS);
            await().atMost(Duration.ofSeconds(10)).until(() -> cpu.subscribers().containsKey(collector.name()));
            long n = 0;
            Set<Long> acked = ConcurrentHashMap.newKeySet();
            AtomicLong failed = new AtomicLong();
            for (int i = 0; i < 1000; i++) {
                n = publish(cpu, ++n, acked, failed);
            }
            registry.close();
            long stopAt = System.nanoTime() + TimeUnit.SECONDS.toNanos(outageSeconds);
            while (System.nanoTime() - stopAt < 0) { // published while the registry is down
                n = publish(cpu, ++n, acked, failed);
                Thread.sleep(2);
            }
            registry = registry(port);
            await().atMost(Duration.ofSeconds(30)).until(() -> registered(url, collector.name()));
            for (int i = 0; i < 1000; i++) {
                n = publish(cpu, ++n, acked, failed);
            }
            long published = n;
            // every publication settles first, as in the stream's test
            await().atMost(Duration.ofSeconds(60)).untilAsserted(() -> assertEquals(published,
                    acked.size() + failed.get(), "publications settled (each went to the one subscriber)"));
            assertEquals(0, failed.get(), "publications failed");
            await().atMost(Duration.ofSeconds(60)).untilAsserted(() -> assertEquals(0,
                    acked.stream().filter(k -> !counts.got.contains(k)).count(), "lost"));
            assertEquals(0, counts.duplicates.get(), "duplicates");
            assertTrue(cpu.subscribers().containsKey(collector.name()), "the subscriber was dropped");
        } finally {
            registry.close();
        }
    }

    /** Publishes number {@code n}, noting it once acknowledged; {@code n}. */
    private static long publish(Producer p, long n, Set<Long> acked, AtomicLong failed) {
        List<Sent> sent = p.publish(numbered(n));
        for (Sent s : sent) {
            s.acknowledged().whenComplete((ok, e) -> {
                if (e == null) {
                    acked.add(n);
                } else {
                    failed.incrementAndGet();
                }
            });
        }
        return n;
    }
}
