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
import java.nio.ByteBuffer;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
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
 * query's messages in the order they were taken, by one thread at a time ({@link Channel}). With a durable outbox
 * each row goes alone, sent by its inserting thread before the insert returns, and no channel is used.
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
    /**
     * A TABLE_ROWS goes before its data would pass this many bytes (or the endpoint's answer limit, if lower): a
     * consumer takes messages of this size and its header at least (docs/tables.md).
     */
    static final int BATCH_BYTES = 4 * 1024;
    /** Messages taken for a query that may wait for its drainer before an inserting thread waits too. */
    static final int MAX_OUT = 4;
    /** Messages that may wait for a drainer before an insert on a link's event loop drops its own. */
    static final int MAX_OUT_ON_LOOP = 256;
    /** {@link Channel#waitingSince} when no row waits. */
    private static final long NOT_WAITING = Long.MIN_VALUE;
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
    /** With a durable outbox, each row goes alone, and is in the outbox once its insert returns. */
    private final boolean durable;
    /** The endpoint closes: {@link #flushAll} sends what waits. */
    private volatile boolean closing;
    /** Closing: the consumers whose queue stayed full (a send waited the block timeout); nothing more to them. */
    private final Set<String> fullAtClose = ConcurrentHashMap.newKeySet();
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

    /** A consumer's query, as it subscribed it, and the channel its rows go by. */
    private record Subscription(String consumer, long queryId, BoundQuery query, Channel channel) {
    }

    /** A TABLE_ROW or TABLE_ROWS taken to go. */
    private record Out(long ticket, Command command, byte[] data, boolean onLoop) {
    }

    /**
     * The rows of one consumer's query on their way (kept when the consumer subscribes the same query id again): the
     * batch that waits for more rows, guarded by the table's lock; and the messages taken to go, in the order they
     * were taken, guarded by this object's monitor. One thread at a time sends them, the drainer: an inserting
     * thread that found nobody draining (up to its own message), or the connecting pool (what the timer took, and
     * what an inserting thread or a link's event loop left). A thread that takes one while another drains leaves
     * it to that one, and waits only while more than {@link #MAX_OUT} wait before it: the send queue's
     * backpressure reaches the inserting threads, and no thread piles up behind a full queue.
     */
    private static final class Channel {
        final String consumer;
        /** The rows that wait for more; made at the first. Under the table's lock, as are the two times. */
        RowBatch batch;
        /**
         * When the batch's first row came, System.nanoTime, or {@link #NOT_WAITING}: written under the table's
         * lock, read by the timer without it, which then looks again under it.
         */
        volatile long waitingSince = NOT_WAITING;
        /** When a message was last taken, System.nanoTime; long ago at first. */
        long takenNanos;
        private final ArrayDeque<Out> out = new ArrayDeque<>();
        private boolean draining;
        /**
         * Its query was cancelled, or replaced by another of the same id (a consumer that restarted numbers its
         * queries afresh): what it still holds is not sent, as it would reach whatever query has that id now.
         */
        private volatile boolean cancelled;
        /** Messages taken, and sent (or failed, or dropped): the ticket of the next, and how far they went. */
        private long taken;
        private long sent;

        Channel(String consumer, long nanos) {
            this.consumer = consumer;
            this.takenNanos = nanos - LINGER_NANOS;
        }

        /** Its messages go no more ({@link #cancelled}). */
        void cancel() {
            cancelled = true;
        }

        /** Whether rows wait in the batch; under the table's lock. */
        boolean waiting() {
            return batch != null && batch.rows() > 0;
        }

        /** Queues a message taken (under the table's lock, so in the order taken); returns its ticket. */
        synchronized long queue(Command command, byte[] data) {
            out.addLast(new Out(taken, command, data, IoThreads.isCurrent()));
            return taken++;
        }

        /**
         * The drainer's next message if a link's event loop took it, or null (the drainer stays so: it lets go
         * with {@link #abandon}).
         */
        synchronized Out nextTakenOnLoop() {
            Out o = out.peekFirst();
            return o == null || !o.onLoop() ? null : out.pollFirst();
        }

        /** Messages taken and not yet sent. */
        synchronized long backlog() {
            return taken - sent;
        }

        /** Becomes the drainer if nobody is; whether it did. */
        synchronized boolean claim() {
            if (draining) {
                return false;
            }
            draining = true;
            return true;
        }

        /** The drainer's next message, or null: then it is the drainer no more. */
        synchronized Out next() {
            Out o = out.pollFirst();
            if (o == null) {
                draining = false;
                notifyAll();
            }
            return o;
        }

        /** The drainer sent (or failed) one. */
        synchronized void wentOne() {
            sent++;
            notifyAll();
        }

        /** The drainer stops: what it leaves goes with the next one; whether it left any. */
        synchronized boolean abandon() {
            draining = false;
            notifyAll();
            return !out.isEmpty();
        }

        /**
         * Waits, uninterruptibly, until at most {@code behind} messages taken before ticket {@code ticket} are
         * unsent (-1: until that one went too), or nobody drains (then the caller drains what is left).
         */
        synchronized void awaitRoom(long ticket, long behind) {
            boolean interrupted = false;
            while (draining && ticket - sent > behind) {
                try {
                    wait();
                } catch (InterruptedException ex) {
                    interrupted = true; // the rows are taken: they go, and this thread's turn with them
                }
            }
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** One declared table: its schema, its latest rows by key and its subscriptions; guarded by itself. */
    private static final class TableState {
        private static final Subscription[] NONE = {};
        final TableSchema schema;
        final LatestRows latest;
        /**
         * The subscriptions, replaced (never changed) when one comes or goes: an insert that found some matching
         * sends to them after it let go of the lock, and the timer looks at them without it.
         */
        volatile Subscription[] subscriptions = NONE;
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
        this.durable = durable;
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
        Subscription[] subscriptions;
        long[] tickets = null; // what each subscription took to go now, or -1
        byte[][] alone = null; // with a durable outbox: each subscription's TABLE_ROW, or null
        boolean onLoop = IoThreads.isCurrent();
        int matching = 0;
        synchronized (t) {
            long nanos = System.nanoTime(); // under the lock: no other thread took a message since
            long now = nowMicros(nanos);
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
                if (!s.query().filter().test(row)) {
                    continue;
                }
                if (durable) {
                    // sent from this thread once the lock is let go, before the insert returns: in the outbox then
                    if (alone == null) {
                        alone = new byte[subscriptions.length][];
                    }
                    alone[i] = t.encoder.envelope(s.queryId(), now);
                    matching++;
                    continue;
                }
                if (onLoop && s.channel().backlog() > MAX_OUT_ON_LOOP) {
                    // a loop does not wait for the consumer: this row is not taken for it (nobody else's is lost)
                    LOG.debug("{}: a row of {} not sent to {}: {} messages wait for it, and this is a link's event"
                            + " loop", name, table, s.consumer(), MAX_OUT_ON_LOOP);
                    continue;
                }
                matching++;
                long ticket = add(t, s.channel(), s.queryId(), now, nanos);
                if (ticket >= 0) {
                    if (tickets == null) {
                        tickets = new long[subscriptions.length];
                        Arrays.fill(tickets, -1);
                    }
                    tickets[i] = ticket;
                }
            }
        }
        for (int i = 0; alone != null && i < alone.length; i++) {
            if (alone[i] != null) {
                send(table, subscriptions[i].channel(), RowEnvelope.COMMAND, alone[i]);
            }
        }
        for (int i = 0; tickets != null && i < tickets.length; i++) {
            if (tickets[i] >= 0) {
                deliver(table, subscriptions[i].channel(), tickets[i]);
            }
        }
        return matching;
    }

    /**
     * Adds the row {@code t}'s encoder holds to channel {@code c} of query {@code queryId}; under the table's lock.
     * Takes what goes now: the row alone when the query was quiet, the batch when the row filled it, or the batch
     * before the row when the row would make it too long; returns its ticket. Otherwise returns -1, and the timer
     * will take the batch when its linger ends.
     */
    private long add(TableState t, Channel c, long queryId, long insertMicros, long nanos) {
        boolean empty = !c.waiting();
        if (empty && nanos - c.takenNanos >= LINGER_NANOS) {
            return take(c, RowEnvelope.COMMAND, t.encoder.envelope(queryId, insertMicros), nanos);
        }
        if (c.batch == null) {
            c.batch = new RowBatch(queryId);
        }
        long before = -1;
        if (!empty && c.batch.bytesWith(t.encoder.length()) > batchBytes) {
            before = takeBatch(c, nanos);
            empty = true;
        }
        c.batch.add(t.encoder, insertMicros);
        if (empty) {
            c.waitingSince = nanos;
        }
        if (before < 0 && (c.batch.rows() >= BATCH_ROWS || c.batch.bytes() >= batchBytes)) {
            return takeBatch(c, nanos);
        }
        if (!t.flushArmed) {
            armFlush(t, c.waitingSince + LINGER_NANOS - nanos);
        }
        return before;
    }

    /** Takes the batch of {@code c} to go; under the table's lock. Returns its ticket. */
    private static long takeBatch(Channel c, long nanos) {
        c.waitingSince = NOT_WAITING;
        return take(c, RowBatch.COMMAND, c.batch.take(), nanos);
    }

    /** Takes a message to go by {@code c}, after those taken before; under the table's lock. Returns its ticket. */
    private static long take(Channel c, Command command, byte[] data, long nanos) {
        c.takenNanos = nanos;
        return c.queue(command, data);
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

    /**
     * On the timer: takes the batches of {@code t} whose first row waited its linger, and has the connecting pool
     * send them where nobody drains. A batch whose channel has {@link #MAX_OUT} messages waiting already is left
     * to grow: the insert that fills it waits for room.
     */
    private void flushDue(TableState t) {
        long nanos = System.nanoTime();
        long first = Long.MAX_VALUE;
        for (Subscription s : t.subscriptions) {
            long since = s.channel().waitingSince;
            if (since != NOT_WAITING) {
                first = Math.min(first, since + LINGER_NANOS - nanos);
            }
        }
        if (first > 0 && first != Long.MAX_VALUE) {
            // none is due yet (rows that stream refill their batches within the linger): a look again when the
            // first is, without the table's lock, which the inserts hold
            try {
                timer.schedule(() -> flushDue(t), first, TimeUnit.NANOSECONDS);
            } catch (RejectedExecutionException closing) {
                // close() takes what waits
            }
            return;
        }
        List<Subscription> took = new ArrayList<>();
        synchronized (t) {
            t.flushArmed = false;
            nanos = System.nanoTime();
            long next = Long.MAX_VALUE;
            for (Subscription s : t.subscriptions) {
                Channel c = s.channel();
                if (!c.waiting()) {
                    continue;
                }
                long wait = c.waitingSince + LINGER_NANOS - nanos;
                if (wait > 0) {
                    next = Math.min(next, wait);
                } else if (c.backlog() < MAX_OUT) {
                    takeBatch(c, nanos);
                    took.add(s);
                } else {
                    next = Math.min(next, LINGER_NANOS); // its queue is full: a look again in a while
                    took.add(s); // and if nobody drains it (its drainer failed), the pool does
                }
            }
            if (next != Long.MAX_VALUE) {
                armFlush(t, next);
            }
        }
        for (Subscription s : took) {
            handOff(t.schema.name(), s.channel());
        }
    }

    /** Has the connecting pool drain {@code c}, unless somebody drains it already. */
    private void handOff(String table, Channel c) {
        if (!c.claim()) {
            return;
        }
        try {
            sender.execute(() -> drain(table, c, Long.MAX_VALUE));
        } catch (RejectedExecutionException closing) {
            c.abandon(); // close() sends what waits
        } catch (Throwable ex) { // a thread it could not start: never left claimed with nobody draining
            c.abandon();
            throw ex;
        }
    }

    /**
     * Takes every row that waits, of every table, and sends it, waiting until it went: the endpoint closes. A
     * consumer whose queue stays full (its send waited the block timeout) gets nothing more.
     */
    void flushAll() {
        closing = true;
        for (TableState t : tables.values()) {
            List<Channel> all = new ArrayList<>();
            synchronized (t) {
                long nanos = System.nanoTime();
                for (Subscription s : t.subscriptions) {
                    Channel c = s.channel();
                    if (c.waiting()) {
                        takeBatch(c, nanos);
                    }
                    all.add(c);
                }
            }
            for (Channel c : all) {
                while (!c.claim()) {
                    c.awaitRoom(Long.MAX_VALUE, 0); // another thread drains: until it is done
                }
                drain(t.schema.name(), c, Long.MAX_VALUE); // what is left, if anything
            }
        }
    }

    /**
     * After the table's lock is let go: sends the message of ticket {@code ticket}, and those taken before it, when
     * nobody else drains {@code c}; else leaves it to the drainer, waiting while more than {@link #MAX_OUT} are
     * unsent before it.
     *
     * <p>On a link's event loop it never waits for another thread, whose send may wait for room that this loop
     * makes, and sends no other thread's rows (a full queue fails a send on the loop, where they would have
     * waited): it sends those a loop took, at the head of the channel, and leaves the rest to the connecting pool.
     * (An insert on a loop takes no row for a subscription that {@link #MAX_OUT_ON_LOOP} messages wait for.)
     */
    private void deliver(String table, Channel c, long ticket) {
        if (IoThreads.isCurrent()) {
            if (c.claim()) {
                drainOnLoop(table, c);
            }
            return;
        }
        if (c.claim()) {
            drain(table, c, ticket);
            return;
        }
        c.awaitRoom(ticket, MAX_OUT);
        if (c.claim()) {
            drain(table, c, ticket); // the drainer stopped meanwhile: what is left goes from here
        }
    }

    /** As the drainer of {@code c}, on a link's event loop: what loops took, then the rest to the pool. */
    private void drainOnLoop(String table, Channel c) {
        try {
            for (Out o = c.nextTakenOnLoop(); o != null; o = c.nextTakenOnLoop()) {
                sendOne(table, c, o);
            }
        } finally {
            leave(table, c);
        }
    }

    /**
     * As the drainer of {@code c}: sends what it holds, in order, up to ticket {@code until} at least; what others
     * queued after that goes on the connecting pool, so that an inserting thread does not send for every other.
     */
    private void drain(String table, Channel c, long until) {
        boolean drainer = true; // until next() finds nothing left, and lets go itself
        try {
            for (Out o = c.next(); o != null; o = c.next()) {
                sendOne(table, c, o);
                if (o.ticket() >= until) {
                    return; // its own went: what others queued after it goes on the pool
                }
            }
            drainer = false;
        } finally {
            if (drainer) {
                leave(table, c);
            }
        }
    }

    /** The drainer of {@code c} stops: what it leaves goes on the connecting pool. */
    private void leave(String table, Channel c) {
        if (c.abandon()) {
            handOff(table, c);
        }
    }

    /** As the drainer of {@code c}: sends {@code o}, which went then, whatever the send did. */
    private void sendOne(String table, Channel c, Out o) {
        try {
            send(table, c, o.command(), o.data());
        } finally {
            c.wentOne();
        }
    }

    /** Sends one message to {@code c}'s consumer; a failure is that message's (logged), and ends nothing else. */
    private void send(String table, Channel c, Command command, byte[] data) {
        if (c.cancelled) {
            return; // its query is gone: the consumer may have given its id to another
        }
        if (closing && fullAtClose.contains(c.consumer)) {
            return; // closing, and this consumer's queue stayed full: its waiting rows are dropped
        }
        try {
            // no future asked of the Sent: a consumer that is gone is dropped by the Inbox (ERROR NO_ROUTE) or the
            // endpoint (the registry no longer knows it), and a future per message costs the sender and the
            // link's ACK handling more than the rows
            outbox.send(c.consumer, command, data);
        } catch (EndpointException ex) {
            LOG.debug("{}: rows of {} not sent to {}: {}", name, table, c.consumer, ex.getMessage());
            if (ex.code() == ErrorCode.NO_ROUTE) {
                dropConsumer(c.consumer);
            } else if (ex.code() == ErrorCode.QUEUE_FULL && closing && fullAtClose.add(c.consumer)) {
                // one wait of the block timeout at close for this consumer, not one a message
                LOG.info("{}: closing; the rows that still wait for {}, whose queue is full, are not sent", name,
                        c.consumer);
            }
        } catch (RuntimeException ex) {
            LOG.warn("{}: rows of {} not sent to {}: {}", name, table, c.consumer, ex.toString());
        }
    }

    /** Drops every subscription of {@code consumer}, which went away. */
    void dropConsumer(String consumer) {
        for (TableState t : tables.values()) {
            unsubscribe(t, s -> s.consumer().equals(consumer));
        }
    }

    /** Drops the subscriptions of {@code t} that {@code gone} names; what their channels still hold is not sent. */
    private static void unsubscribe(TableState t, Predicate<Subscription> gone) {
        synchronized (t) {
            for (Subscription s : t.subscriptions) {
                if (gone.test(s)) {
                    s.channel().cancel();
                }
            }
            t.subscriptions(gone.negate(), null);
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
                    unsubscribe(t, s -> s.consumer().equals(m.from()) && s.queryId() == id);
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
        Predicate<Subscription> sameId = s -> s.consumer().equals(m.from()) && s.queryId() == id;
        synchronized (t) {
            // the same query again (its answer was late, or the consumer asserts it): its rows that wait or go are
            // kept, in order; another query of the same id (the consumer restarted, and numbers afresh) replaces it
            Channel channel = null;
            for (Subscription s : t.subscriptions) {
                if (sameId.test(s)) {
                    if (s.query().query().sql().equals(parsed.sql())) {
                        channel = s.channel();
                    } else {
                        s.channel().cancel();
                    }
                }
            }
            Subscription now = new Subscription(m.from(), id, q, channel != null ? channel
                    : new Channel(m.from(), System.nanoTime()));
            t.subscriptions(sameId.negate(), now);
        }
        for (TableState other : tables.values()) {
            if (other != t) {
                unsubscribe(other, sameId); // that id named a query of another table before
            }
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
        RowBatch answer = RowBatch.latestAnswer();
        RowEncoder encoder = new RowEncoder();
        for (LatestRows.Kept k : rows) {
            encoder.encode(t.schema, k.row());
            answer.add(encoder, k.insertMicros());
            if (answer.bytes() > maxAnswerBytes) {
                error(m, ErrorCode.TOO_LARGE, "the latest rows of " + t.schema.name() + " that match the query ("
                        + rows.size() + " rows) exceed the answer limit of " + maxAnswerBytes + " bytes of "
                        + name + "; narrow the WHERE");
                return;
            }
        }
        reply(m, answer.take());
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
        // the wall clock and the monotonic one read back to back: a thread preempted after nanos was read would
        // otherwise anchor the wall clock of later to it, and the next anchor would step the times back
        long at = System.nanoTime();
        long wall = wallMicros();
        long carried = a.micros() + (at - a.nanos()) / 1000;
        a = new ClockAnchor(at, wall < carried && carried - wall < CLOCK_STEP_MICROS ? carried : wall);
        anchor = a;
        return a.micros() - (at - nanos) / 1000;
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
