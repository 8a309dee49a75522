package io.gma.examples.cli;

import io.gma.registry.Registry;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code gma registry}. */
@Command(name = "registry", mixinStandardHelpOptions = true, header = "Runs a registry.",
        description = "Runs a registry until Ctrl-C (or --duration): H2 in memory by default, H2 on file or"
                + " PostgreSQL with --jdbc. TLS and authentication options come with the security work.")
final class RegistryCommand implements Callable<Integer> {
    @Option(names = "--host", defaultValue = "127.0.0.1",
            description = "Address to listen on (default ${DEFAULT-VALUE}).")
    String host;

    @Option(names = "--port", defaultValue = "8080",
            description = "TCP port, 0 for any free one (default ${DEFAULT-VALUE}).")
    int port;

    @Option(names = "--jdbc", paramLabel = "URL",
            description = "jdbc:h2:file:PATH or jdbc:postgresql://HOST/DB (default in memory);"
                    + " user and password from GMA_JDBC_USER and GMA_JDBC_PASSWORD.")
    String jdbc;

    @Option(names = "--duration", paramLabel = "SECONDS", defaultValue = "0",
            description = "Stop after this many seconds; 0 runs until Ctrl-C.")
    long duration;

    @Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() throws Exception {
        Registry.Builder b = Registry.builder().host(host).port(port);
        if (jdbc != null && !jdbc.isEmpty()) {
            b.jdbc(jdbc, System.getenv().getOrDefault("GMA_JDBC_USER", "sa"),
                    System.getenv().getOrDefault("GMA_JDBC_PASSWORD", ""));
        }
        Registry registry = b.build().start();
        spec.commandLine().getOut().println("GMA registry at " + registry.url() + Registry.API_PATH);
        Running.until(duration, null, registry);
        return 0;
    }
}
