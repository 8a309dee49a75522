package io.gma.bench.scale;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;

/**
 * What Linux says of a process at one moment: its threads and resident memory ({@code /proc/PID/status},
 * {@code Threads} and {@code VmRSS}), the CPU time it used so far ({@code /proc/PID/stat}, utime + stime), and
 * its open file descriptors ({@code /proc/PID/fd}).
 *
 * @param threads the process's threads
 * @param rssKib its resident set, KiB
 * @param cpuTicks user and system CPU time, in clock ticks ({@link #TICKS_PER_SECOND} a second)
 * @param fds its open file descriptors (sockets, selectors' epoll and wake-up descriptors, files)
 */
public record ProcSample(int threads, long rssKib, long cpuTicks, int fds) {
    /** USER_HZ, which /proc/PID/stat counts in: 100 on every Linux the JDK runs on (x86, arm64). */
    public static final int TICKS_PER_SECOND = 100;

    /**
     * Reads the process {@code pid} now.
     *
     * @throws IOException if /proc has no such process (it ended) or cannot be read
     */
    public static ProcSample of(long pid) throws IOException {
        int threads = -1;
        long rss = -1;
        for (String line : Files.readAllLines(Path.of("/proc", Long.toString(pid), "status"))) {
            if (line.startsWith("Threads:")) {
                threads = Integer.parseInt(line.substring("Threads:".length()).trim());
            } else if (line.startsWith("VmRSS:")) {
                rss = Long.parseLong(line.substring("VmRSS:".length()).replace("kB", "").trim());
            }
        }
        String stat = Files.readString(Path.of("/proc", Long.toString(pid), "stat"));
        // the command name, in parentheses, may hold spaces: the fields counted after its closing one
        String[] fields = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
        long cpu = Long.parseLong(fields[11]) + Long.parseLong(fields[12]); // fields 14 and 15 of stat(5)
        int fds;
        try (Stream<Path> open = Files.list(Path.of("/proc", Long.toString(pid), "fd"))) {
            fds = (int) open.count();
        }
        return new ProcSample(threads, rss, cpu, fds);
    }

    /** Whether this machine has /proc to read (Linux). */
    public static boolean available() {
        return Files.isReadable(Path.of("/proc/self/status"));
    }
}
