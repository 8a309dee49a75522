package io.gma.registry;

import io.gma.wire.Threads;
import java.sql.SQLException;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Everything a registry servlet works with, opened together and closed together. */
final class RegistryCore implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(RegistryCore.class);
    /** How long JSqlParser may take over one statement. */
    static final long PARSE_TIMEOUT_MILLIS = 2_000;

    final Settings settings;
    final Database database;
    final EndpointStore store;
    /** Declared tables and their publishers. */
    final TableStore tables;
    final SqlGuard guard;
    final QueryRunner queries;
    final Requests requests;
    final Authenticator authenticator;
    final Authorizer authorizer;
    /** Whether an authorizer is configured: without one everything is allowed, so checks needing a look-up skip it. */
    final boolean authorizes;
    /** Whether no authenticator is configured: then diagnostics go to loopback callers only. */
    final boolean open;
    /** The dashboard's sign-in: used only when an authenticator is configured. */
    final DashboardSessions sessions = new DashboardSessions();
    /** When this registry began serving: what it knows of leases is no older (System.nanoTime). */
    final long startedNanos = System.nanoTime();
    /** What the calls answered, and the leases that ran out: {@code GET /metrics}. */
    final Metrics metrics = new Metrics();
    private final ThreadPoolExecutor parser;
    private final LeaseSweeper sweeper;

    RegistryCore(Settings settings, Authenticator authenticator, Authorizer authorizer) throws SQLException {
        this.settings = settings;
        this.authenticator = authenticator != null ? authenticator : request -> Authenticator.ANONYMOUS;
        this.authorizer = authorizer != null ? authorizer : (identity, action, target) -> { };
        this.authorizes = authorizer != null;
        this.open = authenticator == null;
        this.database = new Database(settings.jdbcUrl(), settings.jdbcUser(), settings.jdbcPassword(),
                settings.maxConnections(), settings.queryUser(), settings.queryPassword());
        this.store = new EndpointStore(database.writer(), database.dialect(), metrics);
        this.tables = new TableStore(database.writer());
        int cores = Runtime.getRuntime().availableProcessors();
        // parsing is CPU work: a few threads, and a bounded queue so a flood of statements is refused, not kept
        this.parser = new ThreadPoolExecutor(cores, cores, 30, TimeUnit.SECONDS, new ArrayBlockingQueue<>(256),
                Threads.numbered("gma-registry-sql-parser-"));
        this.guard = new SqlGuard(settings.maxSqlChars(), PARSE_TIMEOUT_MILLIS, parser);
        this.queries = new QueryRunner(database.reader(), settings.maxRows(),
                (int) settings.queryTimeout().toSeconds(), metrics);
        this.requests = new Requests((int) settings.defaultLease().toSeconds(), (int) settings.maxLease().toSeconds());
        this.sweeper = new LeaseSweeper(store, settings.sweepInterval());
        if (authenticator == null) {
            LOG.warn("registry is OPEN: no authentication is configured (Registry.Builder.security, or --security DIR),"
                    + " so every caller is \"{}\" and may register, renew, remove and query", Authenticator.ANONYMOUS);
        }
        LOG.info("registry database {} ({}), row cap {}, statement timeout {} s, default lease {} s",
                settings.safeJdbcUrl(), database.dialect(), settings.maxRows(), settings.queryTimeout().toSeconds(),
                settings.defaultLease().toSeconds());
    }

    @Override
    public void close() {
        sweeper.close();
        parser.shutdownNow();
        database.close();
    }
}
