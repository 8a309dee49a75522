package io.gma.examples.cli;

import io.gma.cli.Cli;
import io.gma.client.Consumer;
import io.gma.client.EndpointException;
import java.io.PrintWriter;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/** {@code gma request NAME [DATA]}. */
@Command(name = "request", mixinStandardHelpOptions = true, header = "Sends a request and prints the reply.",
        description = "Sends DATA (or all of stdin) as one REQUEST to the endpoint named and prints its REPLY's data"
                + " on stdout (bytes that are not UTF-8 as base64:...). Exit 0 with a reply; 1 when it answered with an"
                + " ERROR, or none came within --timeout.")
final class RequestCommand implements Callable<Integer> {
    @Parameters(index = "0", paramLabel = "NAME", description = "The endpoint's full name, such as pong@lan.")
    String target;

    @Parameters(index = "1", arity = "0..1", paramLabel = "DATA", description = "The request's data; without it,"
            + " all of stdin.")
    String data;

    @Option(names = {"-W", "--timeout"}, paramLabel = "SECONDS", defaultValue = "5",
            description = "Seconds to wait for the reply (default ${DEFAULT-VALUE}).")
    BigDecimal timeout;

    @Mixin
    EndpointOptions endpoint;

    @Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() throws Exception {
        endpoint.fullName(spec, "NAME", target);
        Cli.check(spec, timeout.signum() > 0, "--timeout " + timeout.toPlainString() + " is not above 0");
        byte[] request = data != null ? data.getBytes(StandardCharsets.UTF_8) : System.in.readAllBytes();
        Duration wait = Duration.ofMillis(Math.max(1, timeout.movePointRight(3).longValue()));
        byte[] reply;
        try (Consumer requester = endpoint.apply(Consumer.builder(), spec).label("request").build()) {
            try {
                reply = requester.request(target, request, wait);
            } catch (EndpointException e) {
                PrintWriter err = spec.commandLine().getErr();
                err.println("gma request: no reply from " + target + ": " + e.code() + " " + e.getMessage());
                err.flush();
                return 1;
            }
        }
        PrintWriter out = spec.commandLine().getOut();
        out.print(EventPrinter.raw(reply));
        out.flush();
        return 0;
    }
}
