package io.gma.registry;

import io.gma.registry.api.RegistryClient;
import io.gma.security.Security;
import java.time.Duration;
import java.util.Objects;
import org.eclipse.jetty.ee10.servlet.ServletContextHandler;
import org.eclipse.jetty.ee10.servlet.ServletHolder;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

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
 * <p>With {@link Builder#security security}, it serves HTTPS, callers prove who they are with
 * {@code Authorization: Bearer <token>} or a client certificate (a person at the dashboard pastes a token once,
 * and a session cookie stands for it), and rules decide what each may do (see docs/registry.md, "Security" and
 * "The dashboard").
 *
 * <p>{@code GET /metrics} answers its counters (registrations, renewals, removals, look-ups, queries with a
 * histogram of their time, refusals, lease expiries) in the Prometheus text format: to this machine, and to
 * authenticated callers from others (docs/registry.md, "Metrics").
 *
 * <p>Standalone: {@code java -jar registry/target/gma-registry.jar --port 8080} (see {@link #main}).
 */
public final class Registry implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(Registry.class);
    /** The path under which the API answers, after the base URL: {@link RegistryClient#API_PATH}. */
    public static final String API_PATH = RegistryClient.API_PATH;

    private final String host;
    private final int requestedPort;
    private final Settings settings;
    private final Authenticator authenticator;
    private final Authorizer authorizer;
    private final Security security;
    private final Duration pcSampling;
    private Server server;
    private RegistryCore core;
    private PcSampler sampler;
    private String url;

    private Registry(Builder b) {
        this.host = b.host;
        this.requestedPort = b.port;
        this.settings = new Settings(b.jdbcUrl, b.jdbcUser, b.jdbcPassword, b.maxRows, b.queryTimeout, b.defaultLease,
                b.maxLease, b.sweepInterval, b.maxSqlChars, b.maxConnections, b.queryUser, b.queryPassword);
        this.security = b.security != null ? b.security : Security.unlessExposed(b.host, "registry");
        boolean secured = security.authenticates();
        this.authenticator = b.authenticator != null ? b.authenticator
                : secured ? RulesAuthorizer.authenticator(security) : null;
        this.authorizer = b.authorizer != null ? b.authorizer : secured ? new RulesAuthorizer(security) : null;
        this.pcSampling = b.pcSampling;
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
        ServerConnector connector = Https.listener("gma-registry-http", 64, host, requestedPort, security);
        Server s = connector.getServer();
        ServletContextHandler context = new ServletContextHandler("/");
        PcSampler samples = new PcSampler(core.store, security, pcSampling);
        context.addServlet(new ServletHolder("registry", new RegistryServlet(core, samples)), API_PATH + "/*");
        context.addServlet(new ServletHolder("metrics", new MetricsServlet(core)), MetricsServlet.PATH);
        DashboardServlet.mount(context, API_PATH + "/query", core.open ? null : API_PATH + "/session",
                API_PATH + "/pcs");
        s.setHandler(context);
        try {
            Https.start(s, connector, "--port (Registry.Builder.port)");
        } catch (Exception e) {
            s.stop();
            samples.close();
            core.close();
            throw e;
        }
        server = s;
        sampler = samples;
        url = Https.url(security, connector);
        if (security.authenticates()) {
            String warning = security.warning("registry"); // an open registry has said so already, at greater length
            if (warning != null) {
                LOG.warn(warning);
            }
            LOG.info("registry at {}{} with {}", url, API_PATH, security); // paths and key ids, never a secret
        }
        return this;
    }

    /**
     * The base URL, such as {@code http://127.0.0.1:41234}, or {@code https://...} with TLS; the API is under
     * {@link #API_PATH}.
     */
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
            sampler.close();
            core.close();
            server = null;
            url = null;
        }
    }

    /**
     * Runs a registry until the process is stopped: {@link RegistryCommand}, which is also {@code gma registry}.
     *
     * <pre>
     * java -jar registry/target/gma-registry.jar [--host 127.0.0.1] [--port 8080] [--jdbc URL] ...
     * </pre>
     *
     * Exit status 0 after a clean stop (Ctrl-C, SIGTERM, the end of --duration), 2 for bad arguments, 1 when the
     * registry cannot start; {@code --help} lists every option and every exit status. The
     * jar's manifest names {@link RegistryCommand#main} itself, which sets the log format before this class's
     * logger is made.
     */
    public static void main(String[] args) {
        RegistryCommand.main(args);
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
        /** Null: none given, which is {@link Security#unlessExposed} of the host. */
        private Security security;
        private Duration pcSampling = PcSampler.DEFAULT_INTERVAL;

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
         * PostgreSQL only: the role that runs queries, which should hold SELECT on the views (docs/registry.md) and
         * nothing else, as the second line behind the SQL guard. Default: the {@link #jdbc} user, on connections whose
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

        /**
         * TLS, authentication and rules. With TLS the registry serves HTTPS (TLS 1.3 or 1.2, client
         * certificates asked for as the TLS says); unless it is {@link Security#insecure()}, every call needs
         * {@code Authorization: Bearer <token>} or a client certificate (else 401, before the body is read) and
         * the rules allow each action (else 403): {@code register} for {@code label@domain}, {@code domain} for a
         * domain, {@code query} for each table read; a look-up of one endpoint takes {@code send} to its name or
         * {@code query} of {@code endpoints}. An {@link #authenticator} or {@link #authorizer} given as well
         * replaces that part. Default: {@link Security#insecure()}, plaintext and open, logged at WARN at start,
         * while {@link #host} is a loopback address; beyond, build() refuses until security is given.
         *
         * @throws IllegalArgumentException if the security's TLS has no key store (a server must show a
         *     certificate)
         */
        public Builder security(Security security) {
            Objects.requireNonNull(security, "security");
            if (security.tls() != null && !security.tls().hasKey()) {
                throw new IllegalArgumentException("a registry serving TLS needs a key store, and " + security.tls()
                        + " has none");
            }
            this.security = security;
            return this;
        }

        /**
         * How often the registry samples each PC servlet's status for the dashboard's charts of messages per second
         * and queue depths ({@code GET /registry/v1/pcs}; docs/dashboard.md), 1 to 60 s. It keeps 8,640 samples
         * of each: a day at the default, 10 s.
         */
        public Builder pcSampling(Duration interval) {
            this.pcSampling = PcSampler.checkInterval(Objects.requireNonNull(interval, "interval"));
            return this;
        }

        /**
         * Who is calling; default the {@link #security}'s (its tokens and client certificates), and none when that
         * is insecure, which makes the registry open (it says so in its log at start).
         */
        public Builder authenticator(Authenticator authenticator) {
            this.authenticator = Objects.requireNonNull(authenticator, "authenticator");
            return this;
        }

        /**
         * What each identity may do; default the {@link #security}'s rules, and none when that is insecure, which
         * allows everything.
         */
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
