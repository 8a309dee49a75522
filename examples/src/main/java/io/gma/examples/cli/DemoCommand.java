package io.gma.examples.cli;

import io.gma.cli.Cli;
import io.gma.cli.Running;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.stream.Stream;
import java.time.Duration;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code gma demo}. */
@Command(name = "demo", mixinStandardHelpOptions = true,
        header = "The all-in-one demo: three domains, agents, a live collector and an archiver with charts.",
        description = "Runs the all-in-one demo in this process, on loopback and ephemeral ports: a registry;"
                + " three domains with their PC servlets (cardiff, swansea, and bangor, which is outbound-only"
                + " and relayed by cardiff); grid monitoring agents in cardiff and bangor inserting this"
                + " machine's CPU, memory, disk and network figures into monitoring tables (host_cpu, host_memory,"
                + " host_disk, host_net); and a collector in swansea with a continuous query over each table,"
                + " which shows the latest rows with their age and route; and an archiver in cardiff keeping the"
                + " tables' rows for a day (H2 in a temporary directory), whose HTTP listener feeds the dashboard's"
                + " live charts of each table. It prints the dashboard's addresses, and a gma select command line to"
                + " ask the tables yourself. Until Ctrl-C, or --duration.")
final class DemoCommand implements Callable<Integer> {
    @Option(names = "--duration", paramLabel = "SECONDS", defaultValue = "0",
            description = "Stop after this many seconds; 0 runs until Ctrl-C (default"
                    + " ${DEFAULT-VALUE}).")
    long duration;

    @Option(names = "--interval", paramLabel = "MILLIS", defaultValue = "1000",
            description = "How often agents sample (default ${DEFAULT-VALUE}).")
    long interval;

    @Option(names = "--secure", description = "TLS and tokens on every hop, with the demo's rules: a throwaway"
            + " secret, CA and certificates are made in a temporary directory first, with a token to sign in to"
            + " the dashboard, and deleted at the end.")
    boolean secure;

    @Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() throws Exception {
        Cli.check(spec, duration >= 0, "--duration " + duration + " is negative");
        Cli.check(spec, interval >= 100 && interval <= 60_000, "--interval " + interval
                + " is outside 100..60000 ms");
        PrintWriter out = spec.commandLine().getOut();
        Path keys = secure ? Files.createTempDirectory("gma-demo-keys") : null;
        Demo demo;
        try {
            demo = keys == null ? Demo.start(Duration.ofMillis(interval))
                    : Demo.startSecure(Duration.ofMillis(interval), keys);
        } catch (Exception e) {
            deleteAll(keys);
            throw e;
        }
        boolean ansi = System.console() != null;
        return Running.until(duration, ansi ? null : () -> out.println(demo.describe()), () -> demo.show(out,
                duration == 0 ? null : Duration.ofSeconds(duration), Duration.ofSeconds(1), ansi), () -> {
                    demo.close();
                    deleteAll(keys);
                });
    }

    /** Removes the demo's throwaway keys (they hold a secret and a CA's key). */
    private static void deleteAll(Path dir) throws IOException {
        if (dir == null) {
            return;
        }
        try (Stream<Path> files = Files.walk(dir)) {
            for (Path p : files.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        }
    }
}
