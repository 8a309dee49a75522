package io.gma.examples.cli;

import io.gma.cli.Cli;
import io.gma.cli.Running;
import io.gma.examples.Ping;
import java.io.PrintWriter;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/** {@code gma ping <name>}. */
@Command(name = "ping", mixinStandardHelpOptions = true, header = "Ping-pong with an endpoint, printing round trips.",
        description = "Ping-pong with an endpoint (gma pong answers): a round trip a line, as ping(8) prints"
                + " them, and a summary with the percentiles.")
final class PingCommand implements Callable<Integer> {
    @Parameters(paramLabel = "NAME", description = "The endpoint to ping, such as pong@lan.")
    String target;

    @Mixin
    EndpointOptions endpoint;

    @Option(names = {"-c", "--count"}, defaultValue = "10", description = "Round trips (default ${DEFAULT-VALUE}).")
    int count;

    @Option(names = {"-s", "--size"}, defaultValue = "64", description = "Bytes of data (default"
            + " ${DEFAULT-VALUE}).")
    int size;

    @Option(names = {"-i", "--interval"}, paramLabel = "MILLIS", defaultValue = "1000",
            description = "Pause between round trips (default ${DEFAULT-VALUE}).")
    long interval;

    @Option(names = "--nonblocking", description = "DATA answered by DATA, rather than REQUEST by REPLY.")
    boolean nonblocking;

    @Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() throws Exception {
        Cli.check(spec, count >= 1, "--count " + count + " is under 1");
        Cli.check(spec, size >= 0 && size <= 16 << 20, "--size " + size + " is outside 0..16777216");
        Cli.check(spec, interval >= 0, "--interval " + interval + " is negative");
        PrintWriter out = spec.commandLine().getOut();
        Ping ping = Ping.start(endpoint.registry.url(), endpoint.domain, endpoint.pc, endpoint.security(spec));
        // through Running: Ctrl-C stops the round trips and still unregisters the ping endpoint
        Running.until(0, () -> {
            out.printf(Locale.ROOT, "PING %s: %d data bytes%n", target, size);
            long[] rtt = new long[count];
            int done = 0;
            try {
                for (; done < count; done++) {
                    rtt[done] = ping.run(target, 1, size, !nonblocking)[0];
                    out.printf(Locale.ROOT, "%d bytes from %s: seq=%d time=%.3f ms%n", size, target, done + 1,
                            rtt[done] / 1e6);
                    if (interval > 0 && done < count - 1) {
                        Thread.sleep(interval);
                    }
                }
            } finally {
                if (done > 0) {
                    out.printf(Locale.ROOT, "--- %s ping statistics ---%n%s%n", target,
                            Ping.summary(java.util.Arrays.copyOf(rtt, done)));
                }
            }
        }, ping);
        return 0;
    }
}
