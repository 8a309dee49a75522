package io.gma.pcservlet;

import static io.gma.pcservlet.TestPages.metrics;
import static io.gma.pcservlet.TestPages.sample;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.gma.client.Consumer;
import io.gma.client.FullQueuePolicy;
import io.gma.client.Producer;
import io.gma.registry.Registry;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A spool that fills up, at its bound or because its disk is full, pushes back as a full queue does: the uplink's
 * messages wait unacknowledged, the producer's send queue fills and its BLOCK sends wait; the spool's files stay
 * within the bound (or the disk), and once the next hop is back everything arrives, once each.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class SpoolFullTest {
    private static final int N = 20_000;
    private static final long ONE_MIB = 1 << 20;

    @TempDir
    Path dir;

    @Test
    void aSpoolAtItsBoundHoldsTheProducerBackAndLosesNothing() throws Exception {
        Path spool = dir.resolve("east");
        fillThenRelease(new SpoolOptions(spool, SpoolOptions.Fsync.BATCH, ONE_MIB, Duration.ZERO), spool,
                ONE_MIB);
    }

    /**
     * The spool's bound is far above what the disk holds (a 1 MiB tmpfs): the disk's refusal, ENOSPC, is the
     * push back. Mounting needs root, which CI has (.ci/run sets GMA_REQUIRE_TMPFS there, so that it must run).
     */
    @Test
    void aFullDiskHoldsTheProducerBackAndLosesNothing() throws Exception {
        Path disk = Files.createDirectories(dir.resolve("disk"));
        boolean mounted = run("mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", disk.toString());
        if (System.getenv("GMA_REQUIRE_TMPFS") != null) {
            assertTrue(mounted, "could not mount a 1 MiB tmpfs at " + disk + ", although GMA_REQUIRE_TMPFS is set");
        }
        assumeTrue(mounted, "mounting a tmpfs needs root");
        try {
            Path spool = disk.resolve("east");
            fillThenRelease(new SpoolOptions(spool, SpoolOptions.Fsync.BATCH, 64 * ONE_MIB, Duration.ZERO), spool,
                    ONE_MIB);
        } finally {
            run("umount", "-l", disk.toString());
        }
    }

    private static boolean run(String... command) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        p.getInputStream().readAllBytes();
        return p.waitFor(10, TimeUnit.SECONDS) && p.exitValue() == 0;
    }

    /**
     * West is stopped (its registration stays, so east keeps trying it), a producer of east streams N numbered
     * messages with BLOCK until the spool is full and its sends wait; then west comes back on its ports.
     */
    private void fillThenRelease(SpoolOptions options, Path spool, long diskBound) throws Exception {
        Set<Long> got = ConcurrentHashMap.newKeySet();
        AtomicLong duplicates = new AtomicLong();
        AtomicLong sent = new AtomicLong();
        AtomicReference<Throwable> failed = new AtomicReference<>();
        try (Registry registry = Registry.builder().port(0).build().start();
                PcServer east = PcServer.builder("east", registry.url()).spool(options).start()) {
            PcServer west = PcServer.builder("west", registry.url()).start();
            int http = west.httpPort();
            int uplink = west.uplinkPort();
            try (Consumer sink = Consumer.builder().registry(registry.url()).domain("west").pcServlet(west.uplink())
                    .label("sink").onMessage(m -> {
                        if (!got.add(ByteBuffer.wrap(m.data()).getLong())) {
                            duplicates.incrementAndGet();
                        }
                    }).build();
                    Producer source = Producer.builder().registry(registry.url()).domain("east")
                            .pcServlet(east.uplink()).label("source").fullQueuePolicy(FullQueuePolicy.BLOCK)
                            .blockTimeout(Duration.ofSeconds(90)).maxQueuedMessages(1000).build()) {
                west.stop();
                Thread sender = new Thread(() -> {
                    try {
                        for (long n = 1; n <= N; n++) {
                            source.send(sink.name(), ByteBuffer.allocate(256).putLong(n).array());
                            sent.set(n);
                        }
                    } catch (Exception e) {
                        failed.set(e);
                    }
                }, "spool-full-sender");
                sender.start();
                // the spool refuses, and the producer's sends wait: nothing more goes out for a second
                await().atMost(Duration.ofSeconds(30))
                        .until(() -> sample(metrics(east), "gma_pc_spool_full_total") > 0);
                long[] last = {-1};
                await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofSeconds(1)).until(() -> {
                    long now = sent.get();
                    boolean still = now == last[0];
                    last[0] = now;
                    return still;
                });
                assertTrue(sent.get() < N, "the producer was held back: " + sent.get() + " of " + N + " sent");
                assertTrue(filesBytes(spool) <= diskBound, "the spool's files: " + filesBytes(spool) + " bytes");
                assertTrue(sample(metrics(east), "gma_pc_outbound_queue_bytes{domain=\"west\"}") <= 8 * ONE_MIB);
                west = PcServer.builder("west", registry.url()).httpPort(http).uplinkPort(uplink).start();
                await().atMost(Duration.ofSeconds(60)).until(() -> got.size() == N);
                sender.join();
                assertEquals(null, failed.get());
                await().during(Duration.ofMillis(300)).atMost(Duration.ofSeconds(2)).until(() -> got.size() == N);
                assertEquals(0, duplicates.get(), "duplicates");
            } finally {
                west.close();
            }
        }
    }

    private static long filesBytes(Path spool) throws IOException {
        try (Stream<Path> files = Files.list(spool)) {
            return files.mapToLong(p -> p.toFile().length()).sum();
        }
    }

}
