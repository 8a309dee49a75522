package io.gma.registry;

import java.time.Duration;
import java.util.Objects;
import org.eclipse.jetty.ee10.servlet.ServletContextHandler;
import org.eclipse.jetty.ee10.servlet.ServletHolder;
import org.eclipse.jetty.server.HttpConfiguration;
import org.eclipse.jetty.server.HttpConnectionFactory;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.util.thread.QueuedThreadPool;

/**
 * The GMA registry, embedded: the {@link RegistryServlet} on Jetty 12, with its database, in one call.
 *
 * <pre>{@code
 * try (Registry registry = Registry.builder().port(0).build().start()) {
 *     RegistryClient client = RegistryClient.create(registry.url());
 *     ...
 * }
 * }</pre>
 *
 * <p>Standalone: {@code java -jar registry/target/gma-registry.jar --port 8080} (see {@link #main}).
 */
public final class Registry implements AutoCloseable {
    /** The path under which the API answers, after the base URL. */
    public static final String API_PATH = "/registry/v1";

    private final String host;
    private final int requestedPort;
    private final Settings settings;
    private final Authenticator authenticator;
    private final Authorizer authorizer;
    private Server server;
    private RegistryCore core;
    private String url;

    private Registry(Builder b) {
        this.host = b.host;
        this.requestedPort = b.port;
        this.settings = new Settings(b.jdbcUrl, b.jdbcUser, b.jdbcPassword, b.maxRows, b.queryTimeout, b.defaultLease,
                b.maxLease, b.sweepInterval, b.maxSqlChars, b.maxConnections, b.queryUser, b.queryPassword);
        this.authenticator = b.authenticator;
        this.authorizer = b.authorizer;
    }

    public static Builder builder() {
        return new Builder();
    }

    /**
     * Opens the database (creating the schema if needed) and starts serving.
     *
     * @return this registry, now serving at {@link #url()}
     * @throws IllegalStateException if already started
     * @throws Exception if the database cannot be opened or the port cannot be bound; nothing is left running
     */
    public synchronized Registry start() throws Exception {
        if (server != null) {
            throw new IllegalStateException("registry already started at " + url);
        }
        core = new RegistryCore(settings, authenticator, authorizer);
        QueuedThreadPool threads = new QueuedThreadPool(64, 4);
        threads.setName("gma-registry-http");
        Server s = new Server(threads);
        HttpConfiguration http = new HttpConfiguration();
        http.setSendServerVersion(false);
        ServerConnector connector = new ServerConnector(s, new HttpConnectionFactory(http));
        connector.setHost(host);
        connector.setPort(requestedPort);
        s.addConnector(connector);
        ServletContextHandler context = new ServletContextHandler("/");
        context.addServlet(new ServletHolder("registry", new RegistryServlet(core)), API_PATH + "/*");
        context.addServlet(new ServletHolder("dashboard", new DashboardServlet(API_PATH + "/query")),
                "/dashboard/*");
        s.setHandler(context);
        try {
            s.start();
        } catch (Exception e) {
            s.stop();
            core.close();
            throw e;
        }
        server = s;
        String shownHost = host.contains(":") ? "[" + host + "]" : host;
        url = "http://" + shownHost + ":" + connector.getLocalPort();
        return this;
    }

    /** The base URL, such as {@code http://127.0.0.1:41234}; the API is under {@link #API_PATH}. */
    public synchronized String url() {
        if (url == null) {
            throw new IllegalStateException("registry not started");
        }
        return url;
    }

    /** Stops serving and closes the database (an in-memory database is gone; a file or server one stays). */
    @Override
    public synchronized void close() throws Exception {
        if (server == null) {
            return;
        }
        try {
            server.stop();
        } finally {
            core.close();
            server = null;
            url = null;
        }
    }

    /**
     * Runs a registry until the process is stopped.
     *
     * <pre>
     * java -jar registry/target/gma-registry.jar [--host 127.0.0.1] [--port 8080] [--jdbc URL] ...
     * </pre>
     *
     * Exit status 2 for bad arguments, 1 when the registry cannot start. {@code --help} lists every option.
     */
    public static void main(String[] args) {
        RegistryMain.quietLogging();
        System.exit(RegistryMain.run(args, System.out, System.err));
    }

