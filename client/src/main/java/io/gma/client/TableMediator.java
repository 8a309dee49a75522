package io.gma.client;

import io.gma.internal.link.IoThreads;
import io.gma.registry.api.ColumnDeclaration;
import io.gma.registry.api.QueryResult;
import io.gma.registry.api.RegistryClient;
import io.gma.registry.api.RegistryException;
import io.gma.registry.api.TableInfo;
import io.gma.tables.BoundQuery;
import io.gma.tables.Column;
import io.gma.tables.ColumnType;
import io.gma.tables.Row;
import io.gma.tables.RowCodec;
import io.gma.tables.RowEnvelope;
import io.gma.tables.TableException;
import io.gma.tables.TableQuery;
import io.gma.tables.TableSchema;
import io.gma.wire.ErrorCode;
import io.gma.wire.Message;
import io.gma.wire.ProtocolException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The mediator, in the consumer (issue 23): it finds the producers of a query's table through the registry
 * ({@code publishers}), keeps those whose predicate may overlap the query's WHERE, and asks each. A continuous
 * query subscribes to each (TABLE_QUERY) and is refreshed every {@link #REFRESH}: producers that started
 * publishing the table are subscribed to, those that stopped are dropped. A latest query asks
 * each (TABLE_LATEST) and merges the answers, the newest row per primary key.
 *
 * <p>Threads: calls on the application's threads, rows on the links' event loops, refreshes on the endpoint's
 * connecting pool (they call the registry). No lock: concurrent maps and sets.
 */
final class TableMediator {
    private static final Logger LOG = LoggerFactory.getLogger(Endpoint.class);
    /** How often continuous queries look for producers that came or went. */
    static final Duration REFRESH = Duration.ofSeconds(3);
    private final String name;
    private final RegistryClient registry;
    private final Requests requests;
    private final Outbox outbox;
    private final Duration timeout;
    private final ScheduledExecutorService timer;
    private final Executor calls;
    private final AtomicLong ids = new AtomicLong();
    private final Map<Long, ContinuousQuery> queries = new ConcurrentHashMap<>();
    /**
     * Per table, the producers' predicates as compiled last time, by their text: compiling one runs the SQL parser
     * (a fraction of a millisecond), and a latest query over 1,000 producers that each fix their host compiled
     * 1,000 every time. Each look-up keeps those of the producers it found, so this holds what the registry
     * lists now. Unmodified after it is put.
     */
    private final Map<String, Map<String, TableSchema>> predicates = new ConcurrentHashMap<>();
    private ScheduledFuture<?> refreshing;
    private volatile boolean closed;

    /** A producer of a table, and its predicate (null: every row). */
    private record Publisher(String name, String predicate) {
    }

    TableMediator(String name, RegistryClient registry, Requests requests, Outbox outbox, Duration timeout,
            ScheduledExecutorService timer, Executor calls) {
        this.name = name;
        this.registry = registry;
        this.requests = requests;
        this.outbox = outbox;
        this.timeout = timeout;
        this.timer = timer;
        this.calls = calls;
    }

    /**
     * Starts a continuous query: subscribes to each producer found now, waiting for their answers, and follows
     * the others from then on.
     *
     * @throws TableException the query is refused (its syntax, a construct, an unknown column)
     * @throws EndpointException the table is not declared (NO_ROUTE), the registry failed, or a producer refused
     *     the query (its sentence)
     */
    ContinuousQuery continuous(String sql, RowHandler handler) throws EndpointException {
        notOnEventLoop("continuous");
        TableQuery q = TableQuery.parse(sql);
        BoundQuery bound = q.bind(schemaOf(q.table()));
        ContinuousQuery cq = new ContinuousQuery(this, ids.incrementAndGet(), bound, handler);
        queries.put(cq.id(), cq);
        try {
            List<CompletableFuture<Void>> subscribing = refresh(cq);
            for (CompletableFuture<Void> f : subscribing) {
                await(f);
            }
        } catch (EndpointException | RuntimeException ex) {
            cq.close();
            throw ex;
        }
        startRefreshing();
        return cq;
    }

    /**
     * The latest rows of every producer that may hold some, newest per primary key.
     *
     * @throws TableException the query is refused
     * @throws EndpointException the table is not declared, the registry failed, or a producer refused the query
     *     or its answer was too large (its sentence); producers that left or do not answer in time are skipped
     */
    List<TableRow> latest(String sql) throws EndpointException {
        notOnEventLoop("latest");
        TableQuery q = TableQuery.parse(sql);
        TableSchema schema = schemaOf(q.table());
        BoundQuery bound = q.bind(schema);
        Map<String, CompletableFuture<byte[]>> asked = new LinkedHashMap<>();
        for (Publisher p : publishers(q, schema)) {
            asked.put(p.name(), requests.requestAsync(p.name(), TableWire.TABLE_LATEST, q.sql().getBytes(
                    StandardCharsets.UTF_8), timeout));
        }
        Map<List<Object>, TableRow> newest = new LinkedHashMap<>();
        for (Map.Entry<String, CompletableFuture<byte[]>> a : asked.entrySet()) {
            byte[] answer;
            try {
                answer = await(a.getValue());
            } catch (EndpointException ex) {
                if (ex.code() == ErrorCode.MALFORMED || ex.code() == ErrorCode.TOO_LARGE
                        || ex.code() == ErrorCode.FORBIDDEN) {
                    throw ex;
                }
                LOG.info("{}: latest of {} skips {}: {}", name, q.table(), a.getKey(), ex.getMessage());
                continue;
            }
            try {
                ByteBuffer in = ByteBuffer.wrap(answer);
                while (in.hasRemaining()) {
                    if (in.remaining() < 8) {
                        throw new ProtocolException(ErrorCode.MALFORMED, "the answer ends inside an insert time");
                    }
                    long micros = in.getLong();
                    long length = TableWire.readVarint(in, "the answer");
                    if (length > in.remaining()) {
                        throw new ProtocolException(ErrorCode.MALFORMED, "a row of " + length + " bytes, past the "
                                + in.remaining() + " that remain");
                    }
                    ByteBuffer rowBytes = in.slice(in.position(), (int) length);
                    in.position(in.position() + (int) length);
                    Row row = RowCodec.decode(schema, rowBytes);
                    if (!bound.filter().test(row)) {
                        continue;
                    }
                    List<Object> key = key(schema, row);
                    TableRow before = newest.get(key);
                    if (before == null || before.insertMicros() < micros) {
                        newest.put(key, new TableRow(a.getKey(), micros, row));
                    }
                }
            } catch (ProtocolException ex) {
                throw new EndpointException(ErrorCode.MALFORMED, a.getKey() + " answered the latest of "
                        + q.table() + " with bytes that are not rows: " + ex.getMessage(), ex);
            }
        }
        List<TableRow> rows = new ArrayList<>(newest.size());
        for (TableRow r : newest.values()) {
            rows.add(new TableRow(r.producer(), r.insertMicros(), bound.project(r.row())));
        }
        return rows;
    }

    /** A TABLE_ROW, on a link's event loop: to its query's handler, or a TABLE_CANCEL for a query that ended. */
    void receive(Message m) {
        RowEnvelope env;
        try {
            env = RowEnvelope.decode(m.dataBuffer()); // a view: the row is copied once, as it is decoded
        } catch (ProtocolException ex) {
            LOG.warn("{}: dropped a malformed TABLE_ROW from {}: {}", name, m.from(), ex.getMessage());
            return;
        }
        ContinuousQuery cq = queries.get(env.queryId());
        if (cq == null || cq.closed()) {
            // off the event loop: a send may wait for room in the producer's queue
            String from = m.from();
            calls.execute(() -> sendCancel(from, env.queryId()));
            return;
        }
        Row row;
        try {
            row = env.row(cq.bound().schema());
        } catch (ProtocolException ex) {
            LOG.warn("{}: dropped a malformed TABLE_ROW from {}: {}", name, m.from(), ex.getMessage());
            return;
        }
        try {
            cq.handler().onRow(new TableRow(m.from(), env.insertMicros(), cq.bound().project(row)));
        } catch (Exception | LinkageError | AssertionError | StackOverflowError ex) {
            LOG.warn("{}: row handler of query {} failed on a row from {}: {}", name, cq.sql(), m.from(),
                    ex.toString());
        }
    }

    /** Ends {@code cq}: it is forgotten, and each producer is told. */
    void cancel(ContinuousQuery cq) {
        queries.remove(cq.id());
        for (String p : cq.producers) {
            sendCancel(p, cq.id());
        }
        cq.producers.clear();
        cq.subscribed.clear();
    }

    /** Stops refreshing; the queries end with the endpoint (its BYE tells producers). */
    void close() {
        closed = true;
        synchronized (this) {
            if (refreshing != null) {
                refreshing.cancel(false);
            }
        }
        queries.clear();
    }

    private synchronized void startRefreshing() {
        if (refreshing == null && !closed) {
            long every = REFRESH.toMillis();
            refreshing = timer.scheduleWithFixedDelay(() -> calls.execute(this::refreshAll), every, every,
                    TimeUnit.MILLISECONDS);
        }
    }

    private void refreshAll() {
        for (ContinuousQuery cq : queries.values()) {
            try {
                refresh(cq);
            } catch (EndpointException | RuntimeException ex) {
                LOG.info("{}: could not look for producers of {}: {}", name, cq.sql(), ex.getMessage());
            }
        }
    }

    /**
     * Subscribes {@code cq} to the producers that publish its table now and that it does not have, and cancels it
     * at those that stopped.
     *
     * @return the subscriptions sent, each completed by the producer's answer
     */
    private List<CompletableFuture<Void>> refresh(ContinuousQuery cq) throws EndpointException {
        TableQuery q = cq.bound().query();
        List<Publisher> now = publishers(q, cq.bound().schema());
        List<CompletableFuture<Void>> sent = new ArrayList<>();
        List<String> names = now.stream().map(Publisher::name).toList();
        for (String gone : List.copyOf(cq.producers)) {
            if (!names.contains(gone) && cq.producers.remove(gone)) {
                // no TABLE_CANCEL: a producer leaves the publishers with its registration, so it is gone (and
                // forgets the query with its link), or it registers again and is subscribed again (same id)
                LOG.info("{}: query {} drops {}, which publishes {} no more", name, cq.sql(), gone, q.table());
            }
        }
        cq.subscribed.retainAll(cq.producers); // also one whose answer came as it was dropped
        for (String p : names) {
            if (cq.closed() || !cq.producers.add(p)) {
                continue;
            }
            CompletableFuture<Void> subscribed = requests.requestAsync(p, TableWire.TABLE_QUERY,
                    TableWire.query(cq.id(), q.sql()), timeout).handle((reply, ex) -> {
                        if (ex == null) {
                            if (cq.producers.contains(p)) { // not dropped meanwhile
                                cq.subscribed.add(p);
                            }
                            return null;
                        }
                        cq.producers.remove(p); // tried again at the next refresh
                        Throwable why = ex instanceof java.util.concurrent.CompletionException ? ex.getCause() : ex;
                        if (why instanceof EndpointException e && e.code() == ErrorCode.MALFORMED) {
                            throw new java.util.concurrent.CompletionException(e);
                        }
                        LOG.info("{}: could not subscribe query {} to {}: {}", name, cq.sql(), p, why.toString());
                        return null;
                    });
            sent.add(subscribed);
        }
        return sent;
    }

    /** The producers of the query's table whose predicate may overlap its WHERE. */
    private List<Publisher> publishers(TableQuery q, TableSchema schema) throws EndpointException {
        QueryResult r;
        try {
            // the name is an identifier (TableQuery checked it): nothing to quote
            r = registry.query("SELECT name, predicate FROM publishers WHERE table_name = '" + q.table() + "'");
        } catch (RegistryException ex) {
            throw Failures.fromRegistry("finding the producers of " + q.table(), ex);
        }
        List<Publisher> found = new ArrayList<>();
        Map<String, TableSchema> before = predicates.getOrDefault(schema.name(), Map.of());
        Map<String, TableSchema> now = new HashMap<>();
        for (List<Object> row : r.rows()) {
            String producer = (String) row.get(0);
            String predicate = (String) row.get(1);
            if (predicate != null) {
                try {
                    TableSchema theirs = now.get(predicate);
                    if (theirs == null) {
                        theirs = before.get(predicate);
                        if (theirs == null || !theirs.columns().equals(schema.columns())
                                || !theirs.primaryKey().equals(schema.primaryKey())) {
                            theirs = new TableSchema(schema.name(), schema.columns(), schema.primaryKey(), predicate,
                                    TableSchema.DEFAULT_LATEST_RETENTION, Duration.ZERO);
                        }
                        now.put(predicate, theirs);
                    }
                    if (!q.mayOverlap(theirs)) {
                        continue;
                    }
                } catch (TableException ex) {
                    LOG.debug("{}: predicate of {} not understood, asked anyway: {}", name, producer,
                            ex.getMessage());
                }
            }
            found.add(new Publisher(producer, predicate));
        }
        predicates.put(schema.name(), now); // the predicates of the producers there are now, no more
        return found;
    }

    /** The table as the registry declares it, without a predicate. */
    private TableSchema schemaOf(String table) throws EndpointException {
        TableInfo info;
        try {
            info = registry.table(table);
        } catch (RegistryException ex) {
            throw Failures.fromRegistry("table " + table, ex);
        }
        List<Column> columns = new ArrayList<>();
        for (ColumnDeclaration c : info.declaration().columns()) {
            columns.add(new Column(c.name(), ColumnType.valueOf(c.type().name())));
        }
        return new TableSchema(table, columns, info.declaration().primaryKey(), null,
                TableSchema.DEFAULT_LATEST_RETENTION, Duration.ZERO);
    }

    private static List<Object> key(TableSchema schema, Row row) {
        List<Object> key = new ArrayList<>();
        for (String c : schema.primaryKey()) {
            key.add(row.get(schema.indexOf(c)));
        }
        return key;
    }

    private void sendCancel(String producer, long queryId) {
        try {
            outbox.send(producer, TableWire.TABLE_CANCEL, TableWire.cancel(queryId));
        } catch (EndpointException | IllegalArgumentException ex) {
            LOG.debug("{}: could not cancel query {} at {}: {}", name, queryId, producer, ex.getMessage());
        }
    }

    private static void notOnEventLoop(String call) {
        if (IoThreads.isCurrent()) {
            throw new IllegalStateException(call + "() would block this link's event loop, which must read the"
                    + " producers' answers: call it from another thread");
        }
    }

    private <T> T await(CompletableFuture<T> f) throws EndpointException {
        try {
            return f.get(timeout.toMillis() + 1000, TimeUnit.MILLISECONDS);
        } catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            throw new EndpointException(ErrorCode.TIMEOUT, "interrupted", ex);
        } catch (TimeoutException ex) {
            throw new EndpointException(ErrorCode.TIMEOUT, "no answer within " + timeout.toMillis() + " ms", ex);
        } catch (ExecutionException ex) {
            if (ex.getCause() instanceof EndpointException e) {
                throw e;
            }
            throw new EndpointException(ErrorCode.INTERNAL, ex.getCause().toString(), ex);
        }
    }
}
