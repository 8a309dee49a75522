package io.gma.bench;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;

/** What the run ran on, for the summary: CPU, cores, memory, OS, JDK, JVM flags, and the load when it began. */
final class Machine {
    private Machine() {
    }

    /** Markdown bullet lines. */
    static List<String> describe() {
        Runtime rt = Runtime.getRuntime();
        var os = ManagementFactory.getOperatingSystemMXBean();
        long memory = os instanceof com.sun.management.OperatingSystemMXBean sun ? sun.getTotalMemorySize() : -1;
        // the launcher's own properties (gma.home, gma.command) are no tuning: left out
        List<String> flags = ManagementFactory.getRuntimeMXBean().getInputArguments().stream()
                .filter(f -> !f.startsWith("-Dgma.")).toList();
        return List.of(
                String.format(Locale.ROOT, "- CPU: %s, %d cores visible to the JVM; memory %s", cpuModel(),
                        rt.availableProcessors(), memory > 0 ? (memory + (1L << 29)) / (1L << 30) + " GiB" : "unknown"),
                "- OS: " + System.getProperty("os.name") + " " + System.getProperty("os.version") + " ("
                        + System.getProperty("os.arch") + ")",
                "- JDK: " + System.getProperty("java.vm.name") + " " + System.getProperty("java.runtime.version")
                        + "; JVM flags: " + (flags.isEmpty() ? "none" : "`" + String.join(" ", flags) + "`")
                        + "; max heap " + rt.maxMemory() / (1 << 20) + " MiB",
                String.format(Locale.ROOT, "- Load average when the run began: %.2f (1 minute; other work on the"
                        + " machine adds noise)", os.getSystemLoadAverage()));
    }

    private static String cpuModel() {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/cpuinfo"))) {
                if (line.startsWith("model name")) {
                    return line.substring(line.indexOf(':') + 1).trim();
                }
            }
        } catch (IOException | RuntimeException notLinux) {
            // fall through to what the JVM knows
        }
        return System.getProperty("os.arch");
    }
}
