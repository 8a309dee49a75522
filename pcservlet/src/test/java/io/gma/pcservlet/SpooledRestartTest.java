package io.gma.pcservlet;

import static io.gma.pcservlet.TestPages.freePort;
import static io.gma.pcservlet.TestPages.metrics;
import static io.gma.pcservlet.TestPages.sample;
import static java.nio.charset.StandardCharsets.UTF_8;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gma.client.Consumer;
import io.gma.client.EndpointException;
import io.gma.client.FullQueuePolicy;
import io.gma.client.Producer;
import io.gma.registry.Registry;
import io.gma.wire.ErrorCode;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A PC servlet with a spool, stopped while it holds messages for an endpoint and started again on the same
 * directory and ports: the next run delivers them, each once, in order; a record damaged on disk meanwhile is
 * skipped and counted, and the rest still arrive.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class SpooledRestartTest {
    private static final int N = 100;

    @TempDir
    Path dir;

    private static PcServer west(Registry registry, Path spool, int http, int uplink) throws Exception {
        return PcServer.builder("west", registry.url()).httpPort(http).uplinkPort(uplink)
                .drainTimeout(Duration.ZERO).spool(SpoolOptions.in(spool)).start();
    }

    /**
     * Streams N numbered messages from east to a consumer of west that cannot reach west's first run (its uplink
     * points at the port of the second), so that west's spool holds them all; stops west; runs {@code meanwhile}
     * on its spool's directory; starts west again, on the port the consumer waits for.
     *
     * @return what the consumer was handed, in order, and west's metrics after the restart
     */
    private List<String> stopAndRestartWestWith(java.util.function.Consumer<Path> meanwhile, int expected,
            String[] metricsOut) throws Exception {
        Path spool = dir.resolve("west");
        int http = freePort();
        int later = freePort();
        List<String> got = new ArrayList<>();
        try (Registry registry = Registry.builder().port(0).build().start();
                PcServer east = PcServer.builder("east", registry.url()).start()) {
            PcServer west = west(registry, spool, http, 0);
            try (Consumer sink = Consumer.builder().registry(registry.url()).domain("west").label("sink")
                    .pcServlet("127.0.0.1:" + later).onMessage(m -> {
                        synchronized (got) {
                            got.add(new String(m.data(), UTF_8));
                        }
                    }).build();
                    Producer source = Producer.builder().registry(registry.url()).domain("east").label("source")
                            .pcServlet(east.uplink()).fullQueuePolicy(FullQueuePolicy.BLOCK).build()) {
                for (int i = 0; i < N; i++) {
                    source.send(sink.name(), ("m" + i).getBytes(UTF_8)).acknowledged().get(10, TimeUnit.SECONDS);
                }
                PcServer first = west;
                await().atMost(Duration.ofSeconds(20)).until(() -> sample(metrics(first), "gma_pc_spool_records")
                        == N);
                west.close(); // its queue for sink is not drained: sink never reached it
                meanwhile.accept(spool);
                west = west(registry, spool, http, later);
                await().atMost(Duration.ofSeconds(30)).until(() -> {
                    synchronized (got) {
                        return got.size() >= expected;
                    }
                });
                metricsOut[0] = metrics(west);
            } finally {
                west.close();
            }
        }
        return got;
    }

    @Test
    void whatAStoppedPcServletHeldIsDeliveredByItsNextRunOnceEachInOrder() throws Exception {
        String[] metrics = new String[1];
        List<String> got = stopAndRestartWestWith(spool -> { }, N, metrics);
        List<String> expected = new ArrayList<>();
        for (int i = 0; i < N; i++) {
            expected.add("m" + i);
        }
        synchronized (got) {
            assertEquals(expected, got, "each once, in order");
        }
        assertTrue(sample(metrics[0], "gma_pc_spool_recovered_total") > 0, metrics[0]);
        assertEquals(0, sample(metrics[0], "gma_pc_spool_damaged_total"), metrics[0]);
    }

    @Test
    void aRecordDamagedOnDiskIsSkippedAndCountedAndTheRestArrive() throws Exception {
        String[] metrics = new String[1];
        List<String> got = stopAndRestartWestWith(spool -> flipAByteInTheMiddleOf(spool), N - 1, metrics);
        await().during(Duration.ofMillis(500)).atMost(Duration.ofSeconds(5)).until(() -> {
            synchronized (got) {
                return got.size() == N - 1;
            }
        });
        assertEquals(1, sample(metrics[0], "gma_pc_spool_damaged_total"), metrics[0]);
        synchronized (got) {
            assertEquals(N - 1, got.size(), "one record lost to the damage, no more: " + got);
            assertEquals(got.size(), got.stream().distinct().count(), "no duplicate: " + got);
        }
    }

    @Test
    void aSegmentCutShortLosesItsLastRecordOnlyCountedAsTornAndTheRestArrive() throws Exception {
        String[] metrics = new String[1];
        List<String> got = stopAndRestartWestWith(spool -> cutTheEndOff(spool, 10), N - 1, metrics);
        await().during(Duration.ofMillis(500)).atMost(Duration.ofSeconds(5)).until(() -> {
            synchronized (got) {
                return got.size() == N - 1;
            }
        });
        assertEquals(1, sample(metrics[0], "gma_pc_spool_torn_total"), metrics[0]);
        synchronized (got) {
            List<String> expected = new ArrayList<>();
            for (int i = 0; i < N - 1; i++) {
                expected.add("m" + i);
            }
            assertEquals(expected, got, "all but the last, once each, in order");
        }
    }

    @Test
    void messagesOlderThanMaxAgeGoBackToTheirSendersAsTimeoutAndAreCounted() throws Exception {
        Path spool = dir.resolve("west");
        int http = freePort();
        int later = freePort();
        SpoolOptions aged = new SpoolOptions(spool, SpoolOptions.Fsync.BATCH, SpoolOptions.DEFAULT_MAX_BYTES,
                Duration.ofSeconds(1));
        try (Registry registry = Registry.builder().port(0).build().start();
                PcServer east = PcServer.builder("east", registry.url()).start()) {
            PcServer west = PcServer.builder("west", registry.url()).httpPort(http).drainTimeout(Duration.ZERO)
                    .spool(aged).start();
            try (Consumer sink = Consumer.builder().registry(registry.url()).domain("west").label("sink")
                    .pcServlet("127.0.0.1:" + later).onMessage(m -> { }).build();
                    Producer source = Producer.builder().registry(registry.url()).domain("east").label("source")
                            .pcServlet(east.uplink()).requestTimeout(Duration.ofSeconds(60)).build()) {
                List<CompletableFuture<byte[]>> asked = new ArrayList<>();
                for (int i = 0; i < 5; i++) {
                    asked.add(source.requestAsync(sink.name(), ("r" + i).getBytes(UTF_8)));
                }
                PcServer first = west;
                await().atMost(Duration.ofSeconds(20)).until(() -> sample(metrics(first), "gma_pc_spool_records")
                        == 5);
                west.close(); // sink never reached it: the requests stay in its spool
                Thread.sleep(1500); // a deliberate pause: the spooled requests grow older than maxAge
                west = PcServer.builder("west", registry.url()).httpPort(http).uplinkPort(later)
                        .drainTimeout(Duration.ZERO).spool(aged).start();
                for (CompletableFuture<byte[]> f : asked) {
                    ExecutionException e = assertThrows(ExecutionException.class, () -> f.get(20, TimeUnit.SECONDS));
                    EndpointException why = (EndpointException) e.getCause();
                    assertEquals(ErrorCode.TIMEOUT, why.code(), why.getMessage());
                    assertTrue(why.getMessage().matches(".*REQUEST \\d+ waited \\d+ s in the spool of west, longer"
                            + " than maxAge 1 s"), why.getMessage());
                }
                assertEquals(5, sample(metrics(west), "gma_pc_spool_expired_total"));
            } finally {
                west.close();
            }
        }
    }

    @Test
    void aDataDirectoryInUseIsRefusedNamingItAndTheProcess() throws Exception {
        Path spool = dir.resolve("east");
        try (Registry registry = Registry.builder().port(0).build().start();
                PcServer east = PcServer.builder("east", registry.url()).spool(SpoolOptions.in(spool)).start()) {
            IOException refused = assertThrows(IOException.class, () -> PcServer.builder("east2", registry.url())
                    .spool(SpoolOptions.in(spool)).start().close());
            assertTrue(refused.getMessage().startsWith("the spool directory " + spool.toAbsolutePath()
                    + " is in use by process " + ProcessHandle.current().pid() + "@"), refused.getMessage());
        }
    }

    /** Cuts {@code bytes} off the end of the largest segment, tearing its last record. */
    private static void cutTheEndOff(Path spool, int bytes) {
        try (Stream<Path> files = Files.list(spool)) {
            Path seg = files.filter(p -> p.toString().endsWith(".seg")).max((a, b) -> Long.compare(a.toFile()
                    .length(), b.toFile().length())).orElseThrow();
            try (RandomAccessFile f = new RandomAccessFile(seg.toFile(), "rw")) {
                f.setLength(f.length() - bytes);
            }
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    /** Flips one byte of a record's payload, in the middle of the largest segment. */
    private static void flipAByteInTheMiddleOf(Path spool) {
        try (Stream<Path> files = Files.list(spool)) {
            Path seg = files.filter(p -> p.toString().endsWith(".seg")).max((a, b) -> Long.compare(a.toFile()
                    .length(), b.toFile().length())).orElseThrow();
            try (RandomAccessFile f = new RandomAccessFile(seg.toFile(), "rw")) {
                long at = f.length() / 2;
                f.seek(at);
                int b = f.read();
                f.seek(at);
                f.write(b ^ 0x01);
            }
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }
}
