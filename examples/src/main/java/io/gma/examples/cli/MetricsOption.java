package io.gma.examples.cli;

import io.gma.client.EndpointBuilder;
import java.io.PrintWriter;
import java.util.Optional;
import picocli.CommandLine;
import picocli.CommandLine.Option;

/**
 * {@code --metrics-port [HOST:]PORT}, of the long-running endpoint commands ({@code pong}, {@code agent}) only:
 * {@link EndpointBuilder#metrics}.
 */
final class MetricsOption {
    @Option(names = "--metrics-port", paramLabel = "[HOST:]PORT",
            description = "Serve the endpoint's counters at http://HOST:PORT/metrics (https with the TLS of"
                    + " --security) in the Prometheus text format, and register that URL as its attribute metrics;"
                    + " HOST defaults to 127.0.0.1, PORT 0 takes any free one (default none).")
    String address;

    /** {@code b} serving its metrics where the option says, if it says. */
    <T> EndpointBuilder<T> apply(EndpointBuilder<T> b, CommandLine.Model.CommandSpec spec) {
        if (address != null) {
            try {
                b.metrics(address);
            } catch (IllegalArgumentException e) {
                throw new CommandLine.ParameterException(spec.commandLine(), "--metrics-port " + address
                        + " is not [HOST:]PORT with PORT 0..65535");
            }
        }
        return b;
    }

    /** Says where the endpoint serves its metrics, when it does ({@code url} empty: nowhere). */
    static void print(Optional<String> url, PrintWriter out) {
        url.ifPresent(u -> out.println("metrics at " + u));
    }
}
