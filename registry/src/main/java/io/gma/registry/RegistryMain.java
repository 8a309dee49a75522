package io.gma.registry;

import io.gma.security.Security;
import java.io.PrintStream;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;

/** The standalone registry's command line; {@link Registry#main} calls it. */
final class RegistryMain {
    static final String USAGE = String.join(System.lineSeparator(),
            "Usage: java -jar gma-registry.jar [options]",
            "Runs a GMA registry until stopped (Ctrl-C).",
            "",
            "  --host ADDRESS           address to listen on (default 127.0.0.1; 0.0.0.0 for all)",
            "  --port PORT              TCP port, 0 for any free one (default 8080)",
            "  --jdbc URL               database: jdbc:h2:mem:NAME (default, volatile), jdbc:h2:file:PATH,",
            "                           or jdbc:postgresql://HOST/DB (shared by several registries)",
            "  --jdbc-user USER         database user (default sa); the password is read from the",
            "                           environment variable GMA_JDBC_PASSWORD (default empty)",
            "  --jdbc-query-user USER   PostgreSQL: the role that runs queries (SELECT on the views only);",
            "                           its password from GMA_JDBC_QUERY_PASSWORD",
            "  --max-rows N             rows a query may answer (default 10000)",
            "  --query-timeout SECONDS  how long a query may run (default 5)",
            "  --default-lease SECONDS  lease of a registration that asks for none (default 30)",
            "  --max-lease SECONDS      longest lease a registration may ask for (default 3600)",
            "  --security DIR           HTTPS, tokens or client certificates, and rules, from DIR as made by",
            "                           gma keys (server.p12, truststore.p12, store.pass, domain.keys, rules)",
            "  --identity NAME          with --security: serve DIR/client-NAME.p12 (default: server.p12)",
            "  --client-auth MODE       with --security: none (default: tokens), want, or need (mutual TLS)",
            "  --rules FILE             with --security: the rules instead of DIR/rules",
            "  --insecure               plaintext, no authentication, every caller may do everything: the",
            "                           default for now, logged at WARN at start",
            "  --help                   this text",
            "",
            "Exit status: 0 after a clean stop, 1 if the registry cannot start, 2 for bad arguments.");

    private RegistryMain() {
    }

    /**
     * One line per event, without connection-pool and Jetty start-up chatter, for the standalone registry
     * logging through slf4j-simple. Only where the user has not set these properties; a library user's own
     * logging is never touched.
     */
    static void quietLogging() {
        String[][] defaults = {{"org.slf4j.simpleLogger.showDateTime", "true"},
            {"org.slf4j.simpleLogger.dateTimeFormat", "HH:mm:ss.SSS"},
            {"org.slf4j.simpleLogger.showThreadName", "false"},
            {"org.slf4j.simpleLogger.showShortLogName", "true"},
            {"org.slf4j.simpleLogger.log.com.zaxxer.hikari", "warn"},
            {"org.slf4j.simpleLogger.log.org.eclipse.jetty", "warn"}};
        for (String[] d : defaults) {
            if (System.getProperty(d[0]) == null) {
                System.setProperty(d[0], d[1]);
            }
        }
    }

    static int run(String[] args, PrintStream out, PrintStream err) {
        Registry registry;
        try {
            Registry.Builder b = parse(args, out);
            if (b == null) {
                return 0;
            }
            registry = b.build();
        } catch (IllegalArgumentException e) {
            err.println("gma-registry: " + e.getMessage());
            err.println("Try --help.");
            return 2;
        }
        try {
            registry.start();
        } catch (Exception e) {
            err.println("gma-registry: cannot start: " + e.getMessage());
            return 1;
        }
        out.println("GMA registry at " + registry.url() + Registry.API_PATH);
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            try {
                registry.close();
            } catch (Exception e) {
                err.println("gma-registry: stopping: " + e.getMessage());
            }
            stopped.countDown();
        }, "gma-registry-shutdown"));
        try {
            stopped.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return 0;
    }

    /** The builder for these arguments, or null when --help was asked for (and printed). */
    static Registry.Builder parse(String[] args, PrintStream out) {
        Registry.Builder b = Registry.builder().port(8080);
        String password = System.getenv().getOrDefault("GMA_JDBC_PASSWORD", "");
        String jdbc = null;
        String user = null;
        String queryUser = null;
        Path security = null;
        String identity = null;
        String clientAuth = null;
        Path rules = null;
        boolean insecure = false;
        for (int i = 0; i < args.length; i++) {
            String option = args[i];
            if (option.equals("--help") || option.equals("-h")) {
                out.println(USAGE);
                return null;
            }
            if (option.equals("--insecure")) {
                insecure = true;
                continue;
            }
            if (!USAGE.contains("  " + option + " ")) {
                throw new IllegalArgumentException((option.startsWith("--") ? "unknown option " : "unknown argument ")
                        + option);
            }
            if (i + 1 >= args.length) {
                throw new IllegalArgumentException(option + " needs a value");
            }
            String value = args[++i];
            switch (option) {
                case "--host" -> b.host(value);
                case "--port" -> b.port(number(option, value));
                case "--jdbc" -> jdbc = value;
                case "--jdbc-user" -> user = value;
                case "--jdbc-query-user" -> queryUser = value;
                case "--max-rows" -> b.maxRows(number(option, value));
                case "--query-timeout" -> b.queryTimeout(Duration.ofSeconds(number(option, value)));
                case "--default-lease" -> b.defaultLease(Duration.ofSeconds(number(option, value)));
                case "--max-lease" -> b.maxLease(Duration.ofSeconds(number(option, value)));
                case "--security" -> security = Path.of(value);
                case "--identity" -> identity = value;
                case "--client-auth" -> clientAuth = value;
                case "--rules" -> rules = Path.of(value);
                default -> throw new IllegalArgumentException("unknown option " + option);
            }
        }
        if (user != null && jdbc == null) {
            throw new IllegalArgumentException("--jdbc-user needs --jdbc: the default in-memory database has its own");
        }
        if (jdbc != null) {
            b.jdbc(jdbc, user != null ? user : "sa", password);
        }
        if (queryUser != null) {
            b.queryCredentials(queryUser, System.getenv().getOrDefault("GMA_JDBC_QUERY_PASSWORD", ""));
        }
        if (security == null) {
            for (String[] given : new String[][] {{"--identity", identity}, {"--client-auth", clientAuth},
                {"--rules", rules == null ? null : rules.toString()}}) {
                if (given[1] != null) {
                    throw new IllegalArgumentException(given[0] + " " + given[1] + " needs --security DIR");
                }
            }
            if (insecure) {
                b.security(Security.insecure());
            }
        } else if (insecure) {
            throw new IllegalArgumentException("--security and --insecure exclude each other: give one");
        } else {
            b.security(Security.fromOptions(security, identity == null ? "registry" : identity, clientAuth, rules));
        }
        return b;
    }

    private static int number(String option, String value) {
        try {
            return Integer.parseInt(value);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(option + " " + value + " is not a whole number");
        }
    }
}
