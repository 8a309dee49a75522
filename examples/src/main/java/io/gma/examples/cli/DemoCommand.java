package io.gma.examples.cli;

import java.io.PrintWriter;
import java.time.Duration;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code gma demo}. */
@Command(name = "demo", mixinStandardHelpOptions = true,
        header = "The all-in-one demo: three domains, agents and a live collector.",
        description = "Runs the all-in-one demo in this process, on loopback and ephemeral ports: a registry;"
                + " three domains with their PC servlets (cardiff, swansea, and bangor, which is outbound-only"
                + " and relayed by cardiff); grid monitoring agents in cardiff and bangor publishing this"
                + " machine's load, CPU, memory, disk and network counters; and a collector in swansea that"
                + " finds the agents with an SQL query, subscribes, and shows the latest values with their age"
                + " and route. Until Ctrl-C, or --duration.")
final class DemoCommand implements Callable<Integer> {
    @Option(names = "--duration", paramLabel = "SECONDS", defaultValue = "0",
            description = "Stop after this many seconds; 0 runs until Ctrl-C (default"
                    + " ${DEFAULT-VALUE}).")
    long duration;

    @Option(names = "--interval", paramLabel = "MILLIS", defaultValue = "1000",
            description = "How often agents sample (default ${DEFAULT-VALUE}).")
    long interval;

    @Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() throws Exception {
        Gma.check(spec, duration >= 0, "--duration " + duration + " is negative");
        Gma.check(spec, interval >= 100 && interval <= 60_000, "--interval " + interval
                + " is outside 100..60000 ms");
        PrintWriter out = spec.commandLine().getOut();
        Demo demo = Demo.start(Duration.ofMillis(interval));
        boolean ansi = System.console() != null;
        if (!ansi) {
            out.println(demo.describe());
        }
        Running.until(duration, () -> demo.show(out, duration == 0 ? null : Duration.ofSeconds(duration),
                Duration.ofSeconds(1), ansi), demo);
        return 0;
    }
}
