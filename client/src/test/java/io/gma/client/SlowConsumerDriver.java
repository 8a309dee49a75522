package io.gma.client;

import io.gma.wire.ErrorCode;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Runs in a forked JVM with a small heap: one producer per policy sends 1 KB messages flat out to its slow
 * consumer for the given seconds, sampling its queue, then prints one line per policy for the test to check.
 *
 * <pre>SlowConsumerDriver REGISTRY_URL SECONDS BLOCK=name FAIL=name DROP_OLDEST=name</pre>
 */
final class SlowConsumerDriver {
    static final long LIMIT = 1 << 20;

    private SlowConsumerDriver() {
    }

    public static void main(String[] args) throws Exception {
        String registry = args[0];
        long seconds = Long.parseLong(args[1]);
        List<Thread> threads = new ArrayList<>();
        List<String> lines = java.util.Collections.synchronizedList(new ArrayList<>());
        for (int i = 2; i < args.length; i++) {
            FullQueuePolicy policy = FullQueuePolicy.valueOf(args[i].substring(0, args[i].indexOf('=')));
            String consumer = args[i].substring(args[i].indexOf('=') + 1);
            Thread t = new Thread(() -> {
                try {
                    lines.add(run(registry, seconds, policy, consumer));
                } catch (Exception e) {
                    lines.add(policy + " failed: " + e);
                }
            });
            threads.add(t);
            t.start();
        }
        for (Thread t : threads) {
            t.join();
        }
        lines.forEach(System.out::println);
        System.out.println("heap max " + Runtime.getRuntime().maxMemory());
    }

    private static String run(String registry, long seconds, FullQueuePolicy policy, String consumer)
            throws Exception {
        try (Producer p = Producer.builder().registry(registry).domain("lan").label("flat-out-" + policy)
                .maxQueuedBytes(LIMIT).fullQueuePolicy(policy).blockTimeout(Duration.ofMillis(500)).build()) {
            AtomicLong maxQueued = new AtomicLong();
            Thread sampler = new Thread(() -> {
                while (!Thread.currentThread().isInterrupted()) {
                    maxQueued.accumulateAndGet(p.stats().queuedBytes(), Math::max);
                    try {
                        Thread.sleep(5); // a deliberate pause, not a wait: the queue is sampled every 5 ms
                    } catch (InterruptedException e) {
                        return;
                    }
                }
            });
            sampler.start();
            byte[] kb = new byte[1024];
            long sent = 0;
            long full = 0;
            long shortestFullMillis = Long.MAX_VALUE;
            long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
            while (System.nanoTime() < end) {
                long started = System.nanoTime();
                try {
                    p.send(consumer, kb);
                    sent++;
                } catch (EndpointException e) {
                    if (e.code() != ErrorCode.QUEUE_FULL) {
                        throw e;
                    }
                    full++;
                    shortestFullMillis = Math.min(shortestFullMillis,
                            TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started));
                }
            }
            sampler.interrupt();
            sampler.join();
            EndpointStats s = p.stats();
            return String.format(Locale.ROOT, "%s maxQueued=%d limit=%d sent=%d full=%d shortestFullMillis=%d"
                    + " waits=%d drops=%d", policy, maxQueued.get(), LIMIT, sent, full,
                    full == 0 ? -1 : shortestFullMillis, s.waits(), s.drops());
        }
    }
}
