package io.gma.pcservlet;

import io.gma.cli.Cli;
import io.gma.cli.DurationOption;
import io.gma.cli.RegistryOption;
import io.gma.cli.Running;
import io.gma.cli.SecurityOptions;
import io.gma.security.Security;
import java.time.Duration;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code gma pc}, and {@code java -jar gma-pcservlet.jar}: the same command, its options and its defaults
 * (flags, then {@code GMA_PC_*} and {@code GMA_*} variables, then {@code pc.*} keys of the properties file), run
 * by {@link Cli}. The jar's manifest names this class, whose {@link #main} sets the log format first.
 */
@Command(name = "pc", mixinStandardHelpOptions = true, header = "Runs the PC servlet of a domain.",
        description = "Runs the PC servlet of a domain until Ctrl-C (or --duration): its endpoints open uplinks"
                + " to it (--pc HOST:UPLINK-PORT), and it tunnels their traffic to other domains by HTTP POST.")
public final class PcCommand implements Callable<Integer> {
    /** What the jar is called in its help and usage errors. */
    static final String JAR = "java -jar gma-pcservlet.jar";

    @Option(names = "--domain", description = "The domain served (required).")
    String domain;

    @Mixin
    RegistryOption registry;

    @Option(names = "--host", defaultValue = "127.0.0.1", description = "Address both listeners bind (default"
            + " ${DEFAULT-VALUE}).")
    String host;

    @Option(names = "--http-port", defaultValue = "8081", description = "HTTP port (default ${DEFAULT-VALUE}).")
    int httpPort;

    @Option(names = "--uplink-port", defaultValue = "8082", description = "Uplink port (default"
            + " ${DEFAULT-VALUE}).")
    int uplinkPort;

    @Option(names = "--via", paramLabel = "DOMAIN", description = "Outbound-only: post to and poll DOMAIN's PC"
            + " servlet, which relays.")
    String via;

    @Option(names = "--url", description = "The URL registered for the domain (default http://HOST:HTTP-PORT).")
    String url;

    @Option(names = "--max-queued-bytes", paramLabel = "N", defaultValue = "8388608",
            description = "Each destination domain's queue, in bytes (default ${DEFAULT-VALUE}).")
    long maxQueuedBytes;

    @Option(names = "--max-queued-messages", paramLabel = "N", defaultValue = "65536",
            description = "Each destination domain's queue, in messages (default ${DEFAULT-VALUE}).")
    int maxQueuedMessages;

    @Option(names = "--max-total-bytes", paramLabel = "N", defaultValue = "67108864",
            description = "All domain queues together, in bytes (default ${DEFAULT-VALUE}).")
    long maxTotalBytes;

    @Option(names = "--max-endpoint-bytes", paramLabel = "N", defaultValue = "8388608",
            description = "Each endpoint's queue of messages from other domains, in bytes (default"
                    + " ${DEFAULT-VALUE}).")
    long maxEndpointBytes;

    @Option(names = "--max-batch-bytes", paramLabel = "N", defaultValue = "16777216",
            description = "Largest POST body sent or accepted (default ${DEFAULT-VALUE}).")
    int maxBatchBytes;

    @Option(names = "--linger-ms", paramLabel = "MS", defaultValue = "0",
            description = "How long a batch waits for more messages (default ${DEFAULT-VALUE}: batches form while"
                    + " the previous POST is in flight).")
    int lingerMs;

    @Option(names = "--drain-seconds", paramLabel = "SECONDS", defaultValue = "5",
            description = "How long stopping waits for queues to drain (default ${DEFAULT-VALUE}).")
    int drainSeconds;

    @Mixin
    SecurityOptions security;

    @Mixin
    DurationOption duration;

    @Spec
    CommandLine.Model.CommandSpec spec;

    /** {@code java -jar gma-pcservlet.jar --domain DOMAIN [options]}: runs until stopped (Ctrl-C) or --duration. */
    public static void main(String[] args) {
        Cli.quietLogging(false);
        Cli.exit("gma-pcservlet", standalone(), args);
    }

    /** This command as the program {@code java -jar gma-pcservlet.jar}, for {@link Cli#run}. */
    static CommandLine standalone() {
        return Cli.standalone(new PcCommand(), JAR);
    }

    @Override
    public Integer call() throws Exception {
        PcServer pc = configured().start();
        spec.commandLine().getOut().println("GMA PC servlet of " + pc.domain() + (via == null ? " at " + pc.url()
                : " (outbound-only, via " + via + ")") + ", uplinks at " + pc.uplink());
        Running.until(duration.seconds(), null, pc);
        return 0;
    }

    /**
     * The PC servlet these options describe, not started.
     *
     * @throws CommandLine.ParameterException naming the option or value that is wrong
     */
    PcServer.Builder configured() {
        Cli.check(spec, domain != null, "--domain is required (or GMA_PC_DOMAIN, GMA_DOMAIN, pc.domain)");
        Security secure = security.security(spec, domain, host);
        registry.requireSecure(spec, secure);
        try {
            PcServer.Builder b = PcServer.builder(domain, registry.url()).host(host).httpPort(httpPort)
                    .uplinkPort(uplinkPort).maxQueuedBytes(maxQueuedBytes).maxQueuedMessages(maxQueuedMessages)
                    .maxTotalBytes(maxTotalBytes).maxEndpointBytes(maxEndpointBytes).maxBatchBytes(maxBatchBytes)
                    .linger(Duration.ofMillis(lingerMs)).drainTimeout(Duration.ofSeconds(drainSeconds))
                    .security(secure);
            if (via != null) {
                b.via(via);
            }
            if (url != null) {
                b.publicUrl(url);
            }
            return b;
        } catch (IllegalArgumentException bad) {
            throw new CommandLine.ParameterException(spec.commandLine(), bad.getMessage());
        }
    }
}
