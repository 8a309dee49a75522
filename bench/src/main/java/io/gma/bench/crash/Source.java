package io.gma.bench.crash;

import io.gma.client.EndpointException;
import io.gma.client.FullQueuePolicy;
import io.gma.client.Producer;
import io.gma.client.Sent;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

/**
 * The producer of a crash run, a process of its own: sends messages numbered 1, 2, 3 ... (the number in the first
 * 8 bytes) to one destination through its domain's PC servlet, with BLOCK, at a steady rate, until it reads
 * {@code stop} on its standard input; then waits until every send is acknowledged or failed, and says which
 * failed. What it prints:
 *
 * <pre>
 *   source NAME                        registered, sending
 *   progress sent=N acked=A            every half second
 *   failed N CODE                      each send that failed (after stop)
 *   done sent=N acked=A failed=F       the end; every other number was acknowledged
 * </pre>
 *
 * {@code java ... Source REGISTRY DOMAIN PC_UPLINK DESTINATION SIZE RATE} (RATE messages per second, 0: flat out).
 */
public final class Source {
    /** Set once {@code stop} is read (or standard input closes). */
    private static volatile boolean stop;

    private Source() {
    }

    public static void main(String[] args) throws Exception {
        String registry = args[0];
        String domain = args[1];
        String pc = args[2];
        String to = args[3];
        int size = Integer.parseInt(args[4]);
        int rate = Integer.parseInt(args[5]);
        AtomicLong acked = new AtomicLong();
        Map<Long, String> failed = new TreeMap<>();
        Thread stdin = new Thread(() -> {
            try (BufferedReader r = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
                for (String line; (line = r.readLine()) != null;) {
                    if (line.trim().equals("stop")) {
                        break;
                    }
                }
            } catch (Exception ignored) {
                // stdin closed: stop too
            }
            stop = true;
        }, "source-stdin");
        stdin.setDaemon(true);
        stdin.start();
        try (Producer p = Producer.builder().registry(registry).domain(domain).label("source").pcServlet(pc)
                .fullQueuePolicy(FullQueuePolicy.BLOCK).blockTimeout(Duration.ofMinutes(10)).build()) {
            System.out.println("source " + p.name());
            long sent = 0;
            long start = System.nanoTime();
            long nextProgress = start;
            while (!stop) {
                long n = sent + 1;
                byte[] data = new byte[size];
                ByteBuffer.wrap(data).putLong(n);
                Sent s;
                try {
                    s = p.send(to, data);
                } catch (EndpointException e) {
                    synchronized (failed) {
                        failed.put(n, e.code().name());
                    }
                    sent = n;
                    continue;
                }
                sent = n;
                s.acknowledged().whenComplete((ok, e) -> {
                    if (e == null) {
                        acked.incrementAndGet();
                    } else {
                        Throwable cause = e.getCause() != null ? e.getCause() : e;
                        synchronized (failed) {
                            failed.put(n, cause instanceof EndpointException ee ? ee.code().name()
                                    : cause.toString());
                        }
                    }
                });
                long now = System.nanoTime();
                if (now - nextProgress >= 0) {
                    System.out.println("progress sent=" + sent + " acked=" + acked.get());
                    nextProgress = now + TimeUnit.MILLISECONDS.toNanos(500);
                }
                if (rate > 0) {
                    long due = start + sent * 1_000_000_000L / rate;
                    while (System.nanoTime() - due < 0) {
                        LockSupport.parkNanos(Math.max(10_000, due - System.nanoTime()));
                    }
                }
            }
            // every future completes: acknowledged, or failed (a send queue resends until one or the other)
            long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(5);
            while (acked.get() + failedCount(failed) < sent && System.nanoTime() - deadline < 0) {
                System.out.println("progress sent=" + sent + " acked=" + acked.get());
                Thread.sleep(500);
            }
            synchronized (failed) {
                failed.forEach((n, code) -> System.out.println("failed " + n + " " + code));
            }
            System.out.println("done sent=" + sent + " acked=" + acked.get() + " failed=" + failedCount(failed));
        }
    }

    private static int failedCount(Map<Long, String> failed) {
        synchronized (failed) {
            return failed.size();
        }
    }
}
