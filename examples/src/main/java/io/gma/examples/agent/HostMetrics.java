package io.gma.examples.agent;

import io.gma.tables.Row;
import io.gma.tables.TableSchema;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import oshi.SystemInfo;
import oshi.hardware.CentralProcessor;
import oshi.hardware.CentralProcessor.TickType;
import oshi.hardware.GlobalMemory;
import oshi.hardware.HWDiskStore;
import oshi.hardware.HWPartition;
import oshi.hardware.HardwareAbstractionLayer;
import oshi.hardware.NetworkIF;
import oshi.software.os.FileSystem;
import oshi.software.os.OSFileStore;
import oshi.util.GlobalConfig;
import org.slf4j.LoggerFactory;

/**
 * Samples this machine into rows of the agent's tables ({@link HostTables}): per-CPU and whole-machine CPU time
 * and load, memory and swap, space per local file system with the I/O rate of the disk it is on, and traffic per
 * network interface. It reads the machine through OSHI ({@code com.github.oshi:oshi-core}), which knows Linux,
 * macOS, Windows, the BSDs and more, so the agent is not tied to /proc. Rates and shares of CPU time are the
 * difference with this sampler's previous round, so that two agents in one JVM report the same machine alike;
 * in the first round they are NULL.
 *
 * <p>Not thread-safe: one sampler per agent, called from its timer.
 */
public final class HostMetrics {
    /** One row of one of the agent's tables. */
    public record Sample(String table, Row row) {
    }

    static {
        // OSHI caches what it read for 300 ms by default, so that a round at a shorter interval would see the
        // previous round's CPU ticks and find no time passed; the agent samples at 100 ms at the shortest
        GlobalConfig.set("oshi.util.memoizer.expiration", 50);
    }

    private final String domain;
    private final String host;
    private final TableSchema cpu = HostTables.cpu().build();
    private final TableSchema memory = HostTables.memory().build();
    private final TableSchema disk = HostTables.disk().build();
    private final TableSchema net = HostTables.net().build();
    private final HardwareAbstractionLayer hardware;
    private final FileSystem files;
    private final CentralProcessor processor;
    /** The parts that failed once: logged the first time only, so that a missing one does not fill the log. */
    private final Set<String> failed = new HashSet<>();
    private long[] lastTicks;
    private long[][] lastCoreTicks;
    /** Per disk: bytes read, written, at the previous round. */
    private Map<String, long[]> lastDisks = Map.of();
    /** Per interface: bytes and packets received and sent, at the previous round. */
    private Map<String, long[]> lastNets = Map.of();
    /** System.nanoTime() at the previous round. */
    private long lastAt;
    private boolean first = true;

    /**
     * A sampler for the agent of {@code host} in {@code domain}, the values of the rows' key columns.
     *
     * @throws UnsupportedOperationException on a platform OSHI does not know
     */
    public HostMetrics(String domain, String host) {
        this.domain = domain;
        this.host = host;
        SystemInfo system = new SystemInfo();
        this.hardware = system.getHardware();
        this.files = system.getOperatingSystem().getFileSystem();
        this.processor = hardware.getProcessor();
    }

    /** One round: the rows of every table, in the order host_cpu, host_memory, host_disk, host_net. */
    public List<Sample> sample() {
        long micros = micros(Instant.now());
        long now = System.nanoTime();
        long elapsed = first ? 0 : now - lastAt;
        List<Sample> all = new ArrayList<>();
        part("CPU", () -> cpu(all, micros));
        part("memory", () -> memory(all, micros));
        part("file systems and disks", () -> disks(all, micros, elapsed));
        part("network interfaces", () -> nets(all, micros, elapsed));
        lastAt = now;
        first = false;
        return all;
    }

    /** Runs one part of a round: one that fails leaves the others their rows. */
    private void part(String what, Runnable part) {
        try {
            part.run();
        } catch (RuntimeException | LinkageError e) {
            if (failed.add(what)) {
                LoggerFactory.getLogger(HostMetrics.class).warn("{}: cannot read the {} of this machine: {}", host,
                        what, e.toString());
            }
        }
    }

    private void cpu(List<Sample> all, long micros) {
        long[] ticks = processor.getSystemCpuLoadTicks();
        long[][] coreTicks = processor.getProcessorCpuLoadTicks();
        double[] load = processor.getSystemLoadAverage(3);
        HostTables.Values machine = cpuRow(HostTables.ALL_CPUS, lastTicks == null ? null : shares(lastTicks, ticks),
                micros);
        String[] loads = {"load1", "load5", "load15"};
        for (int i = 0; i < loads.length; i++) {
            machine.put(loads[i], load[i] < 0 ? null : load[i]); // negative: the platform has none
        }
        all.add(new Sample(HostTables.CPU, machine.row()));
        for (int c = 0; c < coreTicks.length; c++) {
            boolean known = lastCoreTicks != null && lastCoreTicks.length == coreTicks.length;
            all.add(new Sample(HostTables.CPU, cpuRow(c, known ? shares(lastCoreTicks[c], coreTicks[c]) : null,
                    micros).row()));
        }
        lastTicks = ticks;
        lastCoreTicks = coreTicks;
    }

    private HostTables.Values cpuRow(long index, double[] shares, long micros) {
        HostTables.Values v = located(cpu).put("cpu", index).put("sampled", micros);
        String[] names = {"busy", "usr", "sys", "iowait", "steal", "idle"};
        for (int i = 0; shares != null && i < names.length; i++) {
            v.put(names[i], shares[i]);
        }
        return v;
    }

