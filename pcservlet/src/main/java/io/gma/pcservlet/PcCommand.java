package io.gma.pcservlet;

import io.gma.cli.AgeConverter;
import io.gma.cli.Cli;
import io.gma.cli.DurationOption;
import io.gma.cli.RegistryOption;
import io.gma.cli.Running;
import io.gma.cli.SecurityOptions;
import io.gma.internal.link.IoThreads;
import io.gma.security.HttpProxy;
import io.gma.security.Security;
import io.gma.wire.Name;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.stream.Stream;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
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

    /** Words without an option, such as a domain given without --domain: a usage error that says how. */
    @Parameters(hidden = true)
    List<String> stray;

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

    @Option(names = "--max-batches-in-flight", paramLabel = "N", defaultValue = "1",
            description = "The most batches posted to one domain at once, 1..16, each waiting for its answer while"
                    + " the next go; the destination takes them in order (default ${DEFAULT-VALUE}: one at a time).")
    int maxBatchesInFlight;

    @Option(names = "--compression", paramLabel = "auto|off", defaultValue = "auto",
            description = "auto: batches to other PC servlets, and answers to relayed domains' polls, go compressed"
                    + " (zstd) where the other side reads zstd and it pays; off: all plain (default ${DEFAULT-VALUE}).")
    String compression;

    @Option(names = "--max-links", paramLabel = "N", defaultValue = "10000",
            description = "The most uplinks open at once; past it, an endpoint's uplink is refused with ERROR"
                    + " QUEUE_FULL and tries again after its back-off (default ${DEFAULT-VALUE}). The open-file limit"
                    + " (ulimit -n) must be higher.")
    int maxLinks;

    @Option(names = "--io-threads", paramLabel = "N",
            description = "How many event loops serve the uplinks, 1..1024 (default: the number of cores); each"
                    + " serves many uplinks, so threads do not grow with them.")
    Integer ioThreads;

    @Option(names = "--linger-ms", paramLabel = "MS", defaultValue = "0",
            description = "How long a batch waits for more messages (default ${DEFAULT-VALUE}: batches form while"
                    + " the previous POST is in flight).")
    int lingerMs;

    @Option(names = "--drain-seconds", paramLabel = "SECONDS", defaultValue = "5",
            description = "How long stopping waits for queues to drain (default ${DEFAULT-VALUE}).")
    int drainSeconds;

    @Option(names = "--data-dir", paramLabel = "DIR", description = "The spool: what this PC servlet took, kept"
            + " on disk until the next hop has it, so that a crash or a stop loses nothing (default: a directory"
            + " named after the domain, in the working directory). Restarted on the same directory, it carries on"
            + " from there.")
    Path dataDir;

    @Option(names = "--fsync", paramLabel = "always|batch|never", defaultValue = "batch",
            converter = FsyncConverter.class, description = "When the spool is forced to disk, before what it"
                    + " holds is acknowledged unless the hop ahead took it first: batch (one flush covers every"
                    + " message that came while the one before it ran; while the hop ahead acknowledges, messages"
                    + " wait up to 300 ms for it, and what it took is never written), always (each message), never"
                    + " (a crash of the process loses nothing, a crash of the machine may). Default ${DEFAULT-VALUE}.")
    SpoolOptions.Fsync fsync;

    @Option(names = "--max-spool-bytes", paramLabel = "N", defaultValue = "1073741824",
            description = "The spool's files together, at most; past it, senders are held back as by a full queue"
                    + " (default ${DEFAULT-VALUE}).")
    long maxSpoolBytes;

    @Option(names = "--max-age", paramLabel = "AGE", defaultValue = "0", converter = AgeConverter.class,
            description = "How old a message read back from the spool at start may be: older ones go back to their"
                    + " senders as ERROR TIMEOUT; seconds, or 90s, 15m, 24h, 7d (default ${DEFAULT-VALUE}: any"
                    + " age).")
    Duration maxAge;

    @Option(names = "--memory", description = "No spool: hold messages in memory only, as before the spool; what"
            + " is held is lost if the process dies, and goes back to its senders as ERROR SHUTTING_DOWN if a stop"
            + " cannot deliver it within --drain-seconds.")
    boolean memory;

    @Option(names = "--proxy", paramLabel = "http://HOST:PORT", description = "An HTTP forward proxy for its calls"
            + " to other PC servlets and the registry (https through it by CONNECT), as a corporate firewall has"
            + " them. Default: direct.")
    String proxy;

    @Option(names = "--proxy-user", paramLabel = "NAME", description = "The user --proxy asks for (Basic), with"
            + " the password in --proxy-password-file.")
    String proxyUser;

    @Option(names = "--proxy-password-file", paramLabel = "FILE", description = "The file whose first line is"
            + " --proxy-user's password (kept out of the command line).")
    Path proxyPasswordFile;

    @Option(names = "--no-proxy", paramLabel = "HOSTS", description = "Hosts called directly rather than through"
            + " --proxy, comma-separated as NO_PROXY: * for all, a name for itself and its subdomains, an address.")
    String noProxy;

    @Mixin
    SecurityOptions security;

    @Mixin
    DurationOption duration;

    @Spec
    CommandLine.Model.CommandSpec spec;

    /** {@code always}, {@code batch} or {@code never}, in any case. */
    static final class FsyncConverter implements CommandLine.ITypeConverter<SpoolOptions.Fsync> {
        @Override
        public SpoolOptions.Fsync convert(String value) {
            try {
                return SpoolOptions.Fsync.valueOf(value.trim().toUpperCase(Locale.ROOT));
            } catch (IllegalArgumentException e) {
                throw new CommandLine.TypeConversionException("\"" + value + "\" is not always, batch or never");
            }
        }
    }

    /** {@code java -jar gma-pcservlet.jar --domain DOMAIN [options]}: runs until stopped (Ctrl-C) or --duration. */
    public static void main(String[] args) {
        Cli.quietLogging(false, args);
        Cli.exit("gma-pcservlet", standalone(), args);
    }

    /** This command as the program {@code java -jar gma-pcservlet.jar}, for {@link Cli#run}. */
    static CommandLine standalone() {
        return Cli.standalone(new PcCommand(), JAR);
    }

    /**
     * The HTTP proxy of {@code --proxy}, {@code --proxy-user}, {@code --proxy-password-file} and {@code --no-proxy}
     * (or the init parameters of the same names), or null for none.
     *
     * @throws IllegalArgumentException naming the value that is wrong, or the file that cannot be read
     */
    static HttpProxy proxy(String url, String user, Path passwordFile, String noProxy) {
        if (url == null) {
            if (user != null || passwordFile != null || noProxy != null) {
                throw new IllegalArgumentException("the proxy's user, password file or no-proxy hosts are given"
                        + " without the proxy (--proxy http://HOST:PORT)");
            }
            return null;
        }
        HttpProxy p = HttpProxy.parse(url);
        if ((user == null) != (passwordFile == null)) {
            throw new IllegalArgumentException("the proxy's user and password file go together: give both or"
                    + " neither");
        }
        if (user != null) {
            String password;
            try {
                password = Files.readAllLines(passwordFile).stream().findFirst().orElse("");
            } catch (IOException | java.io.UncheckedIOException e) {
                throw new IllegalArgumentException("the proxy's password file " + passwordFile + " cannot be read: "
                        + e.getMessage());
            }
            if (password.isEmpty()) {
                throw new IllegalArgumentException("the proxy's password file " + passwordFile + " is empty");
            }
            p = p.credentials(user, password);
        }
        return noProxy == null ? p : p.noProxy(noProxy);
    }

    /** The spool's options given on the command line, which {@code --memory} refuses. */
    private String spoolOptionsGiven() {
        return String.join(", ", Stream.of("--data-dir", "--fsync", "--max-spool-bytes", "--max-age")
                .filter(o -> spec.commandLine().getParseResult().hasMatchedOption(o)).toList());
    }

    @Override
    public Integer call() throws Exception {
        PcServer pc = configured().start();
        return Running.until(duration.seconds(), () -> {
            spec.commandLine().getOut().println("GMA PC servlet of " + pc.domain() + (via == null ? " at "
                    + pc.url() : " (outbound-only, via " + via + ")") + ", uplinks at " + pc.uplink());
            spec.commandLine().getOut().println(memory ? "in memory only (--memory): what it holds is lost if the"
                    + " process dies" : "spool in " + (dataDir != null ? dataDir : Path.of(domain)).toAbsolutePath()
                            .normalize() + " (fsync " + fsync.name().toLowerCase(Locale.ROOT) + ")");
        }, null, () -> {
            int left = pc.stop();
            if (left > 0) { // in memory only: with a spool, what is left stays in it for the next start
                throw new IllegalStateException(left + " messages were not delivered within --drain-seconds "
                        + drainSeconds + "; their senders were told (ERROR SHUTTING_DOWN)");
            }
        });
    }

    /**
     * The PC servlet these options describe, not started.
     *
     * @throws CommandLine.ParameterException naming the option or value that is wrong
     */
    PcServer.Builder configured() {
        String word = stray == null || stray.isEmpty() ? null : stray.get(0);
        Cli.check(spec, word == null || domain != null || !Name.isDomain(word), "the domain is given as --domain "
                + word + ", not as '" + word + "' alone");
        Cli.check(spec, word == null, "'" + word + "' is no option" + (domain != null ? "" : ", and no domain either ("
                + Name.DOMAIN_RULE + "); the domain is given as --domain DOMAIN"));
        Cli.check(spec, domain != null, "--domain is required (or GMA_PC_DOMAIN, GMA_DOMAIN, pc.domain)");
        Cli.check(spec, !memory || spoolOptionsGiven().isEmpty(), "--memory keeps no spool: "
                + spoolOptionsGiven() + " would have no effect");
        Security secure = security.security(spec, domain, host);
        registry.requireSecure(spec, secure);
        try {
            PcServer.Builder b = PcServer.builder(domain, registry.url()).host(host).httpPort(httpPort)
                    .uplinkPort(uplinkPort).maxQueuedBytes(maxQueuedBytes).maxQueuedMessages(maxQueuedMessages)
                    .maxTotalBytes(maxTotalBytes).maxEndpointBytes(maxEndpointBytes).maxBatchBytes(maxBatchBytes)
                    .maxBatchesInFlight(maxBatchesInFlight).compression(compression)
                    .maxLinks(maxLinks).ioThreads(ioThreads != null ? ioThreads : IoThreads.defaultLoops())
                    .linger(Duration.ofMillis(lingerMs)).drainTimeout(Duration.ofSeconds(drainSeconds))
                    .security(secure);
            if (via != null) {
                b.via(via);
            }
            if (url != null) {
                b.publicUrl(url);
            }
            if (!memory) {
                b.spool(new SpoolOptions(dataDir != null ? dataDir : Path.of(domain), fsync, maxSpoolBytes, maxAge));
            }
            HttpProxy through = proxy(proxy, proxyUser, proxyPasswordFile, noProxy);
            if (through != null) {
                b.proxy(through);
            }
            return b;
        } catch (IllegalArgumentException bad) {
            throw new CommandLine.ParameterException(spec.commandLine(), bad.getMessage());
        }
    }
}
