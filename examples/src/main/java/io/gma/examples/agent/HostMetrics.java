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
 * Not thread-safe: one sampler per agent (network rates come from the previous sample).
 */
public final class HostMetrics {
    /** One measurement. */
    public record Sample(String metric, double value, String unit) {
    }

    private final com.sun.management.OperatingSystemMXBean os = (com.sun.management.OperatingSystemMXBean)
            ManagementFactory.getOperatingSystemMXBean();
    private final Path netDev;
    private final File disk;
    private long lastRx = -1;
    private long lastTx = -1;
    private long lastAt;

    public HostMetrics() {
        this(Path.of("/proc/net/dev"), new File("/"));
    }

    HostMetrics(Path netDev, File disk) {
        this.netDev = netDev;
        this.disk = disk;
    }

    /** Samples now. */
    public List<Sample> sample() {
        List<Sample> all = new ArrayList<>();
        double load = os.getSystemLoadAverage();
        if (load >= 0) {
            all.add(new Sample("load1", load, ""));
        }
        double cpu = os.getCpuLoad();
        if (cpu >= 0) {
            all.add(new Sample("cpu", 100 * cpu, "%"));
        }
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
