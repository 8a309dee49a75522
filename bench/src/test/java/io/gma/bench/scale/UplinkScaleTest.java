package io.gma.bench.scale;

import static org.junit.jupiter.api.Assertions.assertAll;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gma.pcservlet.PcServer;
import io.gma.registry.Registry;
import io.gma.registry.api.RegistryClient;
import java.io.IOException;
import java.lang.management.BufferPoolMXBean;
import java.lang.management.ManagementFactory;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Issue 22, many thin links: 5,000 idle uplinks to one in-process PC servlet stay within the event-loop model's
 * bounds (at most 4 + 2 x cores I/O threads, at most 64 KiB per idle uplink), and with 500 of them publishing 1
 * message a second across domains for 30 s, every message arrives, in order per sender.
 *
 * <p>In the default suite. On the one-thread-per-uplink model before the event loops, the first failed with 4,964
 * threads and 532 KiB per uplink. Tagged {@code scale}: {@code -Dgma.test.excludedGroups=scale} leaves it out.
 */
@Tag("scale")
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class UplinkScaleTest {
    private static final int AGENTS = 5_000;
    private static final int PUBLISHERS = 500;
    private static final int SECONDS = 30;
    private static final int CORES = Runtime.getRuntime().availableProcessors();
    /** Threads besides the I/O threads that the uplinks may add: the swarm's own, a stall guard, a timer or two. */
    private static final int OTHER_THREADS = 6;
    private static final int MAX_THREADS_ADDED = 4 + 2 * CORES + OTHER_THREADS;
    private static final long MAX_BYTES_PER_UPLINK = 64 * 1024;
    private static final String UPLINK_THREADS = "gma-pc@east-uplink-";

    /** The JVM's threads and memory at one moment, after garbage collection. */
    private record Usage(int threads, int uplinkThreads, long heap, long direct, long rssKib) {
        static Usage now() throws InterruptedException {
            for (int i = 0; i < 3; i++) {
                System.gc();
                Thread.sleep(100);
            }
            long direct = 0;
            for (BufferPoolMXBean pool : ManagementFactory.getPlatformMXBeans(BufferPoolMXBean.class)) {
                if (pool.getName().equals("direct")) {
                    direct = pool.getMemoryUsed();
                }
            }
            int uplinkThreads = (int) Thread.getAllStackTraces().keySet().stream()
                    .filter(t -> t.getName().startsWith(UPLINK_THREADS)).count();
            return new Usage(ManagementFactory.getThreadMXBean().getThreadCount(), uplinkThreads,
                    ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed(), direct, residentKib());
        }

        /** VmRSS, or -1 where there is no /proc or it cannot be read now (no file descriptor left, say). */
        private static long residentKib() {
            try {
                return ProcSample.available() ? ProcSample.of(ProcessHandle.current().pid()).rssKib() : -1;
            } catch (IOException e) {
                return -1;
            }
        }
    }

    private static void log(long start, String what) {
        System.out.printf(Locale.ROOT, "UplinkScaleTest: %.1f s: %s%n", (System.nanoTime() - start) / 1e9, what);
    }

    @Test
    void fiveThousandIdleUplinksStayWithinTheThreadAndMemoryBounds() throws Exception {
        try (Registry registry = Registry.builder().port(0).build().start();
                PcServer east = PcServer.builder("east", registry.url()).start();
                AgentRegistrations agents = new AgentRegistrations(RegistryClient.create(registry.url()), "east", 8,
                        false)) {
            long start = System.nanoTime();
            List<String> names = agents.upTo(AGENTS);
            log(start, "registered " + AGENTS + " agents");
            Usage before = Usage.now();
            try (UplinkSwarm swarm = UplinkSwarm.start(new InetSocketAddress("127.0.0.1", east.uplinkPort()), names,
                    UplinkSwarm.DEFAULT_MAX_PENDING)) {
                UplinkSwarm.Stats opened = swarm.awaitSettled(Duration.ofSeconds(30), Duration.ofSeconds(10));
                log(start, opened.open() + " uplinks open");
                Usage after = Usage.now();
                int open = Math.max(1, opened.open());
                int threadsAdded = after.threads() - before.threads();
                long bytesPerUplink = (after.heap() + after.direct() - before.heap() - before.direct()) / open;
                String measured = String.format(Locale.ROOT, "%,d of %,d idle uplinks open (the others: %s) added"
                        + " %,d threads (%,d named %s*), %,d KiB of heap and %,d KiB of direct buffers: %,d KiB per"
                        + " open uplink; resident memory %s", opened.open(), AGENTS, opened.reasonsLine(),
                        threadsAdded, after.uplinkThreads() - before.uplinkThreads(), UPLINK_THREADS,
                        (after.heap() - before.heap()) / 1024, (after.direct() - before.direct()) / 1024,
                        bytesPerUplink / 1024, before.rssKib() < 0 || after.rssKib() < 0 ? "unknown (/proc unreadable)"
                                : String.format(Locale.ROOT, "%+,d MiB", (after.rssKib() - before.rssKib()) / 1024));
                System.out.println("UplinkScaleTest: " + measured);
                assertAll(() -> assertEquals(AGENTS, opened.open(), measured),
                        () -> assertTrue(threadsAdded <= MAX_THREADS_ADDED, measured + "; threads added: at most 4 +"
                        + " 2 x " + CORES + " cores + " + OTHER_THREADS + " = " + MAX_THREADS_ADDED),
                        () -> assertTrue(bytesPerUplink <= MAX_BYTES_PER_UPLINK, measured + "; per uplink: at most "
                                + MAX_BYTES_PER_UPLINK / 1024 + " KiB"));
            }
        }
    }

    @Test
    void fiveHundredOfFiveThousandPublishAcrossDomainsAndEveryMessageArrivesInOrder() throws Exception {
        try (Registry registry = Registry.builder().port(0).build().start();
                PcServer east = PcServer.builder("east", registry.url()).start();
                PcServer west = PcServer.builder("west", registry.url()).start();
                LatencySink sink = LatencySink.start(registry.url(), "west", west.uplink());
                AgentRegistrations agents = new AgentRegistrations(RegistryClient.create(registry.url()), "east", 8,
                        false)) {
            long start = System.nanoTime();
            List<String> names = agents.upTo(AGENTS);
            log(start, "registered " + AGENTS + " agents");
            try (UplinkSwarm swarm = UplinkSwarm.start(new InetSocketAddress("127.0.0.1", east.uplinkPort()), names,
                    UplinkSwarm.DEFAULT_MAX_PENDING)) {
                // the uplinks that did not open count as skipped sends: failed below, with the rest measured
                log(start, swarm.awaitSettled(Duration.ofSeconds(12), Duration.ofSeconds(5)).open() + " uplinks open");
                swarm.publish(sink.name(), PUBLISHERS, Duration.ofSeconds(1));
                Thread.sleep(SECONDS * 1000L);
                swarm.stopPublishing();
                long sent = swarm.stats().sent();
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
                UplinkSwarm.Stats last = swarm.stats();
                while ((sink.received() < sent || last.unacknowledged() > 0) && System.nanoTime() - deadline < 0) {
                    Thread.sleep(50); // the last messages, and east's ACKs of them (within about 35 ms)
                    last = swarm.stats();
                }
                UplinkSwarm.Stats done = last;
                log(start, "published");
                LatencySink.Counts got = sink.counts();
                long inOrder = names.subList(0, PUBLISHERS).stream().mapToLong(sink::highest).sum();
                String measured = String.format(Locale.ROOT, "%,d sent by %d agents, %,d skipped (uplink not open),"
                        + " %,d unacknowledged, %,d received from %d senders, %,d out of order; latency p50 %.2f ms,"
                        + " p99 %.2f ms", sent, PUBLISHERS, done.skipped(), done.unacknowledged(), got.received(),
                        got.senders(), got.outOfOrder(), got.p50Millis(), got.p99Millis());
                System.out.println("UplinkScaleTest: " + measured);
                assertAll(() -> assertTrue(sent >= (long) PUBLISHERS * (SECONDS - 1), measured),
                        () -> assertEquals(0, done.skipped(), measured),
                        () -> assertEquals(sent, got.received(), measured),
                        () -> assertEquals(0, got.outOfOrder(), measured),
                        () -> assertEquals(sent, inOrder, "the highest numbers of each sender, added: " + measured),
                        () -> assertEquals(0, done.unacknowledged(), measured),
                        () -> assertEquals(AGENTS, done.open(), "uplinks open: " + done.open() + "; the others: "
                                + done.reasonsLine()));
            }
        }
    }
}
