package io.gma.bench.tables;

import io.gma.bench.streaming.ThreadCpu;
import io.gma.client.Consumer;
import io.gma.client.ContinuousQuery;
import io.gma.client.Producer;
import io.gma.tables.Row;
import io.gma.tables.TableSchema;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Continuous queries against plain streaming (issue 23): one producer and one consumer in one domain, over the
 * direct link between them, kept for every pass so that each kind of pass runs on the same link. A pass is one
 * of:
 *
 * <ul>
 *   <li>{@link Kind#PLAIN}: {@code producer.send} of each row's 64-byte encoding as DATA, counted by the
 *       consumer's message handler: the baseline;
 *   <li>{@link Kind#MATCH_ALL}: a continuous query whose WHERE every row satisfies, then {@code producer.insert}
 *       of each row, counted by the query's row handler;
 *   <li>{@link Kind#ONE_IN_TEN}: the same with a WHERE one row in ten satisfies.
 * </ul>
 *
 * Each pass sends one untimed message first (a DATA, or a row the query matches), so that the link and the
 * subscription are up before the clock starts; then the clock runs from the first send or insert to the last
 * arrival, as streaming's does. The producer sends or inserts as fast as the client's flow control lets it (its
 * send queue blocks when full, the default). The bytes of a pass are those the producer's links wrote to their
 * sockets ({@code EndpointStats.bytesOut}; its only link is the one to the consumer) and those the consumer's
 * read ({@code bytesIn}), between the untimed message and the last arrival.
 */
public final class ContinuousBench implements AutoCloseable {
    /** What a pass sends. */
    public enum Kind {
        PLAIN, MATCH_ALL, ONE_IN_TEN
    }

    /**
     * One pass.
     *
     * @param sent rows sent or inserted
     * @param delivered rows (or DATA messages) that reached the consumer's handler
     * @param producerBytes bytes the producer's links wrote meanwhile
     * @param consumerBytes bytes the consumer's links read meanwhile
     * @param cpu the CPU each group of threads used meanwhile, nanoseconds ({@link ThreadCpu#used})
     * @param syscalls this process's read and write system calls meanwhile (Linux's {@code /proc/self/io}
     *     {@code syscr} and {@code syscw}: the sockets' reads and writes, mostly), or -1 where unknown
     */
    public record Pass(Kind kind, int sent, long delivered, double seconds, long producerBytes, long consumerBytes,
            Map<String, Long> cpu, long[] syscalls) {
        /** Rows sent or inserted per second, first send to last arrival. */
        public double rowsPerSecond() {
            return sent / seconds;
        }

        /** Rows delivered per second. */
        public double deliveredPerSecond() {
            return delivered / seconds;
        }
    }

    private final Producer producer;
    private final Consumer consumer;
    private final Row[] rows;
    private final byte[][] encoded;
    private final AtomicLong received = new AtomicLong();
    private volatile long target;
    private volatile CountDownLatch done = new CountDownLatch(0);

    private ContinuousBench(String registry) throws Exception {
        TableSchema schema = BenchTable.schema(BenchTable.CONTINUOUS, null);
        rows = BenchTable.rows(System.currentTimeMillis() * 1000);
        encoded = BenchTable.encoded(schema, rows);
        consumer = Consumer.builder().registry(registry).domain("lan").label("tables-sink")
                .onMessage(m -> arrived()).build();
        try {
            producer = Producer.builder().registry(registry).domain("lan").label("tables-source").build();
        } catch (Exception e) {
            consumer.close();
            throw e;
        }
        try {
            producer.declare(schema);
        } catch (Exception e) {
            close();
            throw e;
        }
    }

    /** A producer of {@link BenchTable#CONTINUOUS} and a consumer, registered at {@code registry}. */
    public static ContinuousBench start(String registry) throws Exception {
        return new ContinuousBench(registry);
    }

    /** How many of the first {@code n} rows a pass of this kind delivers. */
    public static long expected(Kind kind, int n) {
        return kind == Kind.ONE_IN_TEN ? n / BenchTable.CPUS : n; // rows 9, 19, 29, ...: CPU 9
    }

    /** One pass of {@code n} rows. */
    public Pass run(Kind kind, int n) throws Exception {
        if (kind == Kind.PLAIN) {
            untimed(1, () -> {
                producer.send(consumer.name(), encoded[0]);
                return 1;
            });
            return timed(kind, n, () -> {
                for (int i = 0; i < n; i++) {
                    producer.send(consumer.name(), encoded[i % BenchTable.KEYS]);
                }
                return n;
            });
        }
        String sql = kind == Kind.MATCH_ALL ? BenchTable.MATCH_ALL : BenchTable.ONE_IN_TEN;
        try (ContinuousQuery q = consumer.continuous(sql, r -> arrived())) {
            if (!q.producers().equals(Set.of(producer.name()))) {
                throw new IllegalStateException("the query " + sql + " is subscribed to " + q.producers()
                        + ", not to " + producer.name() + " alone");
            }
            untimed(1, () -> producer.insert(BenchTable.CONTINUOUS, rows[BenchTable.CPUS - 1])); // matches both
            return timed(kind, n, () -> {
                long sentTo = 0;
                for (int i = 0; i < n; i++) {
                    sentTo += producer.insert(BenchTable.CONTINUOUS, rows[i % BenchTable.KEYS]);
                }
                return sentTo;
            });
        }
    }

    /** What a pass does on the clock; how many messages it sent. */
    private interface Sends {
        long run() throws Exception;
    }

    private Pass timed(Kind kind, int n, Sends sends) throws Exception {
        long want = expected(kind, n);
        expect(want);
        long producerBefore = producer.stats().bytesOut();
        long consumerBefore = consumer.stats().bytesIn();
        long[] syscallsBefore = syscalls();
        ThreadCpu cpu = new ThreadCpu();
        long start = System.nanoTime();
        long sent = sends.run();
        if (sent != want) {
            throw new IllegalStateException(kind + ": " + sent + " messages sent for " + n + " rows, expected "
                    + want + " (a query left over from an earlier pass?)");
        }
        if (!done.await(5, TimeUnit.MINUTES)) {
            throw new IllegalStateException(kind + ": only " + received.get() + " of " + want + " rows arrived in 5"
                    + " minutes");
        }
        double seconds = (System.nanoTime() - start) / 1e9;
        Map<String, Long> used = cpu.used();
        long[] syscalls = syscalls();
        for (int i = 0; i < syscalls.length; i++) {
            syscalls[i] = syscalls[i] < 0 || syscallsBefore[i] < 0 ? -1 : syscalls[i] - syscallsBefore[i];
        }
        Thread.sleep(50); // a row too many would arrive now
        if (received.get() != want) {
            throw new IllegalStateException(kind + ": " + received.get() + " rows arrived, expected " + want);
        }
        // a writer counts its bytes after its write returns, and may be preempted in between while the consumer
        // takes the last rows (one CI run counted 2 of 200): what the consumer read, the producer wrote
        long producerBytes = producer.stats().bytesOut() - producerBefore;
        long consumerBytes = consumer.stats().bytesIn() - consumerBefore;
        for (long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5); producerBytes < consumerBytes
                && System.nanoTime() < deadline; producerBytes = producer.stats().bytesOut() - producerBefore) {
            Thread.sleep(10);
        }
        return new Pass(kind, n, want, seconds, producerBytes, consumerBytes, used, syscalls);
    }

    /** This process's read and write system calls so far; -1 each where /proc/self/io cannot be read. */
    private static long[] syscalls() {
        long[] calls = {-1, -1};
        try {
            for (String line : Files.readAllLines(Path.of("/proc/self/io"))) {
                if (line.startsWith("syscr:")) {
                    calls[0] = Long.parseLong(line.substring(6).strip());
                } else if (line.startsWith("syscw:")) {
                    calls[1] = Long.parseLong(line.substring(6).strip());
                }
            }
        } catch (IOException | RuntimeException e) {
            return new long[] {-1, -1};
        }
        return calls;
    }

    /** Sends one untimed message and waits for it. */
    private void untimed(long count, Sends send) throws Exception {
        expect(count);
        send.run();
        if (!done.await(30, TimeUnit.SECONDS)) {
            throw new IllegalStateException(producer.name() + " could not reach " + consumer.name() + " in 30 s");
        }
    }

    private void expect(long count) {
        received.set(0);
        target = count;
        done = new CountDownLatch(1);
    }

    /** On the consumer's event loop: one more DATA or row. */
    private void arrived() {
        if (received.incrementAndGet() == target) {
            done.countDown();
        }
    }

    @Override
    public void close() {
        producer.close();
        consumer.close();
    }
}
