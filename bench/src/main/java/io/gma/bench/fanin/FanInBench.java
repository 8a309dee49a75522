package io.gma.bench.fanin;

import io.gma.client.Consumer;
import io.gma.client.EndpointException;
import io.gma.client.Producer;
import io.gma.registry.Registry;
import java.io.BufferedInputStream;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The jGMA paper's Benchmark 5 (its Figure 6): 1, 2, 4, 8 and 16 producers sending flat out to one consumer,
 * 8, 16 and 32 KB messages. The producers are endpoints of their own in this JVM, each sending from its own
 * thread; the consumer counts. Reports the consumer's messages/s over a measured interval after a warm-up, and
 * the largest send queue any producer held (sampled every 5 ms) against its bound. The baseline, {@link #raw},
 * is the same fan-in over raw sockets: a thread and a connection per producer, a reader thread per connection.
 *
 * <pre>java -cp bench/target/gma-benchmarks.jar io.gma.bench.fanin.FanInBench [seconds]</pre>
 */
public final class FanInBench {
    /** Each producer's send queue bound, bytes (the client's default). */
    public static final long QUEUE_LIMIT = 8L << 20;

    private FanInBench() {
    }

    /** One measured point: the consumer's messages per second and the largest queue a producer held. */
    public record Result(double messagesPerSecond, long maxQueuedBytes) {
    }

    public static void main(String[] args) throws Exception {
        System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", "warn");
        double seconds = args.length > 0 ? Double.parseDouble(args[0]) : 2;
        System.out.printf(Locale.ROOT, "fan-in, producers as threads in one JVM, %.1f s measured after %.1f s of"
                + " warm-up; JDK %s, %d cores%n%n", seconds, seconds / 4, System.getProperty("java.version"),
                Runtime.getRuntime().availableProcessors());
        System.out.println("| producers | KB | consumer msgs/s | consumer MB/s | max queue bytes of a producer |"
                + " queue bound | raw sockets msgs/s |");
        System.out.println("|---|---|---|---|---|---|---|");
        try (Registry registry = Registry.builder().port(0).build().start()) {
            for (int kb : new int[] {8, 16, 32}) {
                for (int producers = 1; producers <= 16; producers *= 2) {
                    Result r = gma(registry.url(), producers, kb, seconds);
                    double raw = raw(producers, kb, seconds);
                    System.out.printf(Locale.ROOT, "| %d | %d | %,.0f | %,.0f | %,d | %,d | %,.0f |%n", producers,
                            kb, r.messagesPerSecond(), r.messagesPerSecond() * kb / 1024, r.maxQueuedBytes(),
                            QUEUE_LIMIT, raw);
                }
            }
        }
    }

    /**
     * The consumer's messages/s with {@code producers} endpoints sending messages of {@code kb} KiB flat out,
     * counted over {@code seconds} after a quarter of that as warm-up.
     */
    public static Result gma(String registry, int producers, int kb, double seconds) throws Exception {
        AtomicLong received = new AtomicLong();
        AtomicBoolean stop = new AtomicBoolean();
        AtomicLong maxQueued = new AtomicLong();
        List<Producer> sources = new ArrayList<>();
        List<Thread> threads = new ArrayList<>();
        try (Consumer sink = Consumer.builder().registry(registry).domain("lan").label("sink")
                .onMessage(m -> received.incrementAndGet()).build()) {
            byte[] payload = new byte[kb * 1024];
            for (int i = 0; i < producers; i++) {
                Producer p = Producer.builder().registry(registry).domain("lan").label("source" + i)
                        .maxQueuedBytes(QUEUE_LIMIT).build();
                sources.add(p);
                threads.add(new Thread(() -> {
                    while (!stop.get()) {
                        try {
                            p.send(sink.name(), payload);
                        } catch (EndpointException full) {
                            // BLOCK waited its timeout: the consumer is saturated; keep pushing
                        }
                    }
                }, "fanin-gma-" + i));
            }
            threads.add(new Thread(() -> {
                while (!stop.get()) {
                    for (Producer p : sources) {
                        maxQueued.accumulateAndGet(p.stats().queuedBytes(), Math::max);
                    }
                    try {
                        Thread.sleep(5);
                    } catch (InterruptedException e) {
                        return;
                    }
                }
            }, "fanin-sampler"));
            double rate = count(received, stop, threads, seconds);
            return new Result(rate, maxQueued.get());
        } finally {
            sources.forEach(Producer::close);
        }
    }

    /** The baseline: the consumer's messages/s over raw sockets, the same producers, sizes and timing. */
    public static double raw(int producers, int kb, double seconds) throws Exception {
        AtomicLong received = new AtomicLong();
        AtomicBoolean stop = new AtomicBoolean();
        List<Thread> threads = new ArrayList<>();
        List<Socket> sockets = new ArrayList<>();
        int size = kb * 1024;
        try (ServerSocket server = new ServerSocket(0, producers, InetAddress.getLoopbackAddress())) {
            for (int i = 0; i < producers; i++) {
                Socket out = new Socket(server.getInetAddress(), server.getLocalPort());
                Socket in = server.accept();
                sockets.add(out);
                sockets.add(in);
                threads.add(new Thread(() -> readFrames(in, size, received), "fanin-raw-reader-" + i));
                threads.add(new Thread(() -> writeFrames(out, size, stop), "fanin-raw-writer-" + i));
            }
            return count(received, stop, threads, seconds);
        } finally {
            for (Socket s : sockets) {
                s.close();
            }
        }
    }

    /** Starts the threads, counts over the measured interval after the warm-up, stops and joins them. */
    private static double count(AtomicLong received, AtomicBoolean stop, List<Thread> threads, double seconds)
            throws InterruptedException {
        threads.forEach(Thread::start);
        try {
            Thread.sleep((long) (seconds * 250));
            long before = received.get();
            long start = System.nanoTime();
            Thread.sleep((long) (seconds * 1000));
            long count = received.get() - before;
            return count / ((System.nanoTime() - start) / 1e9);
        } finally {
            stop.set(true);
            for (Thread t : threads) {
                t.join(TimeUnit.SECONDS.toMillis(15));
            }
        }
    }

    private static void writeFrames(Socket socket, int size, AtomicBoolean stop) {
        byte[] frame = new byte[4 + size];
        frame[0] = (byte) (size >>> 24);
        frame[1] = (byte) (size >>> 16);
        frame[2] = (byte) (size >>> 8);
        frame[3] = (byte) size;
        try {
            socket.setTcpNoDelay(true);
            OutputStream out = socket.getOutputStream();
            while (!stop.get()) {
                out.write(frame);
            }
            socket.shutdownOutput(); // the reader sees the end and stops
        } catch (IOException e) {
            throw new IllegalStateException("raw fan-in writer: " + e.getMessage(), e);
        }
    }

    private static void readFrames(Socket socket, int size, AtomicLong received) {
        byte[] buf = new byte[size];
        try (InputStream raw = socket.getInputStream();
                DataInputStream in = new DataInputStream(new BufferedInputStream(raw, 65536))) {
            while (true) {
                int len = in.readInt();
                in.readFully(buf, 0, len);
                received.incrementAndGet();
            }
        } catch (IOException endOfStream) {
            // the writer shut its side down: the run is over
        }
    }
}