    /**
     * The shares of CPU time between two readings of OSHI's tick counters, in percent: busy (all but idle and
     * iowait), usr (user and nice), sys (system, irq and softirq), iowait, steal, idle; the last five add up to
     * 100. Null when no time passed or a counter went backwards.
     */
    static double[] shares(long[] before, long[] now) {
        long[] d = new long[TickType.values().length];
        long total = 0;
        for (TickType t : TickType.values()) {
            int i = t.getIndex();
            d[i] = now[i] - before[i];
            if (d[i] < 0) {
                return null;
            }
            total += d[i];
        }
        if (total <= 0) {
            return null;
        }
        double usr = d[TickType.USER.getIndex()] + d[TickType.NICE.getIndex()];
        double sys = d[TickType.SYSTEM.getIndex()] + d[TickType.IRQ.getIndex()] + d[TickType.SOFTIRQ.getIndex()];
        double iowait = d[TickType.IOWAIT.getIndex()];
        double steal = d[TickType.STEAL.getIndex()];
        double idle = d[TickType.IDLE.getIndex()];
        double busy = total - idle - iowait;
        return new double[] {100 * busy / total, 100 * usr / total, 100 * sys / total, 100 * iowait / total,
            100 * steal / total, 100 * idle / total};
    }

    private void memory(List<Sample> all, long micros) {
        GlobalMemory m = hardware.getMemory();
        long total = m.getTotal();
        long available = m.getAvailable();
        all.add(new Sample(HostTables.MEMORY, located(memory).put("total", total).put("available", available)
                .put("used", total - available).put("used_pct", total > 0 ? 100.0 * (total - available) / total : null)
                .put("swap_total", m.getVirtualMemory().getSwapTotal())
                .put("swap_used", m.getVirtualMemory().getSwapUsed()).put("sampled", micros).row()));
    }

    private void disks(List<Sample> all, long micros, long elapsed) {
        List<HWDiskStore> stores = hardware.getDiskStores(); // read now: their counters are this round's
        Map<String, long[]> counters = new HashMap<>();
        for (HWDiskStore d : stores) {
            counters.put(d.getName(), new long[] {d.getReadBytes(), d.getWriteBytes()});
        }
        for (OSFileStore fs : files.getFileStores(true)) {
            long total = fs.getTotalSpace();
            if (total <= 0) {
                continue; // nothing to store: a pseudo file system
            }
            long usable = fs.getUsableSpace();
            long used = total - fs.getFreeSpace();
            HostTables.Values v = located(disk).put("mount", fs.getMount()).put("volume", fs.getVolume())
                    .put("fs_type", fs.getType()).put("total", total).put("free", usable)
                    // as df: used over what users may have, the root's reserve left out
                    .put("used_pct", used + usable > 0 ? 100.0 * used / (used + usable) : null)
                    .put("sampled", micros);
            String on = diskOf(fs, stores);
            if (on != null) {
                long[] now = counters.get(on);
                long[] before = lastDisks.get(on);
                v.put("disk", on);
                if (before != null) {
                    v.put("read_bytes_s", perSecond(before[0], now[0], elapsed))
                            .put("write_bytes_s", perSecond(before[1], now[1], elapsed));
                }
            }
            all.add(new Sample(HostTables.DISK, v.row()));
        }
        lastDisks = counters;
    }

    /**
     * The disk a file system is on: the one whose device is its volume, or which has a partition that is its
     * volume or is mounted where it is; null when none is (a network or virtual file system).
     */
    static String diskOf(OSFileStore fs, List<HWDiskStore> disks) {
        String volume = fs.getVolume();
        String mount = fs.getMount();
        boolean named = volume != null && !volume.isEmpty();
        for (HWDiskStore d : disks) {
            if (named && volume.equals(d.getName())) {
                return d.getName();
            }
            for (HWPartition p : d.getPartitions()) {
                if (named && volume.equals(p.getIdentification())
                        || mount != null && !mount.isEmpty() && mount.equals(p.getMountPoint())) {
                    return d.getName();
                }
            }
        }
        return null;
    }

    private void nets(List<Sample> all, long micros, long elapsed) {
        Map<String, long[]> counters = new HashMap<>();
        for (NetworkIF n : hardware.getNetworkIFs()) { // loopback left out; read now: this round's counters
            long[] now = {n.getBytesRecv(), n.getBytesSent(), n.getPacketsRecv(), n.getPacketsSent()};
            counters.put(n.getName(), now);
            HostTables.Values v = located(net).put("iface", n.getName())
                    .put("up", n.getIfOperStatus() == NetworkIF.IfOperStatus.UP)
                    .put("speed", n.getSpeed() > 0 ? n.getSpeed() : null).put("sampled", micros);
            long[] before = lastNets.get(n.getName());
            if (before != null) {
                v.put("rx_bytes_s", perSecond(before[0], now[0], elapsed))
                        .put("tx_bytes_s", perSecond(before[1], now[1], elapsed))
                        .put("rx_packets_s", perSecond(before[2], now[2], elapsed))
                        .put("tx_packets_s", perSecond(before[3], now[3], elapsed));
            }
            all.add(new Sample(HostTables.NET, v.row()));
        }
        lastNets = counters;
    }

    /**
     * How fast a counter grew, per second, over {@code nanos}; null when no time passed or it went backwards (it
     * was reset, or wrapped).
     */
    static Double perSecond(long before, long now, long nanos) {
        if (nanos <= 0 || now < before) {
            return null;
        }
        return (now - before) * 1e9 / nanos;
    }

    private HostTables.Values located(TableSchema schema) {
        return new HostTables.Values(schema).put("domain", domain).put("host", host);
    }

    /** Microseconds since the epoch, as a TIMESTAMP holds it. */
    static long micros(Instant t) {
        return Math.addExact(Math.multiplyExact(t.getEpochSecond(), 1_000_000L), t.getNano() / 1000);
    }
}
