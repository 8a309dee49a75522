package io.gma.bench.fanin;

import io.gma.client.Consumer;
import io.gma.client.EndpointException;
import io.gma.client.Producer;
import io.gma.registry.Registry;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The jGMA paper's Benchmark 5: 1, 2, 4, 8 and 16 producers sending flat out to one consumer, 8, 16 and 32 KB
 * messages. The producers are endpoints of their own in this JVM, each sending from its own thread; the
 * consumer counts. Reports the consumer's messages/s over a measured interval after a warm-up, and the
 * largest send queue any producer held (sampled every 5 ms) against its bound.
 *
 * <pre>java -cp bench/target/gma-benchmarks.jar io.gma.bench.fanin.FanInBench [seconds]</pre>
 */
public final class FanInBench {
    private static final long QUEUE_LIMIT = 8L << 20;

    private FanInBench() {
    }

    public static void main(String[] args) throws Exception {
        System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", "warn");
        double seconds = args.length > 0 ? Double.parseDouble(args[0]) : 2;
        System.out.printf(Locale.ROOT, "fan-in, producers as threads in one JVM, %.1f s measured after %.1f s of"
                + " warm-up; JDK %s, %d cores%n%n", seconds, seconds / 4, System.getProperty("java.version"),
                Runtime.getRuntime().availableProcessors());
        System.out.println("| producers | KB | consumer msgs/s | consumer MB/s | max queue bytes of a producer |"
                + " queue bound |");
        System.out.println("|---|---|---|---|---|---|");
        try (Registry registry = Registry.builder().port(0).build().start()) {
            for (int kb : new int[] {8, 16, 32}) {
                for (int producers = 1; producers <= 16; producers *= 2) {
                    run(registry.url(), producers, kb, seconds);
                }
            }
        }
    }

    private static void run(String registry, int producers, int kb, double seconds) throws Exception {
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
                Thread t = new Thread(() -> {
                    while (!stop.get()) {
                        try {
                            p.send(sink.name(), payload);
                        } catch (EndpointException full) {
                            // BLOCK waited its timeout: the consumer is saturated; keep pushing
                        }
                    }
                });
                threads.add(t);
            }
            Thread sampler = new Thread(() -> {
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
            });
            threads.forEach(Thread::start);
            sampler.start();
            Thread.sleep((long) (seconds * 250));
            long before = received.get();
            long start = System.nanoTime();
            Thread.sleep((long) (seconds * 1000));
            long count = received.get() - before;
            double elapsed = (System.nanoTime() - start) / 1e9;
            stop.set(true);
            for (Thread t : threads) {
                t.join(TimeUnit.SECONDS.toMillis(15));
            }
            sampler.join();
            double rate = count / elapsed;
            System.out.printf(Locale.ROOT, "| %d | %d | %,.0f | %,.0f | %,d | %,d |%n", producers, kb, rate,
                    rate * kb / 1024, maxQueued.get(), QUEUE_LIMIT);
        } finally {
            sources.forEach(Producer::close);
        }
    }
}
