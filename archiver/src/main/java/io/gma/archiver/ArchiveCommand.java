package io.gma.archiver;

import io.gma.cli.AgeConverter;
import io.gma.cli.Cli;
import io.gma.cli.ClientSecurityOptions;
import io.gma.cli.DurationOption;
import io.gma.cli.RegistryOption;
import io.gma.cli.Running;
import io.gma.security.Security;
import io.gma.wire.Name;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code gma archive}: runs an {@link Archiver} until Ctrl-C (or {@code --duration}), with its options and their
 * defaults (flags, then {@code GMA_ARCHIVE_*} and {@code GMA_*} variables, then {@code archive.*} keys of the
 * properties file), run by {@link Cli}. {@link #main} runs it as a program of its own.
 */
@Command(name = "archive", mixinStandardHelpOptions = true, header = "Runs an archiver of monitoring tables.",
        description = "Runs an archiver until Ctrl-C (or --duration): it follows every producer of the tables"
                + " given, in every domain, keeps their rows in H2 on file (or PostgreSQL with --jdbc), and answers"
                + " history queries, and latest queries for producers that cannot answer, with them"
                + " (docs/tables.md, The archiver).")
public final class ArchiveCommand implements Callable<Integer> {
    @Option(names = "--tables", split = ",", paramLabel = "TABLE[,TABLE...]",
            description = "The tables to archive (required); one not declared yet is archived once it is.")
    List<String> tables;

    @Option(names = "--jdbc", paramLabel = "URL",
            description = "jdbc:postgresql://HOST/DB for a PostgreSQL database, or jdbc:h2:...; the password from"
                    + " the environment variable GMA_JDBC_PASSWORD (default: H2 on file in --data-dir).")
    String jdbc;

    @Option(names = "--jdbc-user", paramLabel = "USER", defaultValue = "",
            description = "The database user (default: the URL's, or none).")
    String jdbcUser;

    @Option(names = "--retention", paramLabel = "AGE", defaultValue = "7d", converter = AgeConverter.class,
            description = "How long rows are kept, by their insert time, and the history retention the archiver"
                    + " publishes: seconds, or 90s, 15m, 24h, 7d; 1 s to 366 days (default ${DEFAULT-VALUE}).")
    Duration retention;

    @Option(names = "--data-dir", paramLabel = "DIR",
            description = "Where the H2 database is kept, as DIR/archive.mv.db (default ./archive); not with"
                    + " --jdbc.")
    Path dataDir;

    @Option(names = "--http", paramLabel = "[HOST:]PORT",
            description = "Serve GET /metrics (its counts per table) and the dashboard's chart data at"
                    + " http://HOST:PORT (https with the TLS of --security), and register that URL as the attribute"
                    + " charts, where the registry's dashboard finds it; HOST defaults to 127.0.0.1, PORT 0 takes any"
                    + " free one (default none).")
    String http;

    @Option(names = "--label", defaultValue = "archiver",
            description = "The label of its producer; its consumer's is LABEL-in (default ${DEFAULT-VALUE}).")
    String label;

    @Option(names = "--domain", defaultValue = "lan", description = "The archiver's domain (default"
            + " ${DEFAULT-VALUE}).")
    String domain;

    @Option(names = "--pc", paramLabel = "HOST:PORT",
            description = "The uplink of the domain's PC servlet, to follow producers of other domains (default"
                    + " none: this domain only).")
    String pc;

    @Mixin
    RegistryOption registry;

    @Mixin
    ClientSecurityOptions security;

    @Mixin
    DurationOption duration;

    @Spec
    CommandLine.Model.CommandSpec spec;

    /** {@code gma-archive [options]}: the command as a program of its own. */
    public static void main(String[] args) {
        Cli.quietLogging(false, args);
        Cli.exit("gma-archive", Cli.standalone(new ArchiveCommand(), "gma-archive"), args);
    }

    @Override
    public Integer call() throws Exception {
        Archiver archiver = configured().build();
        return Running.until(duration.seconds(), () -> {
            spec.commandLine().getOut().println("archiver is " + archiver.name() + ", archiving "
                    + String.join(", ", tables) + " into " + archiver.database().shown() + " for " + retention);
            archiver.httpUrl().ifPresent(url -> spec.commandLine().getOut().println("metrics at " + url
                    + "/metrics, chart data for the dashboard at " + url + TableData.PATH));
        }, null, archiver);
    }

    /** {@code --http [HOST:]PORT} as a URI's host and port; a usage error when it is not that. */
    private URI httpAddress() {
        String hostPort = http.matches("[0-9]+") ? "127.0.0.1:" + http : http;
        try {
            URI at = new URI("http://" + hostPort);
            if (at.getHost() != null && at.getPort() >= 0 && at.getPort() <= 65_535 && at.getPath().isEmpty()
                    && at.getUserInfo() == null) {
                return at;
            }
        } catch (URISyntaxException bad) {
            // said below
        }
        throw new CommandLine.ParameterException(spec.commandLine(), "--http " + http + " is not [HOST:]PORT with"
                + " PORT 0..65535");
    }

    /**
     * The archiver these options describe, not started.
     *
     * @throws CommandLine.ParameterException naming the option or value that is wrong
     */
    Archiver.Builder configured() {
        Cli.check(spec, tables != null && !tables.isEmpty(), "--tables is required (or GMA_ARCHIVE_TABLES,"
                + " archive.tables): the tables to archive, separated by commas");
        Cli.check(spec, jdbc == null || dataDir == null, "--data-dir keeps the H2 database when no --jdbc is given;"
                + " with --jdbc it would not be used");
        Cli.check(spec, Name.isDomain(domain), "--domain \"" + domain + "\" is not " + Name.DOMAIN_RULE);
        Security secure = security.security(spec);
        registry.requireSecure(spec, secure);
        try {
            Archiver.Builder b = Archiver.builder().registry(registry.url()).domain(domain).label(label)
                    .security(secure).tables(tables.toArray(new String[0])).retention(retention);
            if (pc != null && !pc.isEmpty()) {
                b.pcServlet(pc);
            }
            if (http != null) {
                URI at = httpAddress();
                b.http(at.getHost().replace("[", "").replace("]", ""), at.getPort());
            }
            if (jdbc != null && !jdbc.isEmpty()) {
                b.jdbc(jdbc, jdbcUser, System.getenv().getOrDefault("GMA_JDBC_PASSWORD", ""));
            } else {
                b.dataDir(dataDir != null ? dataDir : Path.of("archive"));
            }
            return b;
        } catch (IllegalArgumentException bad) {
            throw new CommandLine.ParameterException(spec.commandLine(), bad.getMessage());
        }
    }
}
