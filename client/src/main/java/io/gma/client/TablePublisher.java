package io.gma.client;

import io.gma.internal.link.IoThreads;
import io.gma.registry.api.ColumnDeclaration;
import io.gma.registry.api.Publication;
import io.gma.registry.api.RegistryClient;
import io.gma.registry.api.RegistryException;
import io.gma.registry.api.TableDeclaration;
import io.gma.tables.BoundQuery;
import io.gma.tables.Column;
import io.gma.tables.InsertStatement;
import io.gma.tables.Row;
import io.gma.tables.RowBatch;
import io.gma.tables.RowEncoder;
import io.gma.tables.RowEnvelope;
import io.gma.tables.TableException;
import io.gma.tables.TableQuery;
import io.gma.tables.TableSchema;
import io.gma.wire.Command;
import io.gma.wire.ErrorCode;
import io.gma.wire.Message;
import io.gma.wire.ProtocolException;
import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A producer's monitoring tables (issue 23, docs/tables.md): the tables it declared, the latest row of each
 * primary key within the table's latest retention, and the continuous queries of its consumers. An insert is
 * checked against the schema, kept as the latest of its key, and goes to each subscription whose WHERE it
 * satisfies: only matching rows cross the network. A row that finds its subscription quiet (nothing sent to it
 * for {@link #LINGER_NANOS}) goes at once, as TABLE_ROW; while rows follow each other closer than that, they
 * gather into a TABLE_ROWS of up to {@link #BATCH_ROWS} rows ({@link RowBatch}), which goes when full or when its
 * first row has waited {@link #LINGER_NANOS}: the link does a message's work once a batch, not once a row.
 * TABLE_QUERY, TABLE_CANCEL and TABLE_LATEST come from the {@link Inbox} ({@link TableWire}), and TABLE_HISTORY
 * ({@link HistoryWire}): answered from the rows a table with a history retention keeps ({@link KeptHistory}), or
 * for a table this producer archives, by its {@link TableArchive}.
 *
 * <p>Threads: inserts on the application's threads, queries on the links' event loops, rows that waited their
 * linger on the endpoint's timer (taken) and its connecting pool (sent). Each table's state is guarded by its own
 * lock, held only to update or copy the maps and to take a batch; rows are sent after it is released, each
 * subscription's batches in the order they were taken ({@link Subscription#awaitTurn}).
 */
final class TablePublisher {
    private static final Logger LOG = LoggerFactory.getLogger(Endpoint.class);
    /** Bytes the answer's envelope may take within a message, beside its rows. */
    private static final int ENVELOPE_MARGIN = 1024;
    /** How often inserts sweep a table's latest rows for those past its retention, at most. */
    private static final long PURGE_MICROS = 1_000_000;
    /** The most queries kept parsed. */
    private static final int PARSED = 256;
    /**
     * How long a row may wait for others of its subscription, at most: a subscription nothing was sent to for
     * this long is quiet, and its next row goes at once.
     */
    static final long LINGER_NANOS = 1_000_000;
    /** The most rows of a TABLE_ROWS. */
    static final int BATCH_ROWS = 32;
    /** A TABLE_ROWS goes once its data reaches this many bytes (or the endpoint's answer limit, if lower). */
    static final int BATCH_BYTES = 16 * 1024;
    /** How often {@link #nowMicros()} reads the wall clock. */
    static final long CLOCK_ANCHOR_NANOS = 100_000_000;
    /** A new anchor this much behind the time carried on is a step of the wall clock, which insert times follow. */
    static final long CLOCK_STEP_MICROS = 1_000;
    /** A reading of the wall clock and of the monotonic clock at once. */
    private record ClockAnchor(long nanos, long micros) {
    }

    private static volatile ClockAnchor anchor = new ClockAnchor(System.nanoTime(), wallMicros());
    private final String name;
    private final RegistryClient registry;
    private final Receipts outbox;
    private final int maxAnswerBytes;
    /** {@link #LINGER_NANOS}, or 0 with a durable outbox: a row is in it once its insert returns. */
    private final long lingerNanos;
    private final int batchBytes;
    private final ScheduledExecutorService timer;
    private final Executor sender;
    private final Map<String, TableState> tables = new ConcurrentHashMap<>();
    /** The most insert texts kept parsed. */
    static final int MAX_INSERTS = 256;
    private final Map<String, InsertStatement> inserts = new ConcurrentHashMap<>();
    private final TableAnswers answers;
    /** The tables this producer archives (an archiver's). */
    private final ArchivedTables archives;
    /**
     * Consumers' queries as parsed, by their text: parsing runs the SQL parser (a fraction of a millisecond warm,
     * milliseconds cold), and consumers ask the same few queries again and again (a latest query at each refresh
     * of a dashboard). At most {@link #PARSED} kept: emptied when full.
     */
    private final Map<String, TableQuery> parsedQueries = new ConcurrentHashMap<>();

    /**
     * A consumer's query, as it subscribed it, and its rows that wait to go. The batch and the tickets are guarded
     * by the table's lock; the turn by this object's monitor.
     */
    private static final class Subscription {
        final String consumer;
        final long queryId;
        final BoundQuery query;
        /** The rows that wait; made at the first. */
        RowBatch batch;
        /** When the batch's first row came, System.nanoTime. */
        long firstNanos;
        /** When a batch or row was last taken to go, System.nanoTime; long ago at first. */
        long takenNanos;
        /** Batches and rows taken so far: the ticket of the next. */
        long tickets;
        /** The ticket that goes next. */
        private long turn;

        Subscription(String consumer, long queryId, BoundQuery query, long nanos, long lingerNanos) {
            this.consumer = consumer;
            this.queryId = queryId;
            this.query = query;
            this.takenNanos = nanos - lingerNanos;
        }

        /** Whether it has rows that wait. */
        boolean waiting() {
            return batch != null && batch.rows() > 0;
        }

        /** Waits, uninterruptibly, until the batches taken before ticket {@code ticket} went. */
        synchronized void awaitTurn(long ticket) {
            boolean interrupted = false;
            while (turn != ticket) {
                try {
                    wait();
                } catch (InterruptedException ex) {
                    interrupted = true; // a ticket given up would hold back every later one: wait on
                }
            }
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }

        /** Whether ticket {@code ticket} may go now. */
        synchronized boolean isTurn(long ticket) {
            return turn == ticket;
        }

        /** Ticket {@code ticket} went (or failed): the next may go. */
        synchronized void done(long ticket) {
            turn = ticket + 1;
            notifyAll();
        }
    }

    /** Rows taken to go to a subscription: a TABLE_ROW or TABLE_ROWS, in the turn of its ticket. */
    private record Taken(Subscription to, long ticket, Command command, byte[] data) {
    }

    /** One declared table: its schema, its latest rows by key and its subscriptions; guarded by itself. */
    private static final class TableState {
        private static final Subscription[] NONE = {};
        final TableSchema schema;
        final LatestRows latest;
        /**
         * The subscriptions, replaced (never changed) when one comes or goes: an insert that found some matching
         * sends to them after it let go of the lock.
         */
        Subscription[] subscriptions = NONE;
        /** The rows kept for history queries, or null when the table keeps none. */
        final KeptHistory history;
        /** Encodes each row inserted, once, for every TABLE_ROW it goes out in and for history. */
        final RowEncoder encoder = new RowEncoder();
        /** When an insert next sweeps out the rows past the latest retention, microseconds since the epoch. */
        long nextPurgeMicros;
        /** Whether a task on the timer will take the batches that waited their linger. */
        boolean flushArmed;

        TableState(TableSchema schema) {
            this.schema = schema;
            this.latest = new LatestRows(schema);
            this.history = schema.historyRetention().isZero() ? null : new KeptHistory(schema, KeptHistory.MAX_ROWS);
        }

        /** Replaces the subscriptions by those {@code keep} keeps, and {@code add} if not null; under the lock. */
        void subscriptions(Predicate<Subscription> keep, Subscription add) {
            List<Subscription> now = new ArrayList<>();
            for (Subscription s : subscriptions) {
                if (keep.test(s)) {
                    now.add(s);
                }
            }
            if (add != null) {
                now.add(add);
            }
            subscriptions = now.toArray(NONE);
        }
    }

    /**
     * @param outbox sends rows (with a receipt when the endpoint asks for them)
     * @param control sends answers
     * @param maxMessageBytes the endpoint's limit, which bounds a TABLE_LATEST answer and a TABLE_ROWS
     * @param durable whether the endpoint has a durable outbox: then each row goes as its insert returns
     * @param timer takes the batches whose linger ended
     * @param sender sends them (a send may wait for room in a queue: not on the timer)
     */
    TablePublisher(String name, RegistryClient registry, Receipts outbox, Outbox control, int maxMessageBytes,
            boolean durable, ScheduledExecutorService timer, Executor sender) {
        this.name = name;
        this.registry = registry;
        this.outbox = outbox;
        this.maxAnswerBytes = Math.max(ENVELOPE_MARGIN, maxMessageBytes - ENVELOPE_MARGIN);
        this.lingerNanos = durable ? 0 : LINGER_NANOS;
        this.batchBytes = Math.min(BATCH_BYTES, maxAnswerBytes);
        this.timer = timer;
        this.sender = sender;
        this.answers = new TableAnswers(name, control, maxAnswerBytes);
        this.archives = new ArchivedTables(name, registry, answers);
    }

    /**
     * Inserts the row of an {@code INSERT INTO table [(columns)] VALUES (...)} with {@code args} for its
     * {@code ?}: parsed once per text (of the last {@link #MAX_INSERTS} texts), then as {@link #insert(String, Row)}.
     */
    int insert(String sql, Object[] args) {
        InsertStatement statement = inserts.get(sql);
        if (statement == null) {
            statement = InsertStatement.parse(sql);
            if (inserts.size() >= MAX_INSERTS) {
                inserts.clear(); // an application that builds its texts rather than using ?: parse each
            }
            inserts.put(sql, statement);
        }
        TableState t = state(statement.table());
        Row row;
        try {
            row = statement.bind(t.schema, args);
        } catch (TableException ex) {
            throw new TableException("table " + t.schema.name() + ": " + ex.getMessage());
        }
        return insert(t.schema.name(), row);
    }

    private TableState state(String table) {
        TableState t = tables.get(table);
        if (t == null) {
            throw new TableException("table " + table + " is not declared by " + name + "; it declared "
                    + tables.keySet().stream().sorted().toList());
        }
        return t;
    }

    /** Declares {@code schema} at the registry and publishes it for this producer; then rows may be inserted. */
    void declare(TableSchema schema) throws EndpointException {
        if (archives.contains(schema.name())) {
            throw new TableException("table " + schema.name() + " is archived by " + name + "; a producer archives a"
                    + " table or inserts into it, not both");
        }
        List<ColumnDeclaration> columns = new ArrayList<>();
        for (Column c : schema.columns()) {
            columns.add(new ColumnDeclaration(c.name(), io.gma.registry.api.ColumnType.valueOf(c.type().name())));
        }
        try {
            registry.declareTable(new TableDeclaration(schema.name(), columns, schema.primaryKey()));
            registry.publish(name, new Publication(schema.name(), schema.predicate().orElse(null),
                    schema.latestRetention(), schema.historyRetention()));
        } catch (RegistryException ex) {
            throw Failures.fromRegistry("declaring table " + schema.name(), ex);
        }
        TableState before = tables.get(schema.name());
        if (before == null || !before.schema.equals(schema)) {
            // declared again with another predicate or retention: its rows and subscriptions start afresh
            tables.put(schema.name(), new TableState(schema));
        }
    }

    /**
     * Publishes {@code schema}'s table (declared already, as the registry holds it) as an archive of this producer:
     * its TABLE_HISTORY go to {@code archive}, with the schema's retention periods.
     */
    void archive(TableSchema schema, TableArchive archive) throws EndpointException {
        if (tables.containsKey(schema.name())) {
            throw new TableException("table " + schema.name() + " is declared by " + name + ", which inserts into it;"
                    + " a producer archives a table or inserts into it, not both");
        }
        archives.archive(schema, archive);
    }

    /** Publishes again what was declared: the registry forgets a producer's publications with its lease. */
    void republish() throws EndpointException {
        archives.republish();
        for (TableState t : tables.values()) {
            TableSchema s = t.schema;
            try {
                registry.publish(name, new Publication(s.name(), s.predicate().orElse(null), s.latestRetention(),
                        s.historyRetention()));
            } catch (RegistryException ex) {
                throw Failures.fromRegistry("publishing table " + s.name(), ex);
            }
        }
    }

    /**
     * Checks {@code row}, keeps it as its key's latest and sends it to every subscription it matches: at once when
     * the subscription is quiet, else with the rows that follow within {@link #LINGER_NANOS}. The row is checked
     * and encoded in one walk, once, whatever the number of subscriptions: each takes the same bytes.
     *
     * @return the number of subscriptions it goes to
     * @throws TableException naming the table, column or value that does not fit
     */
    int insert(String table, Row row) {
        TableState t = state(table);
        long nanos = System.nanoTime();
        long now = nowMicros(nanos);
        Subscription[] subscriptions;
        Taken[] ready = null; // what goes now, by subscription
        int matching = 0;
        synchronized (t) {
            try {
                t.schema.validate(row, t.encoder);
            } catch (TableException ex) {
                throw new TableException("table " + table + ": " + ex.getMessage());
            }
            t.latest.put(row, now);
            if (t.history != null) {
                t.history.add(now, t.encoder.toArray());
            }
            if (now >= t.nextPurgeMicros) {
                // a sweep visits every key: once a second at most, not once per so many inserts, which with many
                // keys cost more than the inserts (a latest answer sweeps first anyway: this only bounds memory)
                t.nextPurgeMicros = now + PURGE_MICROS;
                purge(t, now);
            }
            subscriptions = t.subscriptions;
            for (int i = 0; i < subscriptions.length; i++) {
                Subscription s = subscriptions[i];
                if (s.query.filter().test(row)) {
                    matching++;
                    Taken taken = add(t, s, now, nanos);
                    if (taken != null) {
                        if (ready == null) {
                            ready = new Taken[subscriptions.length];
                        }
                        ready[i] = taken;
                    }
                }
            }
        }
        for (int i = 0; ready != null && i < ready.length; i++) {
            if (ready[i] != null) {
                send(table, ready[i]);
            }
        }
        return matching;
    }

    /**
     * Adds the row {@code t}'s encoder holds to {@code s}; under the table's lock. Returns what goes now: the row
     * alone when the subscription was quiet, the batch when the row filled it, or the batch before the row when
     * the row would make it too long; otherwise null, and the timer will take the batch when its linger ends.
     */
    private Taken add(TableState t, Subscription s, long insertMicros, long nanos) {
        boolean empty = !s.waiting();
        if (empty && nanos - s.takenNanos >= lingerNanos) {
            return take(s, RowEnvelope.COMMAND, t.encoder.envelope(s.queryId, insertMicros), nanos);
        }
        if (s.batch == null) {
            s.batch = new RowBatch(s.queryId);
        }
        Taken before = null;
        if (!empty && s.batch.bytesWith(t.encoder.length()) > batchBytes) {
            before = take(s, RowBatch.COMMAND, s.batch.take(), nanos);
            empty = true;
        }
        s.batch.add(t.encoder, insertMicros);
        if (empty) {
            s.firstNanos = nanos;
        }
        if (before == null && (s.batch.rows() >= BATCH_ROWS || s.batch.bytes() >= batchBytes)) {
            return take(s, RowBatch.COMMAND, s.batch.take(), nanos);
        }
        if (!t.flushArmed) {
            armFlush(t, s.firstNanos + lingerNanos - nanos);
        }
        return before;
    }

    /** Takes {@code data} to go to {@code s} next: its ticket; under the table's lock. */
    private static Taken take(Subscription s, Command command, byte[] data, long nanos) {
        s.takenNanos = nanos;
        return new Taken(s, s.tickets++, command, data);
    }

    /** Asks the timer to take {@code t}'s batches whose linger ended, in {@code delayNanos}; under its lock. */
    private void armFlush(TableState t, long delayNanos) {
        try {
            timer.schedule(() -> flushDue(t), Math.max(0, delayNanos), TimeUnit.NANOSECONDS);
            t.flushArmed = true;
        } catch (RejectedExecutionException ex) {
            // the endpoint is closing: close() takes what waits
        }
    }

    /** On the timer: takes the batches of {@code t} whose first row waited its linger, and has them sent. */
    private void flushDue(TableState t) {
        List<Taken> due = new ArrayList<>();
        synchronized (t) {
            t.flushArmed = false;
            long nanos = System.nanoTime();
            long next = Long.MAX_VALUE;
            for (Subscription s : t.subscriptions) {
                if (!s.waiting()) {
                    continue;
                }
                long wait = s.firstNanos + lingerNanos - nanos;
                if (wait <= 0) {
                    due.add(take(s, RowBatch.COMMAND, s.batch.take(), nanos));
                } else {
                    next = Math.min(next, wait);
                }
            }
            if (next != Long.MAX_VALUE) {
                armFlush(t, next);
            }
        }
        if (!due.isEmpty()) {
            try {
                sender.execute(() -> due.forEach(d -> send(t.schema.name(), d)));
            } catch (RejectedExecutionException ex) {
                due.forEach(d -> send(t.schema.name(), d)); // closing: on this thread, in their turn
            }
        }
    }

    /** Takes every row that waits, of every table, and sends it: the endpoint closes. */
    void flushAll() {
        for (TableState t : tables.values()) {
            List<Taken> all = new ArrayList<>();
            synchronized (t) {
                long nanos = System.nanoTime();
                for (Subscription s : t.subscriptions) {
                    if (s.waiting()) {
                        all.add(take(s, RowBatch.COMMAND, s.batch.take(), nanos));
                    }
                }
            }
            all.forEach(d -> send(t.schema.name(), d));
        }
    }

    /**
     * Sends a TABLE_ROW or TABLE_ROWS after the table's lock is let go (under BLOCK, the send may wait for room),
     * in its subscription's order.
     */
    private void send(String table, Taken taken) {
        Subscription s = taken.to();
        if (IoThreads.isCurrent() && !s.isTurn(taken.ticket())) {
            // an insert on a link's event loop does not wait for another thread's send, which may wait for room
            // that this loop makes: the connecting pool waits its turn instead
            try {
                sender.execute(() -> send(table, taken));
                return;
            } catch (RejectedExecutionException closing) {
                // closing: waits here, bounded by the other send's own wait
            }
        }
        s.awaitTurn(taken.ticket());
        try {
            // no future asked of the Sent: a consumer that is gone is dropped by the Inbox (ERROR NO_ROUTE)
            // or the endpoint (the registry no longer knows it), and a future per row costs the sender and
            // the link's ACK handling more than the row itself
            outbox.send(s.consumer, taken.command(), taken.data());
        } catch (EndpointException ex) {
            LOG.debug("{}: rows of {} not sent to {}: {}", name, table, s.consumer, ex.getMessage());
            if (ex.code() == ErrorCode.NO_ROUTE) {
                dropConsumer(s.consumer);
            }
        } finally {
            s.done(taken.ticket());
        }
    }

    /** Drops every subscription of {@code consumer}, which went away. */
    void dropConsumer(String consumer) {
        for (TableState t : tables.values()) {
            synchronized (t) {
                t.subscriptions(s -> !s.consumer.equals(consumer), null);
            }
        }
    }

    /** The subscriptions now, for tests: table to count. */
    Map<String, Integer> subscriptionCounts() {
        Map<String, Integer> counts = new HashMap<>();
        for (TableState t : tables.values()) {
            synchronized (t) {
                counts.put(t.schema.name(), t.subscriptions.length);
            }
        }
        return counts;
    }

    /** A table command from a consumer, on a link's event loop: answered through the control lane. */
    void receive(Message m) {
        try {
            if (m.command() == TableWire.TABLE_QUERY) {
                subscribe(m);
            } else if (m.command() == TableWire.TABLE_CANCEL) {
                long id = TableWire.readVarint(ByteBuffer.wrap(m.data()), "TABLE_CANCEL");
                for (TableState t : tables.values()) {
                    synchronized (t) {
                        t.subscriptions(s -> !s.consumer.equals(m.from()) || s.queryId != id, null);
                    }
                }
            } else if (m.command() == TableWire.TABLE_LATEST) {
                latest(m);
            } else if (m.command() == TableWire.TABLE_HISTORY) {
                history(m);
            } else {
                error(m, ErrorCode.MALFORMED, name + " is a producer and takes no TABLE_ROW");
            }
        } catch (ProtocolException ex) {
            error(m, ErrorCode.MALFORMED, ex.getMessage());
        } catch (TableException ex) {
            error(m, ErrorCode.MALFORMED, ex.getMessage());
        }
    }

    private void subscribe(Message m) throws ProtocolException {
        ByteBuffer in = ByteBuffer.wrap(m.data());
        long id = TableWire.readVarint(in, "TABLE_QUERY");
        String sql = TableWire.readText(in, "TABLE_QUERY");
        TableQuery parsed = parse(sql);
        TableState t = stateFor(parsed.table());
        BoundQuery q = parsed.bind(t.schema);
        synchronized (t) {
            t.subscriptions(s -> !s.consumer.equals(m.from()) || s.queryId != id, new Subscription(m.from(), id,
                    q, System.nanoTime(), lingerNanos));
        }
        reply(m, new byte[0]);
    }

    private void latest(Message m) throws ProtocolException {
        String sql = TableWire.readText(ByteBuffer.wrap(m.data()), "TABLE_LATEST");
        TableQuery parsed = parse(sql);
        TableState t = stateFor(parsed.table());
        BoundQuery q = parsed.bind(t.schema);
        List<LatestRows.Kept> rows;
        synchronized (t) {
            purge(t, nowMicros());
            rows = t.latest.since(Long.MIN_VALUE, q.filter());
        }
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        RowEncoder encoder = new RowEncoder();
        for (LatestRows.Kept k : rows) {
            int length = encoder.encode(t.schema, k.row());
            ByteBuffer micros = ByteBuffer.allocate(8).putLong(0, k.insertMicros());
            out.writeBytes(micros.array());
            TableWire.writeVarint(out, length);
            encoder.writeTo(out);
            if (out.size() > maxAnswerBytes) {
                error(m, ErrorCode.TOO_LARGE, "the latest rows of " + t.schema.name() + " that match the query ("
                        + rows.size() + " rows) exceed the answer limit of " + maxAnswerBytes + " bytes of "
                        + name + "; narrow the WHERE");
                return;
            }
        }
        reply(m, out.toByteArray());
    }

    /**
     * TABLE_HISTORY: history or latest rows since a time, from the rows this producer keeps (its history, or its
     * latest rows when the table keeps no history), or from the archive of an archived table.
     */
    private void history(Message m) throws ProtocolException {
        HistoryWire.Ask ask = HistoryWire.readAsk(ByteBuffer.wrap(m.data()));
        TableQuery parsed = TableQuery.parseHistory(ask.sql());
        int maxRows = (int) Math.min(ask.maxRows(), Integer.MAX_VALUE - 1);
        if (archives.contains(parsed.table())) {
            archives.answer(m, ask, parsed, maxRows);
            return;
        }
        TableState t = stateFor(parsed.table());
        BoundQuery q = parsed.bind(t.schema);
        long now = nowMicros();
        List<KeptHistory.Entry> history = null;
        List<LatestRows.Kept> latest = List.of();
        long complete;
        synchronized (t) {
            purge(t, now);
            if (t.history != null && !ask.latest()) {
                history = t.history.since(ask.sinceMicros());
                complete = t.history.completeSince(now);
            } else {
                latest = t.latest.since(ask.sinceMicros(), null);
                // the latest rows are complete for no period of history; as latest, since the retention's start
                complete = ask.latest() ? now - t.schema.latestRetention().toNanos() / 1000 : now;
            }
        }
        List<TableRow> rows;
        if (history != null) {
            rows = KeptHistory.answer(name, t.schema, q, history);
        } else {
            rows = new ArrayList<>();
            for (LatestRows.Kept k : latest) {
                if (q.filter().test(k.row())) {
                    rows.add(new TableRow(name, k.insertMicros(), k.row()));
                }
            }
            if (!ask.latest()) {
                rows = KeptHistory.ordered(rows, q);
            }
        }
        answers.history(m, t.schema, ask, maxRows, new TableHistory(rows, complete));
    }

    /** The query parsed, from those parsed before when it was; refused ones are parsed again each time. */
    private TableQuery parse(String sql) {
        TableQuery q = parsedQueries.get(sql);
        if (q == null) {
            q = TableQuery.parse(sql);
            if (parsedQueries.size() >= PARSED) {
                parsedQueries.clear();
            }
            parsedQueries.put(sql, q);
        }
        return q;
    }

    private TableState stateFor(String table) {
        TableState t = tables.get(table);
        if (t == null) {
            if (archives.contains(table)) {
                throw new TableException("table " + table + " is archived by " + name + ", which answers history and"
                        + " latest queries (TABLE_HISTORY), not continuous ones or TABLE_LATEST: ask its producers");
            }
            throw new TableException("table " + table + " is not published by " + name);
        }
        return t;
    }

    /** Removes the rows older than the table's latest and history retention; under the table's lock. */
    private static void purge(TableState t, long nowMicros) {
        long oldest = nowMicros - t.schema.latestRetention().toNanos() / 1000;
        t.latest.purge(oldest);
        if (t.history != null) {
            t.history.purge(nowMicros);
        }
    }

    /**
     * The producer's clock, for insert times: microseconds since the epoch. The wall clock is read once every
     * {@link #CLOCK_ANCHOR_NANOS} and the monotonic clock carries it on in between: {@code Instant.now} is a call
     * into the VM, twice {@code System.nanoTime}'s cost, and inserts read the clock once a row. Linux slews both
     * clocks alike, so they part by the moments between their readings: a new anchor that would put the time
     * back by less than {@link #CLOCK_STEP_MICROS} (a microsecond, as a rule) keeps it where it was, so that one
     * thread's inserts never go back in time; a step of the wall clock shows within 100 ms.
     */
    static long nowMicros() {
        return nowMicros(System.nanoTime());
    }

    /** {@link #nowMicros()} at {@code nanos}, a reading of {@code System.nanoTime} just taken. */
    private static long nowMicros(long nanos) {
        ClockAnchor a = anchor;
        long since = nanos - a.nanos();
        if (since >= 0 && since < CLOCK_ANCHOR_NANOS) {
            return a.micros() + since / 1000;
        }
        long carried = a.micros() + since / 1000;
        long wall = wallMicros();
        a = new ClockAnchor(nanos, wall < carried && carried - wall < CLOCK_STEP_MICROS ? carried : wall);
        anchor = a;
        return a.micros();
    }

    private static long wallMicros() {
        Instant now = Instant.now();
        return now.getEpochSecond() * 1_000_000 + now.getNano() / 1000;
    }

    private void reply(Message m, byte[] data) {
        answers.reply(m, data);
    }

    private void error(Message m, ErrorCode code, String sentence) {
        answers.error(m, code, sentence);
    }
}
