package io.gma.client;

import io.gma.tables.BoundQuery;
import io.gma.tables.Row;
import io.gma.tables.RowBatch;
import io.gma.tables.RowEnvelope;
import io.gma.tables.TableException;
import io.gma.tables.TableQuery;
import io.gma.tables.TableSchema;
import io.gma.wire.ErrorCode;
import io.gma.wire.Message;
import io.gma.wire.Packed;
import io.gma.wire.ProtocolException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The mediator, in the consumer (issue 23): it finds the producers of a query's table through the registry
 * ({@code publishers}), keeps those whose predicate may overlap the query's WHERE, and asks each. A continuous
 * query subscribes to each (TABLE_QUERY) and is refreshed every {@link #REFRESH}: producers that started
 * publishing the table are subscribed to, those that stopped are dropped. A latest query asks
 * each (TABLE_LATEST) and merges the answers, the newest row per primary key; when a producer does not answer (or
 * none but archivers publish the table), an archiver answers for it ({@link HistoryQueries#latestFromArchives}).
 * Archivers (publishers with {@code archive}) are never subscribed to: they keep other producers' rows.
 *
 * <p>Threads: calls on the application's threads, rows on the links' event loops, refreshes on the endpoint's
 * connecting pool (they call the registry). No lock: concurrent maps and sets.
 */
final class TableMediator {
    private static final Logger LOG = LoggerFactory.getLogger(Endpoint.class);
    /** How often continuous queries look for producers that came or went. */
    static final Duration REFRESH = Duration.ofSeconds(3);
    /**
     * A subscribed producer that sent nothing for the query this long is asked again, at a refresh: the same
     * query, which a producer that has it keeps as it is, and one that lost it (restarted under its name, or
     * declared the table again) takes again. Its registration alone cannot tell: a producer restarted with
     * takeOver is registered throughout.
     */
    static final long REASSERT_NANOS = TimeUnit.SECONDS.toNanos(10);
    /** How often a message of rows notes its producer as heard, at most. */
    private static final long HEARD_NANOS = TimeUnit.SECONDS.toNanos(1);
    private final String name;
    private final Publishers publishers;
    private final HistoryQueries history;
    private final Requests requests;
    private final Outbox outbox;
    private final Duration timeout;
    private final ScheduledExecutorService timer;
    private final Executor calls;
    /** Where row handlers run: the endpoint's handler executor, or null for the link's event loop. */
    private final Executor handlers;
    private final AtomicLong ids = new AtomicLong();
    private final Map<Long, ContinuousQuery> queries = new ConcurrentHashMap<>();
    private ScheduledFuture<?> refreshing;
    private volatile boolean closed;

    TableMediator(String name, Publishers publishers, HistoryQueries history, Requests requests, Outbox outbox,
            Duration timeout, ScheduledExecutorService timer, Executor calls, Executor handlers) {
        this.name = name;
        this.publishers = publishers;
        this.history = history;
        this.requests = requests;
        this.outbox = outbox;
        this.timeout = timeout;
        this.timer = timer;
        this.calls = calls;
        this.handlers = handlers;
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
        Answers.notOnEventLoop("continuous");
        TableQuery q = TableQuery.parse(sql);
        BoundQuery bound = q.bind(publishers.schemaOf(q.table()));
        ContinuousQuery cq = new ContinuousQuery(this, ids.incrementAndGet(), bound, handler);
        queries.put(cq.id(), cq);
        try {
            List<CompletableFuture<Void>> subscribing = refresh(cq);
            for (CompletableFuture<Void> f : subscribing) {
                Answers.await(f, timeout);
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
        Answers.notOnEventLoop("latest");
        TableQuery q = TableQuery.parse(sql);
        TableSchema schema = publishers.schemaOf(q.table());
        BoundQuery bound = q.bind(schema);
        Map<String, CompletableFuture<byte[]>> asked = new LinkedHashMap<>();
        List<Publishers.Publisher> archivers = new ArrayList<>();
        for (Publishers.Publisher p : publishers.of(q, schema)) {
            if (p.archive()) {
                archivers.add(p);
                continue;
            }
            asked.put(p.name(), requests.requestAsync(p.name(), TableWire.TABLE_LATEST, q.sql().getBytes(
                    StandardCharsets.UTF_8), timeout));
        }
        Set<String> answered = new HashSet<>(asked.keySet());
        Map<List<Object>, TableRow> newest = new LinkedHashMap<>();
        for (Map.Entry<String, CompletableFuture<byte[]>> a : asked.entrySet()) {
            byte[] answer;
            try {
                answer = Answers.await(a.getValue(), timeout);
            } catch (EndpointException ex) {
                if (ex.code() == ErrorCode.MALFORMED || ex.code() == ErrorCode.TOO_LARGE
                        || ex.code() == ErrorCode.FORBIDDEN) {
                    throw ex;
                }
                LOG.info("{}: latest of {} skips {}: {}", name, q.table(), a.getKey(), ex.getMessage());
                answered.remove(a.getKey());
                continue;
            }
            String producer = a.getKey();
            try {
                RowBatch.forEachLatest(schema, answer, 0, answer.length, (micros, row) -> {
                    if (bound.filter().test(row)) {
                        List<Object> key = key(schema, row);
                        TableRow before = newest.get(key);
                        if (before == null || before.insertMicros() < micros) {
                            newest.put(key, new TableRow(producer, micros, row));
                        }
                    }
                });
            } catch (ProtocolException ex) {
                throw new EndpointException(ErrorCode.MALFORMED, a.getKey() + " answered the latest of "
                        + q.table() + " with bytes that are not rows: " + ex.getMessage(), ex);
            }
        }
        boolean someoneSilent = answered.size() < asked.size() || asked.isEmpty();
        if (!archivers.isEmpty() && someoneSilent) {
            // some producer did not answer (a site behind a dead link), or none publishes but archivers: their
            // rows from an archive, where no answer of their own is newer
            TableHistory archived = history.latestFromArchives(q, bound, archivers);
            for (TableRow r : archived == null ? List.<TableRow>of() : archived.rows()) {
                if (!answered.contains(r.producer())) {
                    List<Object> key = key(schema, r.row());
                    TableRow before = newest.get(key);
                    if (before == null || before.insertMicros() < r.insertMicros()) {
                        newest.put(key, r);
                    }
                }
            }
        }
        List<TableRow> rows = new ArrayList<>(newest.size());
        for (TableRow r : newest.values()) {
            rows.add(new TableRow(r.producer(), r.insertMicros(), bound.project(r.row()), r.archiver()));
        }
        return rows;
    }

    /**
     * A TABLE_ROW or TABLE_ROWS, on a link's event loop: each row to its query's handler, or a TABLE_CANCEL for a
     * query that ended.
     */
    void receive(Message m) {
        // read in place from the message's own bytes, which nobody changes: no copy, no view; a large message's
        // data is in an array of its own (WireCodec#withDataApartFrom), whose packed form would be a copy
        byte[] packed = m.dataKeptApart() ? m.sharedData() : Packed.shared(m);
        int length = m.dataLength();
        int at = packed.length - length;
        boolean batch = m.command() == TableWire.TABLE_ROWS;
        long id;
        try {
            id = batch ? RowBatch.queryId(packed, at, length) : RowEnvelope.queryId(packed, at, length);
        } catch (ProtocolException ex) {
            LOG.warn("{}: dropped a malformed {} from {}: {}", name, m.command(), m.from(), ex.getMessage());
            return;
        }
        ContinuousQuery cq = queries.get(id);
        if (cq == null || cq.closed()) {
            // off the event loop: a send may wait for room in the producer's queue
            String from = m.from();
            calls.execute(() -> sendCancel(from, id));
            return;
        }
        long now = System.nanoTime();
        Long heard = cq.heard.get(m.from());
        if (heard != null && now - heard > HEARD_NANOS) {
            cq.heard.put(m.from(), now);
        }
        try {
            if (batch) {
                RowBatch.forEach(cq.bound().schema(), packed, at, length, (micros, row) -> take(cq, m.from(), micros,
                        row));
            } else {
                long insertMicros = RowEnvelope.insertMicros(packed, at, length);
                take(cq, m.from(), insertMicros, RowEnvelope.row(cq.bound().schema(), packed, at, length));
            }
        } catch (ProtocolException ex) {
            LOG.warn("{}: dropped a malformed {} from {} (the rows before the fault were taken): {}", name,
                    m.command(), m.from(), ex.getMessage());
        }
    }

    /** A row of {@code cq} from {@code producer}: projected, to the query's handler. */
    private void take(ContinuousQuery cq, String producer, long insertMicros, Row row) {
        TableRow projected = new TableRow(producer, insertMicros, cq.bound().project(row));
        if (handlers == null) {
            handle(cq, projected);
            return;
        }
        try {
            handlers.execute(() -> handle(cq, projected));
        } catch (RejectedExecutionException ex) {
            LOG.warn("{}: the handler executor refused a row of query {} from {}", name, cq.sql(), producer);
        }
    }

    private void handle(ContinuousQuery cq, TableRow row) {
        try {
            cq.handler().onRow(row);
        } catch (Exception | LinkageError | AssertionError | StackOverflowError ex) {
            LOG.warn("{}: row handler of query {} failed on a row from {}: {}", name, cq.sql(), row.producer(),
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
     * Subscribes {@code cq} to the producers that publish its table now and that it does not have, drops those that
     * stopped, and asks again those it has not heard of for {@link #REASSERT_NANOS}.
     *
     * @return the subscriptions sent, each completed by the producer's answer
     */
    private List<CompletableFuture<Void>> refresh(ContinuousQuery cq) throws EndpointException {
        TableQuery q = cq.bound().query();
        List<Publishers.Publisher> now = publishers.of(q, cq.bound().schema());
        List<CompletableFuture<Void>> sent = new ArrayList<>();
        // archivers keep other producers' rows: subscribing to them would bring each row twice
        List<String> names = now.stream().filter(p -> !p.archive()).map(Publishers.Publisher::name).toList();
        for (String gone : List.copyOf(cq.producers)) {
            if (!names.contains(gone) && cq.producers.remove(gone)) {
                cq.heard.remove(gone);
                // no TABLE_CANCEL: a producer leaves the publishers with its registration, so it is gone (and
                // forgets the query with its link), or it registers again and is subscribed again (same id)
                LOG.info("{}: query {} drops {}, which publishes {} no more", name, cq.sql(), gone, q.table());
            }
        }
        cq.subscribed.retainAll(cq.producers); // also one whose answer came as it was dropped
        long nanos = System.nanoTime();
        for (String p : names) {
            if (cq.closed()) {
                continue;
            }
            if (!cq.producers.add(p)) {
                Long heard = cq.heard.get(p);
                if (heard != null && nanos - heard > REASSERT_NANOS) {
                    cq.heard.put(p, nanos); // asked again once a REASSERT, whatever the answer
                    reassert(cq, p);
                }
                continue;
            }
            CompletableFuture<Void> subscribed = requests.requestAsync(p, TableWire.TABLE_QUERY,
                    TableWire.query(cq.id(), q.sql()), timeout).handle((reply, ex) -> {
                        if (ex == null) {
                            if (cq.producers.contains(p)) { // not dropped meanwhile
                                cq.subscribed.add(p);
                                cq.heard.put(p, System.nanoTime());
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

    /** Asks {@code p}, silent for a while, for the query again; what fails is tried at the next REASSERT. */
    private void reassert(ContinuousQuery cq, String p) {
        requests.requestAsync(p, TableWire.TABLE_QUERY, TableWire.query(cq.id(), cq.bound().query().sql()), timeout)
                .whenComplete((reply, ex) -> {
                    if (ex != null) {
                        LOG.debug("{}: could not ask {} for query {} again: {}", name, p, cq.sql(), ex.toString());
                    }
                });
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
}
