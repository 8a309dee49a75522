package io.gma.examples.cli;

import io.gma.cli.Cli;
import io.gma.cli.DurationOption;
import io.gma.cli.Running;
import io.gma.client.Producer;
import io.gma.examples.agent.Agent;
import java.time.Duration;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code gma agent}. */
@Command(name = "agent", mixinStandardHelpOptions = true,
        header = "The grid monitoring agent: this machine's metrics as tables.",
        description = "The grid monitoring agent: a producer (attributes role=agent, host) that declares the"
                + " monitoring tables host_cpu (per CPU, and cpu -1 for the whole machine), host_memory, host_disk"
                + " (per file system) and host_net (per interface), with the predicate domain = '<domain>' AND host"
                + " = '<host>', and every interval samples this machine (with OSHI) and inserts their rows. Ask"
                + " them with gma select. Until Ctrl-C (or --duration).")
final class AgentCommand implements Callable<Integer> {
    @Mixin
    EndpointOptions endpoint;

    @Option(names = "--host", description = "The host name it reports (default this machine's).")
    String host;

    @Option(names = "--interval", paramLabel = "MILLIS", defaultValue = "5000",
            description = "How often it samples (default ${DEFAULT-VALUE}); a row stays the latest of its key for"
                    + " three intervals, at least 10 s.")
    long interval;

    @Mixin
    MetricsOption metrics;

    @Mixin
    DurationOption duration;

    @Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() throws Exception {
        Cli.check(spec, interval >= 100, "--interval " + interval + " is under 100 ms");
        Agent agent = Agent.start(metrics.apply(endpoint.apply(Producer.builder(), spec), spec, endpoint),
                host != null ? host : Agent.localHost(), Duration.ofMillis(interval));
        return Running.until(duration.seconds(), () -> {
            spec.commandLine().getOut().println("agent is " + agent.name());
            MetricsOption.print(agent.metricsUrl(), spec.commandLine().getOut());
        }, null, agent);
    }
}
