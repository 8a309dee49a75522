package io.gma.archiver;

import io.gma.client.Consumer;
import io.gma.client.EndpointBuilder;
import io.gma.client.EndpointException;
import io.gma.client.Producer;
import io.gma.security.Security;
import io.gma.tables.TableSchema;
import io.gma.wire.Threads;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The archiver (issue 24; R-GMA's secondary producer; docs/tables.md, "The archiver"): it follows every producer of
 * some monitoring tables, in every domain, keeps their rows in a database, and publishes the tables as their
 * archive, so that consumers' history queries, and latest queries that a table's own producers cannot answer, come
 * to it.
 *
 * <pre>{@code
 * try (Archiver archiver = Archiver.builder().registry(url).domain("dsg").tables("host_cpu", "host_memory")
 *         .retention(Duration.ofDays(7)).dataDir(Path.of("/var/lib/gma/archive")).build()) {
 *     ...                                              // consumer.history("SELECT ...", since) now has rows
 * }
 * }</pre>
 *
 * <p>It is two endpoints: a consumer ({@code LABEL-in}) whose continuous query of each table subscribes to every
 * producer of it, and a producer ({@code LABEL}) that publishes each table as an archive ({@link Producer#archive})
 * with the history retention given. Rows go into H2 on file (by default) or PostgreSQL ({@link Builder#jdbc}), once
 * each whatever re-delivers them; what a producer inserted while the archiver was not following it is asked of the
 * producer and stored, or, where the producer keeps no such history, counted as a gap ({@link #stats()}). Rows
 * older than the retention are deleted in batches. A table that the registry does not declare yet is archived once
 * it is.
 */
public final class Archiver implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(Archiver.class);
    /** The default {@link Builder#retention}: 7 days. */
    public static final Duration DEFAULT_RETENTION = Duration.ofDays(7);
    /** The longest {@link Builder#retention}: 366 days, as a publication's history retention. */
    public static final Duration MAX_RETENTION = TableSchema.MAX_HISTORY_RETENTION;
    /**
     * The attribute its producer registers with its {@link #httpUrl()}, where the registry's dashboard finds the
     * chart data: {@code SELECT value FROM attributes WHERE key = 'charts'}.
     */
    public static final String CHARTS_ATTRIBUTE = "charts";
    /** The threads that answer queries from the database, and the queries that may wait for them. */
    static final int READERS = 3;
    static final int READ_QUEUE = 64;
    /** How often the archiver looks for producers to catch up with, and for tables declared since. */
    static final Duration FOLLOW = Duration.ofSeconds(3);
    /** Rows deleted per statement, and statements per sweep, by the retention. */
    static final int SWEEP_BATCH = 10_000;
    static final int SWEEP_BATCHES = 100;

    private final Duration retention;
    private final ArchiveDatabase db;
    private final ArchiveWriter writer;
    /** Its HTTP listener and the chart data it serves; null without {@link Builder#http}. */
    private final ArchiverHttp http;
    private final TableData tableData;
    private final Producer producer;
    private final Consumer consumer;
    private final ExecutorService readers;
    private final Follower follower;
    private final ScheduledExecutorService follow;
    private final ScheduledExecutorService sweeper;
    private final Map<String, ArchiveTable> archived = new ConcurrentHashMap<>();
    private final Set<String> waiting = ConcurrentHashMap.newKeySet();
    private final java.util.concurrent.atomic.AtomicBoolean closed = new java.util.concurrent.atomic.AtomicBoolean();

    private Archiver(Builder b) throws ArchiveException {
        this.retention = b.retention;
        String url = b.jdbc != null ? b.jdbc : "jdbc:h2:file:" + b.dataDir.toAbsolutePath().normalize()
                .resolve("archive");
        this.db = ArchiveDatabase.open(url, b.jdbcUser, b.jdbcPassword, READERS + 3);
        this.writer = new ArchiveWriter(db, this::dropped);
        ArchiverHttp h = null;
        Producer p = null;
        Consumer c = null;
        try {
            if (b.httpHost != null) {
                h = ArchiverHttp.start(b.httpHost, b.httpPort, b.security != null ? b.security
                        : Security.insecure(), b.registry);
            }
            EndpointBuilder<Producer> pb = b.endpoint(Producer.builder()).label(b.label);
            if (h != null) {
                pb.attribute(CHARTS_ATTRIBUTE, h.url()); // the registry's dashboard finds the chart data here
            }
            p = pb.build();
            c = b.endpoint(Consumer.builder()).label(b.label + "-in").build();
        } catch (EndpointException | ArchiveException | RuntimeException ex) {
            closeQuietly(p);
            closeQuietly(h);
            writer.close();
            db.close();
            throw ex instanceof ArchiveException ae ? ae
                    : new ArchiveException("cannot start the archiver's endpoints: " + ex.getMessage(), ex);
        }
        this.http = h;
        this.producer = p;
        this.consumer = c;
        this.tableData = h == null ? null : new TableData(consumer);
        this.readers = new ThreadPoolExecutor(READERS, READERS, 60, TimeUnit.SECONDS,
                new ArrayBlockingQueue<>(READ_QUEUE), Threads.numbered("gma-archiver-reader-"));
        this.follower = new Follower(consumer, db, writer, retention.toNanos() / 1000);
        this.follow = Executors.newSingleThreadScheduledExecutor(Threads.named("gma-archiver-follow"));
        this.sweeper = Executors.newSingleThreadScheduledExecutor(Threads.named("gma-archiver-retention"));
        try {
            for (String table : b.tables) {
                if (!archive(table)) {
                    waiting.add(table);
                    LOG.info("archiver: table {} is not declared yet; it is archived once a producer declares it",
                            table);
                }
            }
        } catch (ArchiveException | RuntimeException ex) {
            close();
            throw ex;
        }
        if (http != null) {
            http.serve(producer.name(), tableData, () -> ArchiverMetrics.page(this));
        }
        follow.scheduleWithFixedDelay(this::followTick, 0, FOLLOW.toMillis(), TimeUnit.MILLISECONDS);
        long every = Math.max(1000, Math.min(60_000, retention.toMillis() / 10));
        sweeper.scheduleWithFixedDelay(() -> sweep(Micros.now()), every, every, TimeUnit.MILLISECONDS);
        LOG.info("archiver {} archives {} into {} for {}", producer.name(), b.tables, db.shown(), retention);
    }

    /** Options for an archiver; {@link Builder#build()} starts it. */
    public static Builder builder() {
        return new Builder();
    }

    /** The name of its producer, which publishes the archive: what {@code TableRow.archiver()} says. */
    public String name() {
        return producer.name();
    }

    /** Its counts since it started, of every table together. */
    public ArchiverStats stats() {
        Counters sum = new Counters();
        for (ArchiveTable t : archived.values()) {
            Counters c = t.counters;
            sum.stored.addAndGet(c.stored.get());
            sum.duplicates.addAndGet(c.duplicates.get());
            sum.caughtUp.addAndGet(c.caughtUp.get());
            sum.gaps.addAndGet(c.gaps.get());
            sum.gapMicros.addAndGet(c.gapMicros.get());
            sum.dropped.addAndGet(c.dropped.get());
            sum.refused.addAndGet(c.refused.get());
            sum.deleted.addAndGet(c.deleted.get());
        }
        return new ArchiverStats(sum.stored.get(), sum.duplicates.get(), sum.caughtUp.get(), sum.gaps.get(),
                sum.gapMicros.get() / 1_000_000, sum.dropped.get(), sum.refused.get(), sum.deleted.get(),
                writer.storeFailures(), writer.queued(), archived.size(), waiting.size());
    }

    /**
     * Where its HTTP listener ({@link Builder#http}) serves {@code /metrics} and the dashboard's chart data, such as
     * {@code http://127.0.0.1:8095}; empty without one.
     */
    public Optional<String> httpUrl() {
        return Optional.ofNullable(http).map(ArchiverHttp::url);
    }

    /** Each table archived with its counts, by name. */
    Map<String, Counters> tableCounters() {
        Map<String, Counters> out = new TreeMap<>();
        archived.forEach((name, t) -> out.put(name, t.counters));
        return out;
    }

    /** The live charts open now (0 without {@link Builder#http}). */
    long liveCharts() {
        return tableData == null ? 0 : tableData.liveOpen();
    }

    /**
     * Archives {@code table} if the registry declares it.
     *
     * @return false when it does not (yet)
     */
    private boolean archive(String table) throws ArchiveException {
        TableSchema declared = declared(table);
        if (declared == null) {
            return false;
        }
        ArchiveTable t = db.prepare(declared, retention);
        try {
            producer.archive(declared, new ArchiveReader(db, t, readers));
            follower.follow(t);
        } catch (EndpointException ex) {
            throw new ArchiveException("cannot archive table " + table + ": " + ex.getMessage(), ex);
        }
        archived.put(table, t);
        return true;
    }

    /** The table as the registry declares it, with the archive's retention; null when it is not declared. */
    private TableSchema declared(String table) throws ArchiveException {
        try {
            return Declared.schema(consumer, table, retention);
        } catch (EndpointException ex) {
            throw new ArchiveException("cannot read the declaration of table " + table + " from the registry: "
                    + ex.getMessage(), ex);
        }
    }

    /** A row the writer dropped: its producer is asked for it again (the follower is set before any row comes). */
    private void dropped(ArchiveTable table, io.gma.client.TableRow row) {
        follower.dropped(table, row);
    }

    private void followTick() {
        try {
            for (String table : List.copyOf(waiting)) {
                if (archive(table)) {
                    waiting.remove(table);
                    LOG.info("archiver: table {} is declared now, and archived", table);
                }
            }
            follower.tick();
        } catch (ArchiveException | RuntimeException ex) {
            LOG.warn("archiver: {}", ex.getMessage());
        }
    }

    /**
     * Deletes the rows inserted before {@code nowMicros} less the retention, in each table, in bounded batches.
     *
     * @return the rows deleted
     */
    long sweep(long nowMicros) {
        long deleted = 0;
        for (ArchiveTable t : archived.values()) {
            try (Connection c = db.connection()) {
                long n = t.sweep(c, nowMicros - retention.toNanos() / 1000, SWEEP_BATCH, SWEEP_BATCHES);
                t.counters.deleted.addAndGet(n);
                deleted += n;
            } catch (SQLException ex) {
                LOG.info("archiver: the retention could not delete the old rows of {} now: {}", t.name(),
                        ex.getMessage());
            }
        }
        return deleted;
    }

    /** The producers it follows for {@code table} now, for tests. */
    Set<String> following(String table) {
        return follower.following(table);
    }

    /** The table archived as {@code name}, for tests; null when it is not. */
    ArchiveTable table(String name) {
        return archived.get(name);
    }

    ArchiveDatabase database() {
        return db;
    }

    /**
     * Stops following (the producers forget its queries), writes what is queued (for at most 10 s), unregisters,
     * and closes the database.
     */
    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        if (http != null) {
            http.close(); // live charts end, and their continuous queries
        }
        shutdown(follow);
        shutdown(sweeper);
        follower.close();
        consumer.close();
        writer.close();
        producer.close();
        shutdown(readers);
        db.close();
    }

    private static void shutdown(ExecutorService e) {
        e.shutdownNow();
        try {
            if (!e.awaitTermination(10, TimeUnit.SECONDS)) {
                LOG.warn("archiver: a task did not end within 10 s of stopping");
            }
        } catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
        }
    }

    private static void closeQuietly(AutoCloseable c) {
        if (c != null) {
            try {
                c.close();
            } catch (Exception ignored) {
                // already failing: the first failure is the one reported
            }
        }
    }

    /** Options for an {@link Archiver}: each setter checks its argument, {@link #build()} the combination. */
    public static final class Builder {
        private String registry;
        private String domain;
        private String pcServlet;
        private Security security;
        private String label = "archiver";
        private final Set<String> tables = new LinkedHashSet<>();
        private String jdbc;
        private String jdbcUser = "";
        private String jdbcPassword = "";
        private Path dataDir;
        private Duration retention = DEFAULT_RETENTION;
        private String httpHost;
        private int httpPort;

        private Builder() {
        }

        /**
         * Serves HTTP at {@code host:port} (port 0: any free one), HTTPS when the {@link #security} has TLS:
         * {@code GET /metrics}, its counts per table in the Prometheus text format, and the dashboard's chart data
         * ({@code /data/v1/series} and {@code /data/v1/live}, docs/dashboard.md), whose URL its producer registers
         * as the attribute {@value #CHARTS_ATTRIBUTE}. Callers on this machine are always answered; from other hosts,
         * the data to any caller without security and to authenticated ones with it, the metrics to authenticated
         * callers only. Default: none.
         */
        public Builder http(String host, int port) {
            if (port < 0 || port > 65_535) {
                throw new IllegalArgumentException("http port " + port + " is outside 0..65535");
            }
            this.httpHost = Objects.requireNonNull(host, "host");
            this.httpPort = port;
            return this;
        }

        /** The registry's base URL, or several separated by commas. Required. */
        public Builder registry(String url) {
            this.registry = Objects.requireNonNull(url, "url");
            return this;
        }

        /** The archiver's domain: it follows producers of every domain from there. Required. */
        public Builder domain(String domain) {
            this.domain = io.gma.wire.Name.requireDomain("domain", domain);
            return this;
        }

        /** {@code host:port} of the domain's PC servlet's uplink, to follow producers of other domains. */
        public Builder pcServlet(String hostAndPort) {
            this.pcServlet = Objects.requireNonNull(hostAndPort, "hostAndPort");
            return this;
        }

        /** TLS and tokens for its endpoints. Default: as an endpoint's (insecure on this machine). */
        public Builder security(Security security) {
            this.security = Objects.requireNonNull(security, "security");
            return this;
        }

        /** The label of its producer; its consumer's is {@code LABEL-in}. Default {@code archiver}. */
        public Builder label(String label) {
            this.label = io.gma.wire.Name.requireLabel("label", label);
            io.gma.wire.Name.requireLabel("label", label + "-in");
            return this;
        }

        /** The tables to archive (added to those given before): 1 to 256 names. Required. */
        public Builder tables(String... names) {
            for (String t : names) {
                if (t == null || !Declared.TABLE.matcher(t).matches()) {
                    throw new IllegalArgumentException("table \"" + t + "\" is not a table's name: 1..64 of a-z, 0-9"
                            + " and _, starting with a letter");
                }
                tables.add(t);
            }
            if (tables.size() > 256) {
                throw new IllegalArgumentException(tables.size() + " tables are over the 256 an archiver publishes");
            }
            return this;
        }

        /**
         * The database: {@code jdbc:postgresql://HOST/DB} (user and password in the URL, or {@link #jdbc(String,
         * String, String)}), or {@code jdbc:h2:...}. Default: H2 on file in the {@link #dataDir}.
         */
        public Builder jdbc(String url) {
            return jdbc(url, "", "");
        }

        /** As {@link #jdbc(String)}, with a user and password. */
        public Builder jdbc(String url, String user, String password) {
            if (!Objects.requireNonNull(url, "url").startsWith("jdbc:h2:") && !url.startsWith("jdbc:postgresql:")) {
                throw new IllegalArgumentException("jdbc URL " + url.replaceAll("(?i)password=[^;&]*",
                        "password=***") + " is not H2 (jdbc:h2:) or PostgreSQL (jdbc:postgresql:)");
            }
            this.jdbc = url;
            this.jdbcUser = Objects.requireNonNull(user, "user");
            this.jdbcPassword = Objects.requireNonNull(password, "password");
            return this;
        }

        /** Where the H2 database is kept ({@code DIR/archive.mv.db}), without {@link #jdbc}. Default ./archive. */
        public Builder dataDir(Path dir) {
            this.dataDir = Objects.requireNonNull(dir, "dir");
            return this;
        }

        /**
         * How long rows are kept, by their insert time: the history retention it publishes, and older rows are
         * deleted. Whole seconds, 1 s to 366 days; default 7 days.
         */
        public Builder retention(Duration retention) {
            Objects.requireNonNull(retention, "retention");
            if (retention.getNano() != 0 || retention.compareTo(Duration.ofSeconds(1)) < 0
                    || retention.compareTo(MAX_RETENTION) > 0) {
                throw new IllegalArgumentException("retention " + retention + " is not whole seconds from 1 s to "
                        + MAX_RETENTION.toDays() + " days");
            }
            this.retention = retention;
            return this;
        }

        <T> EndpointBuilder<T> endpoint(EndpointBuilder<T> b) {
            b.registry(registry).domain(domain);
            if (pcServlet != null) {
                b.pcServlet(pcServlet);
            }
            if (security != null) {
                b.security(security);
            }
            return b;
        }

        /**
         * Starts the archiver: opens the database, starts its endpoints, archives each declared table (and those
         * declared later), and catches up with their producers in the background.
         *
         * @throws IllegalStateException a required option is missing, or {@link #dataDir} with {@link #jdbc}
         * @throws ArchiveException the database cannot be opened or holds another table of a name, or the endpoints
         *     or the registry failed: the sentence says which
         */
        public Archiver build() throws ArchiveException {
            if (registry == null || domain == null || tables.isEmpty()) {
                throw new IllegalStateException("an archiver needs " + (registry == null ? "registry(url)"
                        : domain == null ? "domain(domain)" : "tables(names...)"));
            }
            if (jdbc != null && dataDir != null) {
                throw new IllegalStateException("dataDir holds the H2 database when no jdbc URL is given; with jdbc "
                        + jdbc.replaceAll("(?i)password=[^;&]*", "password=***") + " it would not be used");
            }
            if (dataDir == null) {
                dataDir = Path.of("archive");
            }
            return new Archiver(this);
        }
    }
}
