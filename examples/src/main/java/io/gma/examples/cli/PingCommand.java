package io.gma.examples.cli;

import io.gma.cli.Cli;
import io.gma.cli.Running;
import io.gma.client.EndpointException;
import io.gma.examples.Ping;
import java.io.PrintWriter;
import java.math.BigDecimal;
import java.time.Duration;
import java.util.Arrays;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code gma ping <name>}: as ping(8) does it. A line a round trip; a reply that does not come within the timeout,
 * or a round trip that fails (the pong gone: NO_ROUTE), is counted lost and the next goes on; Ctrl-C ends it with
 * the counts as they are. Everything is in milliseconds. Exit 0 when every reply came, 1 when any was lost.
 */
@Command(name = "ping", mixinStandardHelpOptions = true, header = "Ping-pong with an endpoint, printing round trips.",
        description = "Ping-pong with an endpoint (gma pong answers), as ping(8) does with a host: a round trip a"
                + " line, lost replies counted, and the statistics at the end or at Ctrl-C. Exit status 0 when every"
                + " reply came, 1 when any was lost, 2 for a usage error.")
final class PingCommand implements Callable<Integer> {
    @Parameters(paramLabel = "NAME", description = "The endpoint's full name, such as pong@lan (gma query lists"
            + " them).")
    String target;

    @Mixin
    EndpointOptions endpoint;

    @Option(names = {"-c", "--count"}, defaultValue = "10", description = "Round trips (default ${DEFAULT-VALUE}).")
    int count;

    @Option(names = {"-s", "--size"}, defaultValue = "64", description = "Bytes of data (default"
            + " ${DEFAULT-VALUE}).")
    int size;

    @Option(names = {"-i", "--interval"}, paramLabel = "SECONDS", defaultValue = "1",
            description = "Seconds between round trips, as ping(8): 0.2 for 200 ms, 0 for none (default"
                    + " ${DEFAULT-VALUE}).")
    BigDecimal interval;

    @Option(names = {"-W", "--timeout"}, paramLabel = "SECONDS", defaultValue = "5",
            description = "Seconds to wait for each reply before it counts as lost (default ${DEFAULT-VALUE}).")
    BigDecimal timeout;

    @Option(names = "--nonblocking", description = "DATA answered by DATA, rather than REQUEST by REPLY.")
    boolean nonblocking;

    @Spec
    CommandLine.Model.CommandSpec spec;

    /** What one run counted: kept as it goes, so that an interruption reports what was. */
    private int transmitted;
    private int received;
    private long[] rtt;

    @Override
    public Integer call() throws Exception {
        Cli.check(spec, count >= 1, "--count " + count + " is under 1");
        Cli.check(spec, size >= 0 && size <= 16 << 20, "--size " + size + " is outside 0..16777216");
        Cli.check(spec, interval.signum() >= 0, "--interval " + interval.toPlainString() + " is negative");
        Cli.check(spec, timeout.signum() > 0, "--timeout " + timeout.toPlainString() + " is not above 0");
        endpoint.fullName(spec, "NAME", target);
        long pauseMillis = millis(interval);
        Duration wait = Duration.ofMillis(Math.max(1, millis(timeout)));
        PrintWriter out = spec.commandLine().getOut();
        Ping ping = Ping.start(endpoint.registry.url(), endpoint.domain, endpoint.pc, endpoint.security(spec));
        rtt = new long[count];
        long start = System.nanoTime();
        // through Running: Ctrl-C stops the round trips, and still prints the counts and unregisters
        int stopped = Running.until(0, null, () -> {
            out.printf(Locale.ROOT, "PING %s: %d data bytes%n", target, size);
            try {
                for (int seq = 1; seq <= count; seq++) {
                    transmitted++;
                    roundTrip(ping, out, seq, wait);
                    if (pauseMillis > 0 && seq < count) {
                        Thread.sleep(pauseMillis);
                    }
                }
            } finally {
                statistics(out, System.nanoTime() - start);
            }
        }, ping);
        return stopped == Cli.OK && received == transmitted ? Cli.OK : Cli.FAILED;
    }

    private void roundTrip(Ping ping, PrintWriter out, int seq, Duration wait) throws InterruptedException {
        long took;
        try {
            took = ping.once(target, size, !nonblocking, wait);
        } catch (EndpointException e) {
            out.printf(Locale.ROOT, "from %s: seq=%d lost: %s %s%n", target, seq, e.code(), e.getMessage());
            return;
        }
        if (took < 0) {
            out.printf(Locale.ROOT, "from %s: seq=%d lost: no reply within %s ms%n", target, seq,
                    wait.toMillis());
            return;
        }
        rtt[received++] = took;
        out.printf(Locale.ROOT, "%d bytes from %s: seq=%d time=%.3f ms%n", size, target, seq, took / 1e6);
    }

    /** The closing lines, in ping(8)'s words and milliseconds; percentiles after them. */
    private void statistics(PrintWriter out, long elapsedNanos) {
        out.printf(Locale.ROOT, "--- %s ping statistics ---%n", target);
        out.printf(Locale.ROOT, "%d transmitted, %d received, %s%% loss, time %d ms%n", transmitted, received,
                lossPercent(transmitted, received), elapsedNanos / 1_000_000);
        if (received == 0) {
            return;
        }
        long[] sorted = Arrays.copyOf(rtt, received);
        Arrays.sort(sorted);
        double mean = 0;
        for (long t : sorted) {
            mean += t;
        }
        mean /= received;
        double squares = 0;
        for (long t : sorted) {
            squares += (t - mean) * (t - mean);
        }
        out.printf(Locale.ROOT, "rtt min/avg/max/mdev = %.3f/%.3f/%.3f/%.3f ms%n", sorted[0] / 1e6, mean / 1e6,
                sorted[received - 1] / 1e6, Math.sqrt(squares / received) / 1e6);
        out.printf(Locale.ROOT, "rtt p50/p90/p99 = %.3f/%.3f/%.3f ms%n", rank(sorted, 0.50) / 1e6,
                rank(sorted, 0.90) / 1e6, rank(sorted, 0.99) / 1e6);
    }

    /** The loss as ping(8) prints it: a whole number when it is one, else one decimal. */
    static String lossPercent(int transmitted, int received) {
        if (transmitted == 0) {
            return "0";
        }
        double loss = 100.0 * (transmitted - received) / transmitted;
        return loss == Math.rint(loss) ? Long.toString((long) loss) : String.format(Locale.ROOT, "%.1f", loss);
    }

    /** The nearest-rank percentile of sorted times. */
    private static long rank(long[] sorted, double p) {
        return sorted[Math.max(0, (int) Math.ceil(p * sorted.length) - 1)];
    }

    private static long millis(BigDecimal seconds) {
        return seconds.movePointRight(3).setScale(0, java.math.RoundingMode.HALF_UP).longValueExact();
    }
}
