package io.gma.examples.cli;

import io.gma.cli.Cli;
import io.gma.client.EndpointBuilder;
import java.io.PrintWriter;
import java.net.InetAddress;
import java.net.UnknownHostException;
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

    /**
     * {@code b} serving its metrics where the option says, if it says. A usage error: an address that is not
     * [HOST:]PORT; a wildcard host (this command registers 127.0.0.1 as its host, so the URL would name no
     * address others can reach); a host beyond this machine without --security (where only authenticated callers
     * are answered).
     */
    <T> EndpointBuilder<T> apply(EndpointBuilder<T> b, CommandLine.Model.CommandSpec spec, EndpointOptions endpoint) {
        if (address == null) {
            return b;
        }
        try {
            b.metrics(address);
        } catch (IllegalArgumentException e) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--metrics-port " + address
                    + " is not [HOST:]PORT with PORT 0..65535");
        }
        int colon = address.lastIndexOf(':');
        if (colon > 0) {
            String host = address.substring(0, colon).replace("[", "").replace("]", "");
            InetAddress at;
            try {
                at = InetAddress.getByName(host);
            } catch (UnknownHostException e) {
                throw new CommandLine.ParameterException(spec.commandLine(), "--metrics-port " + address + ": host "
                        + host + " is not known here");
            }
            Cli.check(spec, !at.isAnyLocalAddress(), "--metrics-port " + address + ": give the address others reach"
                    + " this machine at, not a wildcard (the URL registered must name one)");
            Cli.check(spec, at.isLoopbackAddress() || endpoint.security(spec).authenticates(), "--metrics-port "
                    + address + " listens beyond this machine, where only authenticated callers are answered: give"
                    + " --security DIR, or a PORT alone (127.0.0.1)");
        }
        return b;
    }

    /** Says where the endpoint serves its metrics, when it does ({@code url} empty: nowhere). */
    static void print(Optional<String> url, PrintWriter out) {
        url.ifPresent(u -> out.println("metrics at " + u));
    }
}
