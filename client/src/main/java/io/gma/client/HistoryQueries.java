package io.gma.client;

import io.gma.tables.BoundQuery;
import io.gma.tables.TableException;
import io.gma.tables.TableQuery;
import io.gma.tables.TableSchema;
import io.gma.wire.ErrorCode;
import io.gma.wire.ProtocolException;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * History queries, in the consumer (issue 24; docs/tables.md, "History"): a history query goes to one archiver of
 * the table, the next if that one fails (in random order, those whose retention covers the period first); with no
 * archiver answering, to every primary producer whose history retention covers the period, and their answers are
 * merged. The answer is bounded: at most {@link #MAX_ROWS} rows, else a TOO_LARGE error that says so. The latest
 * rows of producers that do not answer a latest query come from an archiver the same way
 * ({@link #latestFromArchives}).
 *
 * <p>Threads: the application's, which wait for the answers. No state of its own.
 */
final class HistoryQueries {
    private static final Logger LOG = LoggerFactory.getLogger(Endpoint.class);
    /** The most rows one history answer holds. */
    static final int MAX_ROWS = 100_000;
    private final String name;
    private final Publishers publishers;
    private final Requests requests;
    private final Duration timeout;

    HistoryQueries(String name, Publishers publishers, Requests requests, Duration timeout) {
        this.name = name;
        this.publishers = publishers;
        this.requests = requests;
        this.timeout = timeout;
    }

    /** The rows of a history query since {@code since}, from an archiver or the primaries, in the query's order. */
    List<TableRow> history(String sql, Instant since) throws EndpointException {
        Answers.notOnEventLoop("history");
        TableQuery q = parse(sql);
        TableSchema schema = publishers.schemaOf(q.table());
        BoundQuery bound = q.bind(schema);
        long sinceMicros = micros(since);
        long now = TablePublisher.nowMicros();
        List<Publishers.Publisher> all = publishers.of(q, schema);
        List<Publishers.Publisher> archivers = new ArrayList<>();
        List<Publishers.Publisher> primaries = new ArrayList<>();
        for (Publishers.Publisher p : all) {
            if (p.archive() && !p.historyRetention().isZero()) {
                archivers.add(p);
            } else if (!p.archive() && covers(p, sinceMicros, now)) {
                primaries.add(p);
            }
        }
        List<String> failed = new ArrayList<>();
        for (Publishers.Publisher a : byCover(archivers, sinceMicros, now)) {
            try {
                return project(KeptHistory.merged(ask(a.name(), q, bound, false, sinceMicros).rows(), bound), bound);
            } catch (EndpointException ex) {
                if (fatal(ex)) {
                    throw ex;
                }
                LOG.info("{}: archiver {} did not answer the history of {}, trying another: {}", name, a.name(),
                        q.table(), ex.getMessage());
                failed.add(a.name() + " (" + ex.getMessage() + ")");
            }
        }
        if (primaries.isEmpty()) {
            throw new EndpointException(ErrorCode.NO_ROUTE, (archivers.isEmpty() ? "no archiver publishes "
                    + q.table() : "no archiver of " + q.table() + " answered: " + String.join("; ", failed))
                    + ", and none of its " + (all.size() - archivers.size()) + " producers keeps history back to "
                    + TableAnswers.instant(sinceMicros) + " (gma archive --tables " + q.table() + " runs an archiver;"
                    + " a producer keeps history when its table is declared with a history retention)");
        }
        Map<String, CompletableFuture<byte[]>> asked = new LinkedHashMap<>();
        for (Publishers.Publisher p : primaries) {
            asked.put(p.name(), send(p.name(), q, false, sinceMicros));
        }
        List<TableRow> rows = new ArrayList<>();
        for (Map.Entry<String, CompletableFuture<byte[]>> a : asked.entrySet()) {
            try {
                rows.addAll(read(a.getKey(), Answers.await(a.getValue(), timeout), q, bound));
            } catch (EndpointException ex) {
                if (fatal(ex)) {
                    throw ex;
                }
                LOG.info("{}: history of {} skips {}: {}", name, q.table(), a.getKey(), ex.getMessage());
                failed.add(a.getKey() + " (" + ex.getMessage() + ")");
            }
        }
        if (failed.size() == asked.size() + archivers.size()) {
            throw new EndpointException(ErrorCode.NO_ROUTE, "no archiver or producer of " + q.table() + " answered"
                    + " the history query: " + String.join("; ", failed));
        }
        List<TableRow> ordered = KeptHistory.merged(rows, bound);
        if (ordered.size() > MAX_ROWS) {
            throw new EndpointException(ErrorCode.TOO_LARGE, "the history of " + q.table() + " since "
                    + TableAnswers.instant(sinceMicros) + " that match the query are more than " + MAX_ROWS
                    + " rows from its " + asked.size() + " producers, the most a history answer holds; narrow the"
                    + " WHERE, shorten the period or add a LIMIT");
        }
        return project(ordered, bound);
    }

    /** The answer of one producer or archiver to a history query, as it gave it (each row projected). */
    TableHistory historyFrom(String producer, String sql, Instant since) throws EndpointException {
        Answers.notOnEventLoop("historyFrom");
        TableQuery q = parse(sql);
        BoundQuery bound = q.bind(publishers.schemaOf(q.table()));
        TableHistory h = ask(producer, q, bound, false, micros(since));
        return new TableHistory(project(h.rows(), bound), h.completeSinceMicros());
    }

    /**
     * The latest rows from the first archiver in {@code archivers} that answers, each within that archiver's latest
     * retention: rows not projected, each with its producer and the archiver; null when none answered.
     */
    TableHistory latestFromArchives(TableQuery q, BoundQuery bound, List<Publishers.Publisher> archivers)
            throws EndpointException {
        List<Publishers.Publisher> shuffled = new ArrayList<>(archivers);
        Collections.shuffle(shuffled);
        for (Publishers.Publisher a : shuffled) {
            long since = TablePublisher.nowMicros() - a.latestRetention().toNanos() / 1000;
            try {
                return ask(a.name(), q, bound, true, since);
            } catch (EndpointException ex) {
                if (fatal(ex)) {
                    throw ex;
                }
                LOG.info("{}: archiver {} did not answer the latest of {}: {}", name, a.name(), q.table(),
                        ex.getMessage());
            }
        }
        return null;
    }

    private static TableQuery parse(String sql) {
        TableQuery q = TableQuery.parseHistory(sql);
        if (q.limit() > MAX_ROWS) {
            throw new TableException("LIMIT " + q.limit() + " is over " + MAX_ROWS + ", the most rows a history"
                    + " answer holds");
        }
        return q;
    }

    /**
     * Whether {@code p} keeps its own rows back to {@code since}, within {@link #COVER_SLACK_MICROS}: "the last
     * hour" of a table kept for an hour is covered, though the question's clock ran on a little before it is asked.
     */
    private static boolean covers(Publishers.Publisher p, long since, long now) {
        return !p.historyRetention().isZero() && now - p.historyRetention().toNanos() / 1000 <= since
                + COVER_SLACK_MICROS;
    }

    /** How far past a retention a period may reach and count as covered: the time a question takes to ask. */
    static final long COVER_SLACK_MICROS = 5_000_000;

    /** Archivers whose retention covers the period first, in random order; then the others, longest first. */
    private static List<Publishers.Publisher> byCover(List<Publishers.Publisher> archivers, long since, long now) {
        List<Publishers.Publisher> covering = new ArrayList<>();
        List<Publishers.Publisher> shorter = new ArrayList<>();
        for (Publishers.Publisher a : archivers) {
            (covers(a, since, now) ? covering : shorter).add(a);
        }
        Collections.shuffle(covering);
        shorter.sort(Comparator.comparing(Publishers.Publisher::historyRetention).reversed());
        covering.addAll(shorter);
        return covering;
    }

    /** Errors that another archiver or producer would give as well: the query's, or the answer's size. */
    static boolean fatal(EndpointException ex) {
        return ex.code() == ErrorCode.MALFORMED || ex.code() == ErrorCode.TOO_LARGE
                || ex.code() == ErrorCode.FORBIDDEN;
    }

    private TableHistory ask(String to, TableQuery q, BoundQuery bound, boolean latest, long since)
            throws EndpointException {
        byte[] answer = Answers.await(send(to, q, latest, since), timeout);
        List<TableRow> rows = read(to, answer, q, bound); // checked that the answer's 8 bytes of time are there
        return new TableHistory(rows, ByteBuffer.wrap(answer).getLong(0));
    }

    private CompletableFuture<byte[]> send(String to, TableQuery q, boolean latest, long since) {
        return requests.requestAsync(to, TableWire.TABLE_HISTORY, HistoryWire.ask(latest, since, MAX_ROWS,
                q.sql()), timeout);
    }

    /** The rows of an answer that the query keeps (a producer that sends others is not believed). */
    private static List<TableRow> read(String from, byte[] answer, TableQuery q, BoundQuery bound)
            throws EndpointException {
        TableHistory h;
        try {
            h = HistoryWire.readAnswer(ByteBuffer.wrap(answer), bound.schema(), from);
        } catch (ProtocolException ex) {
            throw new EndpointException(ErrorCode.MALFORMED, from + " answered the history of " + q.table()
                    + " with bytes that are not rows: " + ex.getMessage(), ex);
        }
        if (h.rows().size() > MAX_ROWS) {
            throw new EndpointException(ErrorCode.TOO_LARGE, from + " answered the history of " + q.table() + " with "
                    + h.rows().size() + " rows, more than the " + MAX_ROWS + " asked for");
        }
        List<TableRow> kept = new ArrayList<>(h.rows().size());
        for (TableRow r : h.rows()) {
            if (bound.filter().test(r.row())) {
                kept.add(r);
            }
        }
        return kept;
    }

    private static List<TableRow> project(List<TableRow> rows, BoundQuery bound) {
        List<TableRow> out = new ArrayList<>(rows.size());
        for (TableRow r : rows) {
            out.add(new TableRow(r.producer(), r.insertMicros(), bound.project(r.row()), r.archiver()));
        }
        return out;
    }

    static long micros(Instant t) {
        try {
            return ChronoUnit.MICROS.between(Instant.EPOCH, t);
        } catch (ArithmeticException ex) {
            throw new IllegalArgumentException("since " + t + " is out of the range of microseconds since the epoch"
                    + " (a signed 64-bit count)", ex);
        }
    }
}
