package io.gma.examples.cli;

import io.gma.cli.Cli;
import io.gma.cli.DurationOption;
import io.gma.cli.Running;
import io.gma.client.Consumer;
import java.io.PrintWriter;
import java.math.BigDecimal;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import picocli.CommandLine;
import picocli.CommandLine.Option;

/** What {@code tail} and {@code sub} share: a consumer that follows a query on the registry, and how often. */
final class FollowOption {
    @Option(names = "--refresh", paramLabel = "SECONDS", defaultValue = "2",
            description = "How often the registry is asked again which producers to follow: 0.5 for 500 ms"
                    + " (default ${DEFAULT-VALUE}).")
    BigDecimal refresh;

    @Option(names = "--json", description = "One JSON object a message: {\"time\", \"from\", \"data\"} (\"base64\""
            + " for bytes that are not UTF-8).")
    boolean json;

    /**
     * Runs a consumer labelled {@code label} that follows {@code sql} ({@link Subscriptions}) and prints what
     * arrives in {@code format} (JSON with --json), until Ctrl-C or the duration; notes go to stderr.
     */
    int run(CommandLine.Model.CommandSpec spec, EndpointOptions endpoint, String label, String sql,
            EventPrinter.Format format, DurationOption duration) throws Exception {
        EventPrinter printer = new EventPrinter(spec.commandLine().getOut(), json ? EventPrinter.Format.JSON : format);
        Cli.check(spec, refresh.compareTo(new BigDecimal("0.1")) >= 0 && refresh.compareTo(new BigDecimal(3600))
                <= 0, "--refresh " + refresh.toPlainString() + " is outside 0.1..3600 seconds");
        PrintWriter err = spec.commandLine().getErr();
        Consumer consumer = endpoint.apply(Consumer.builder(), spec).label(label)
                .onMessage(printer).build();
        Subscriptions[] subscriptions = {null};
        AutoCloseable rounds = () -> {
            if (subscriptions[0] != null) {
                subscriptions[0].close();
            }
        };
        // all in the command's run, so that a signal from its first line on stops it cleanly
        return Running.until(duration.seconds(), () -> note(err, label + " is " + consumer.name()), () -> {
            try {
                subscriptions[0] = new Subscriptions(consumer, sql, Duration.ofMillis(refresh.movePointRight(3)
                        .longValue()), note -> note(err, label + ": " + note));
            } catch (IllegalArgumentException notNames) {
                throw new CommandLine.ParameterException(spec.commandLine(), notNames.getMessage());
            }
            if (duration.seconds() > 0) {
                Thread.sleep(duration.seconds() * 1000);
            } else {
                new CountDownLatch(1).await();
            }
        }, consumer, rounds);
    }

    private static void note(PrintWriter err, String line) {
        synchronized (err) {
            err.println(line);
            err.flush();
        }
    }
}
