package io.gma.examples.agent;

import java.io.File;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Samples this machine: load, CPU, memory, disk and network counters, as the JVM and /proc show them. A
 * metric the platform does not offer (no /proc/net/dev off Linux, no load average on Windows) is left out.
 * Not thread-safe: one sampler per agent. CPU and network rates come from the difference with this sampler's
 * previous sample (/proc/stat, /proc/net/dev), so that two agents in one JVM report the same machine alike; the
 * JVM's {@code getCpuLoad()}, used only where /proc/stat is missing, measures since whichever caller asked
 * last.
 */
public final class HostMetrics {
    /** One measurement. */
    public record Sample(String metric, double value, String unit) {
    }

    private final com.sun.management.OperatingSystemMXBean os = (com.sun.management.OperatingSystemMXBean)
            ManagementFactory.getOperatingSystemMXBean();
    private final Path netDev;
    private final Path procStat;
    private final File disk;
    private long lastBusy = -1;
    private long lastTotal = -1;
    private long lastRx = -1;
    private long lastTx = -1;
    private long lastAt;

    public HostMetrics() {
        this(Path.of("/proc/net/dev"), Path.of("/proc/stat"), new File("/"));
    }

    HostMetrics(Path netDev, Path procStat, File disk) {
        this.netDev = netDev;
        this.procStat = procStat;
        this.disk = disk;
    }

    /** Samples now. */
    public List<Sample> sample() {
        List<Sample> all = new ArrayList<>();
        double load = os.getSystemLoadAverage();
        if (load >= 0) {
            all.add(new Sample("load1", load, ""));
        }
        cpu(all);
        long total = os.getTotalMemorySize();
        if (total > 0) {
            all.add(new Sample("memory.used", 100.0 * (total - os.getFreeMemorySize()) / total, "%"));
        }
        long usable = disk.getUsableSpace();
        if (usable > 0) {
            all.add(new Sample("disk.free", usable / (1024.0 * 1024 * 1024), "GiB"));
        }
        network(all);
        return all;
    }

    /**
     * The share of CPU time busy since the previous sample, from the second sample on: all CPUs' time in
     * /proc/stat's first line, idle and iowait counting as not busy.
     */
    private void cpu(List<Sample> all) {
        long busy;
        long total = 0;
        try {
            String[] f = Files.readAllLines(procStat).get(0).trim().split("\\s+");
            if (!f[0].equals("cpu") || f.length < 6) {
                throw new IllegalStateException("not /proc/stat");
            }
            for (int i = 1; i < Math.min(f.length, 9); i++) { // user..steal; guest time is in user already
                total += Long.parseLong(f[i]);
            }
            busy = total - Long.parseLong(f[4]) - Long.parseLong(f[5]);
        } catch (IOException | RuntimeException unavailable) {
            double cpu = os.getCpuLoad(); // not Linux: the JVM's figure
            if (cpu >= 0) {
                all.add(new Sample("cpu", 100 * cpu, "%"));
            }
            return;
        }
        if (lastTotal >= 0 && total > lastTotal) {
            all.add(new Sample("cpu", 100.0 * Math.max(0, busy - lastBusy) / (total - lastTotal), "%"));
        }
        lastBusy = busy;
        lastTotal = total;
    }

    /** Bytes per second in and out over all interfaces but loopback, from the second sample on. */
    private void network(List<Sample> all) {
        long rx = 0;
        long tx = 0;
        try {
            for (String line : Files.readAllLines(netDev)) {
                int colon = line.indexOf(':');
                if (colon < 0 || line.substring(0, colon).trim().equals("lo")) {
                    continue;
                }
                String[] f = line.substring(colon + 1).trim().split("\\s+");
                rx += Long.parseLong(f[0]);
                tx += Long.parseLong(f[8]);
            }
        } catch (IOException | RuntimeException unavailable) {
            return; // not Linux, or not readable here
        }
        long now = System.nanoTime();
        if (lastRx >= 0 && now > lastAt) {
            double seconds = (now - lastAt) / 1e9;
            all.add(new Sample("net.in", Math.max(0, rx - lastRx) / seconds, "B/s"));
            all.add(new Sample("net.out", Math.max(0, tx - lastTx) / seconds, "B/s"));
        }
        lastRx = rx;
        lastTx = tx;
        lastAt = now;
    }
}