    /** Options for {@link Registry}; every setter checks its argument, {@link #build()} the combination. */
    public static final class Builder {
        private String host = "127.0.0.1";
        private int port;
        private String jdbcUrl;
        private String jdbcUser = "sa";
        private String jdbcPassword = "";
        private int maxRows = Settings.DEFAULT_MAX_ROWS;
        private Duration queryTimeout = Settings.DEFAULT_QUERY_TIMEOUT;
        private Duration defaultLease = Settings.DEFAULT_LEASE;
        private Duration maxLease = Settings.DEFAULT_MAX_LEASE;
        private Duration sweepInterval = Settings.DEFAULT_SWEEP_INTERVAL;
        private int maxSqlChars = Settings.DEFAULT_MAX_SQL_CHARS;
        private int maxConnections = Settings.DEFAULT_MAX_CONNECTIONS;
        private String queryUser;
        private String queryPassword;
        private Authenticator authenticator;
        private Authorizer authorizer;

        private Builder() {
        }

        /** The address to listen on. Default 127.0.0.1; use 0.0.0.0 to serve other machines. */
        public Builder host(String host) {
            this.host = Objects.requireNonNull(host, "host");
            return this;
        }

        /** The TCP port, 0..65535. Default 0: an ephemeral port, see {@link Registry#url()}. */
        public Builder port(int port) {
            if (port < 0 || port > 65535) {
                throw new IllegalArgumentException("port " + port + " is outside 0..65535");
            }
            this.port = port;
            return this;
        }

        /**
         * The database: {@code jdbc:h2:mem:...} (volatile), {@code jdbc:h2:file:/path} (survives restarts), or
         * {@code jdbc:postgresql://...} (shared by several registries). Default: a private in-memory H2.
         */
        public Builder jdbc(String url, String user, String password) {
            Dialect.of(Objects.requireNonNull(url, "url"));
            this.jdbcUrl = url;
            this.jdbcUser = Objects.requireNonNull(user, "user");
            this.jdbcPassword = Objects.requireNonNull(password, "password");
            return this;
        }

        /**
         * PostgreSQL only: the role that runs queries, which should hold SELECT on the five views and nothing
         * else, as the second line behind the SQL guard. Default: the {@link #jdbc} user, on connections whose
         * every transaction is read-only.
         */
        public Builder queryCredentials(String user, String password) {
            this.queryUser = Objects.requireNonNull(user, "user");
            this.queryPassword = Objects.requireNonNull(password, "password");
            return this;
        }

        /** Rows a query may answer, 1..1,000,000; the answer says when the cap cut it. Default 10,000. */
        public Builder maxRows(int maxRows) {
            this.maxRows = maxRows;
            return this;
        }

        /** How long a query may run, 1..3600 whole seconds. Default 5 s. */
        public Builder queryTimeout(Duration timeout) {
            this.queryTimeout = Objects.requireNonNull(timeout, "timeout");
            return this;
        }

        /** The lease of a registration that asks for none, whole seconds. Default 30 s. */
        public Builder defaultLease(Duration lease) {
            this.defaultLease = Objects.requireNonNull(lease, "lease");
            return this;
        }

        /** The longest lease a registration may ask for, whole seconds. Default 1 hour. */
        public Builder maxLease(Duration lease) {
            this.maxLease = Objects.requireNonNull(lease, "lease");
            return this;
        }

        /** How often expired rows are deleted (the views hide them at once regardless). Default 5 s. */
        public Builder sweepInterval(Duration interval) {
            this.sweepInterval = Objects.requireNonNull(interval, "interval");
            return this;
        }

        /** The longest SQL text accepted, in characters, 1..1,048,576. Default 16,384. */
        public Builder maxSqlChars(int maxSqlChars) {
            this.maxSqlChars = maxSqlChars;
            return this;
        }

        /** Database connections in each of the two pools (writer, reader), 1..1000. Default 8. */
        public Builder maxConnections(int maxConnections) {
            this.maxConnections = maxConnections;
            return this;
        }

        /** Who is calling; default none, which makes the registry open (it says so in its log at start). */
        public Builder authenticator(Authenticator authenticator) {
            this.authenticator = Objects.requireNonNull(authenticator, "authenticator");
            return this;
        }

        /** What each identity may do; default none, which allows everything. */
        public Builder authorizer(Authorizer authorizer) {
            this.authorizer = Objects.requireNonNull(authorizer, "authorizer");
            return this;
        }

        /**
         * @throws IllegalArgumentException naming the option, the value and the rule it breaks
         */
        public Registry build() {
            return new Registry(this);
        }
    }

    Settings settings() {
        return settings;
    }
}
