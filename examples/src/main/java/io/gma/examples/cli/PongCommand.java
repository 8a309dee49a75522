package io.gma.examples.cli;

import io.gma.cli.DurationOption;
import io.gma.cli.Running;
import io.gma.client.Producer;
import io.gma.examples.Pong;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code gma pong}. */
@Command(name = "pong", mixinStandardHelpOptions = true, header = "The responder ping talks to.",
        description = "The responder gma ping and the latency benchmarks talk to: every REQUEST gets a REPLY"
                + " with the same bytes, every DATA a DATA back. Until Ctrl-C (or --duration).")
final class PongCommand implements Callable<Integer> {
    @Mixin
    EndpointOptions endpoint;

    @Option(names = "--label", defaultValue = "pong", description = "Registered exactly as LABEL@DOMAIN"
            + " (default ${DEFAULT-VALUE}).")
    String label;

    @Mixin
    MetricsOption metrics;

    @Mixin
    DurationOption duration;

    @Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() throws Exception {
        Producer pong = Pong.start(metrics.apply(endpoint.apply(Producer.builder(), spec), spec, endpoint).label(label)
                .exactLabel(true));
        return Running.until(duration.seconds(), () -> {
            spec.commandLine().getOut().println("pong is " + pong.name());
            MetricsOption.print(pong.metricsUrl(), spec.commandLine().getOut());
        }, null, pong);
    }
}
