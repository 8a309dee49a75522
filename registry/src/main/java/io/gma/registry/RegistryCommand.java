package io.gma.registry;

import io.gma.cli.Cli;
import io.gma.cli.DurationOption;
import io.gma.cli.Running;
import io.gma.cli.SecurityOptions;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code gma registry}, and {@code java -jar gma-registry.jar}: the same command, its options and its defaults
 * (flags, then {@code GMA_REGISTRY_*} and {@code GMA_*} variables, then {@code registry.*} keys of the
 * properties file), run by {@link Cli}. The jar's manifest names this class, whose {@link #main} sets the log
 * format before the first logger is made.
 */
@Command(name = "registry", mixinStandardHelpOptions = true, header = "Runs a registry.",
        description = "Runs a registry until Ctrl-C (or --duration): H2 in memory by default, H2 on file or"
                + " PostgreSQL with --jdbc (docs/registry.md). With --security DIR (made by gma keys) it serves HTTPS,"
                + " callers show a token or a client certificate, and DIR/rules (or --rules) say what each may do.")
public final class RegistryCommand implements Callable<Integer> {
    /** What the jar is called in its help and usage errors. */
    static final String JAR = "java -jar gma-registry.jar";

    @Option(names = "--host", defaultValue = "127.0.0.1",
            description = "Address to listen on (default ${DEFAULT-VALUE}).")
    String host;

    @Option(names = "--port", defaultValue = "8080",
            description = "TCP port, 0 for any free one (default ${DEFAULT-VALUE}).")
    int port;

    @Option(names = "--jdbc", paramLabel = "URL",
            description = "jdbc:h2:file:PATH or jdbc:postgresql://HOST/DB (default in memory); the password from"
                    + " the environment variable GMA_JDBC_PASSWORD.")
    String jdbc;

    @Option(names = "--jdbc-user", paramLabel = "USER", defaultValue = "sa",
            description = "The database user (default ${DEFAULT-VALUE}).")
    String jdbcUser;

    @Option(names = "--jdbc-query-user", paramLabel = "USER",
            description = "PostgreSQL: the role that runs queries, with SELECT on the views only; its password from"
                    + " GMA_JDBC_QUERY_PASSWORD (see docs/registry.md).")
    String queryUser;

    @Option(names = "--max-rows", defaultValue = "10000", description = "Rows a query may answer (default"
            + " ${DEFAULT-VALUE}).")
    int maxRows;

    @Option(names = "--query-timeout", paramLabel = "SECONDS", defaultValue = "5",
            description = "How long a query may run (default ${DEFAULT-VALUE}).")
    int queryTimeout;

    @Option(names = "--default-lease", paramLabel = "SECONDS", defaultValue = "30",
            description = "Lease of a registration that asks for none (default ${DEFAULT-VALUE}).")
    int defaultLease;

    @Option(names = "--max-lease", paramLabel = "SECONDS", defaultValue = "3600",
            description = "Longest lease a registration may ask for (default ${DEFAULT-VALUE}).")
    int maxLease;

    @Mixin
    DurationOption duration;

    @Mixin
    SecurityOptions security;

    @Spec
    CommandLine.Model.CommandSpec spec;

    /** {@code java -jar gma-registry.jar [options]}: runs a registry until stopped (Ctrl-C) or --duration. */
    public static void main(String[] args) {
        Cli.quietLogging(false, args);
        Cli.exit("gma-registry", standalone(), args);
    }

    /** This command as the program {@code java -jar gma-registry.jar}, for {@link Cli#run}. */
    static CommandLine standalone() {
        return Cli.standalone(new RegistryCommand(), JAR);
    }

    @Override
    public Integer call() throws Exception {
        Registry registry = configured().start();
        return Running.until(duration.seconds(), () -> spec.commandLine().getOut().println("GMA registry at "
                + registry.url() + Registry.API_PATH), null, registry);
    }

    /**
     * The registry these options describe, built, not started.
     *
     * @throws CommandLine.ParameterException naming the option or value that is wrong
     */
    Registry configured() {
        Cli.check(spec, jdbc != null || !spec.commandLine().getParseResult().hasMatchedOption("--jdbc-user"),
                "--jdbc-user needs --jdbc: the default in-memory database has its own");
        try {
            Registry.Builder b = Registry.builder().security(security.security(spec, "registry", host)).host(host)
                    .port(port).maxRows(maxRows)
                    .queryTimeout(java.time.Duration.ofSeconds(queryTimeout))
                    .defaultLease(java.time.Duration.ofSeconds(defaultLease))
                    .maxLease(java.time.Duration.ofSeconds(maxLease));
            if (jdbc != null && !jdbc.isEmpty()) {
                b.jdbc(jdbc, jdbcUser, System.getenv().getOrDefault("GMA_JDBC_PASSWORD", ""));
            }
            if (queryUser != null) {
                b.queryCredentials(queryUser, System.getenv().getOrDefault("GMA_JDBC_QUERY_PASSWORD", ""));
            }
            return b.build();
        } catch (IllegalArgumentException bad) {
            throw new CommandLine.ParameterException(spec.commandLine(), bad.getMessage());
        }
    }
}
