package io.gma.bench.streaming;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.lang.management.ThreadMXBean;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/**
 * The CPU time each thread spent between this object's making and {@link #perMessage}, for telling which
 * thread limits a stream. Threads are grouped by name without their numbers and the endpoints' nonces
 * ({@code gma-sink-link}, {@code main}); groups that used under 2% of the wall time are left out.
 */
public final class ThreadCpu {
    private final Map<String, Long> before = snapshot();
    private final long start = System.nanoTime();

    /** Starts counting now. */
    public ThreadCpu() {
    }

    private static Map<String, Long> snapshot() {
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        Map<String, Long> cpu = new TreeMap<>();
        for (ThreadInfo t : threads.getThreadInfo(threads.getAllThreadIds())) {
            long nanos = t == null ? -1 : threads.getThreadCpuTime(t.getThreadId());
            if (nanos >= 0) {
                cpu.merge(t.getThreadName().replaceAll("-[a-z0-9]{6}@[^-]*", "").replaceAll("-\\d+$", ""), nanos,
                        Long::sum);
            }
        }
        return cpu;
    }

    /** For example {@code main 110, gma-sink-link 85, gma-source-link 40; total 235, wall 140}: ns per message. */
    public String perMessage(long messages) {
        long wall = System.nanoTime() - start;
        return perMessage(used(), messages, wall);
    }

    /** The CPU each group of threads used since this was made, nanoseconds; groups that used none left out. */
    public Map<String, Long> used() {
        Map<String, Long> used = new TreeMap<>();
        for (Map.Entry<String, Long> e : snapshot().entrySet()) {
            long n = e.getValue() - before.getOrDefault(e.getKey(), 0L);
            if (n > 0) {
                used.put(e.getKey(), n);
            }
        }
        return used;
    }

    /**
     * {@link #perMessage(long)} of CPU {@code used} by each group over {@code wallNanos} (several measurements added
     * up): the groups that used 2% of the wall time or more.
     */
    public static String perMessage(Map<String, Long> used, long messages, long wallNanos) {
        StringBuilder s = new StringBuilder();
        double total = 0;
        for (Map.Entry<String, Long> e : used.entrySet()) {
            if (e.getValue() > wallNanos / 50) {
                s.append(s.length() == 0 ? "" : ", ").append(String.format(Locale.ROOT, "%s %.0f", e.getKey(),
                        e.getValue() / (double) messages));
                total += e.getValue();
            }
        }
        return s + String.format(Locale.ROOT, "; total %.0f, wall %.0f", total / messages,
                wallNanos / (double) messages);
    }
}
