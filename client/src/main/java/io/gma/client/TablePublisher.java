package io.gma.client;

import io.gma.registry.api.ColumnDeclaration;
import io.gma.registry.api.Publication;
import io.gma.registry.api.RegistryClient;
import io.gma.registry.api.RegistryException;
import io.gma.registry.api.TableDeclaration;
import io.gma.tables.BoundQuery;
import io.gma.tables.Column;
import io.gma.tables.InsertStatement;
import io.gma.tables.Row;
import io.gma.tables.RowEncoder;
import io.gma.tables.TableException;
import io.gma.tables.TableQuery;
import io.gma.tables.TableSchema;
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
import java.util.function.Predicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A producer's monitoring tables (issue 23, docs/tables.md): the tables it declared, the latest row of each
 * primary key within the table's latest retention, and the continuous queries of its consumers. An insert is
 * checked against the schema, kept as the latest of its key, and sent as TABLE_ROW to each subscription whose
 * WHERE it satisfies: only matching rows cross the network. TABLE_QUERY, TABLE_CANCEL and TABLE_LATEST come from
 * the {@link Inbox} ({@link TableWire}), and TABLE_HISTORY ({@link HistoryWire}): answered from the rows a table
 * with a history retention keeps ({@link KeptHistory}), or for a table this producer archives, by its
 * {@link TableArchive}.
 *
 * <p>Threads: inserts on the application's threads, queries on the links' event loops. Each table's state is
 * guarded by its own lock, held only to update or copy the maps; rows are sent after it is released.
 */
final class TablePublisher {
    private static final Logger LOG = LoggerFactory.getLogger(Endpoint.class);
    /** Bytes the answer's envelope may take within a message, beside its rows. */
    private static final int ENVELOPE_MARGIN = 1024;
    /** How often inserts sweep a table's latest rows for those past its retention, at most. */
    private static final long PURGE_MICROS = 1_000_000;
    /** The most queries kept parsed. */
    private static final int PARSED = 256;
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

    /** A consumer's query, as it subscribed it. */
    private record Subscription(String consumer, long queryId, BoundQuery query) {
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
     * @param maxMessageBytes the endpoint's limit, which bounds a TABLE_LATEST answer
     */
    TablePublisher(String name, RegistryClient registry, Receipts outbox, Outbox control, int maxMessageBytes) {
        this.name = name;
        this.registry = registry;
        this.outbox = outbox;
        this.maxAnswerBytes = Math.max(ENVELOPE_MARGIN, maxMessageBytes - ENVELOPE_MARGIN);
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
     * Checks {@code row}, keeps it as its key's latest and sends it to every subscription it matches. The row is
     * checked and encoded in one walk, once, whatever the number of subscriptions: each TABLE_ROW's data is the
     * same bytes behind its own query id.
     *
     * @return the number of subscriptions it was sent to
     * @throws TableException naming the table, column or value that does not fit
     */
    int insert(String table, Row row) {
        TableState t = state(table);
        long now = nowMicros();
        Subscription[] subscriptions;
        byte[][] data = null; // the TABLE_ROW for subscriptions[i], or null where the row does not match
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
                if (s.query().filter().test(row)) {
                    if (data == null) {
                        data = new byte[subscriptions.length][];
                    }
                    data[i] = t.encoder.envelope(s.queryId(), now);
                    matching++;
                }
            }
        }
        for (int i = 0; matching > 0 && i < subscriptions.length; i++) {
            if (data[i] != null) {
                send(table, subscriptions[i].consumer(), data[i]);
            }
        }
        return matching;
    }

    /** Sends a TABLE_ROW, after the table's lock is let go: under BLOCK, the send may wait for room. */
    private void send(String table, String consumer, byte[] data) {
        try {
            // no future asked of the Sent: a consumer that is gone is dropped by the Inbox (ERROR NO_ROUTE)
            // or the endpoint (the registry no longer knows it), and a future per row costs the sender and
            // the link's ACK handling more than the row itself
            outbox.send(consumer, TableWire.TABLE_ROW, data);
        } catch (EndpointException ex) {
            LOG.debug("{}: row of {} not sent to {}: {}", name, table, consumer, ex.getMessage());
            if (ex.code() == ErrorCode.NO_ROUTE) {
                dropConsumer(consumer);
            }
        }
    }

    /** Drops every subscription of {@code consumer}, which went away. */
    void dropConsumer(String consumer) {
        for (TableState t : tables.values()) {
            synchronized (t) {
                t.subscriptions(s -> !s.consumer().equals(consumer), null);
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
                        t.subscriptions(s -> !s.consumer().equals(m.from()) || s.queryId() != id, null);
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
            t.subscriptions(s -> !s.consumer().equals(m.from()) || s.queryId() != id, new Subscription(m.from(), id,
                    q));
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
        long nanos = System.nanoTime();
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
