package io.gma.archiver;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.gma.client.Consumer;
import io.gma.client.ContinuousQuery;
import io.gma.client.EndpointException;
import io.gma.client.TableRow;
import io.gma.tables.Row;
import io.gma.tables.TableException;
import io.gma.tables.TableSchema;
import io.gma.wire.ErrorCode;
import jakarta.servlet.ServletOutputStream;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The rows of monitoring tables for the dashboard's charts (docs/dashboard.md): the browser cannot speak GMA's
 * protocol, so the archiver's consumer asks for it and answers in JSON.
 *
 * <pre>
 *   GET /data/v1/series?table=host_cpu&amp;column=busy[&amp;by=host][&amp;where=cpu&amp;equals=-1][&amp;range=5m]...
 *       the history of the period ({@link Consumer#history}, the newest {@link #MAX_ROWS} rows at most), as at most
 *       {@link ChartRequest#MAX_SERIES} series of at most {@link ChartRequest#MAX_POINTS} points ({@link ChartSeries})
 *   GET /data/v1/live?...the same...&amp;after=MICROS
 *       Server-Sent Events: the rows inserted after MICROS (the series' {@code until}), caught up from the history
 *       first, then those of a continuous query of the same SQL, each once, in events of one batch every 500 ms
 * </pre>
 *
 * <p>Bounds: {@link #MAX_LIVE} live streams at once per archiver (503 past them), {@link #LIVE_QUEUE} rows waiting
 * per stream (more are dropped, counted and said in a {@code note} event), {@link #CATCH_UP} rows caught up. A
 * request the {@link ChartRequest} refuses is 400 with its sentence.
 */
final class TableData implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(Archiver.class);
    static final String PATH = "/data/v1/";
    /** The most live streams open at once. */
    static final int MAX_LIVE = 16;
    /** The most rows a series answer reads from the history: the newest of the period. */
    static final int MAX_ROWS = 50_000;
    /** The most rows a live stream catches up with, between the series' answer and its continuous query. */
    static final int CATCH_UP = 10_000;
    /** The most rows waiting to be written to one live stream. */
    static final int LIVE_QUEUE = 10_000;
    /** The most tables whose declarations are remembered. */
    private static final int MAX_SCHEMAS = 1024;
    private static final long BATCH_MILLIS = 500;
    /** A comment line this often keeps the stream open through proxies, and finds a browser that left. */
    private static final long HEARTBEAT_MILLIS = 5_000;
    private static final ObjectMapper JSON = new ObjectMapper();

    private final Consumer consumer;
    private final Semaphore liveSlots;
    private final int maxLive;
    private final Map<String, TableSchema> schemas = new ConcurrentHashMap<>();
    private final AtomicLong liveOpen = new AtomicLong();
    private volatile boolean closed;

    TableData(Consumer consumer) {
        this(consumer, MAX_LIVE);
    }

    /** @param maxLive the live streams open at once, {@link #MAX_LIVE} at most (fewer in tests) */
    TableData(Consumer consumer, int maxLive) {
        this.consumer = consumer;
        this.maxLive = Math.min(maxLive, MAX_LIVE);
        this.liveSlots = new Semaphore(this.maxLive);
    }

    /** The live streams open now. */
    long liveOpen() {
        return liveOpen.get();
    }

    void serve(String call, HttpServletRequest req, HttpServletResponse resp) throws IOException {
        ChartRequest q;
        try {
            q = ChartRequest.of(req::getParameter, this::declared);
        } catch (ChartRequest.Refused e) {
            plain(resp, 400, e.getMessage());
            return;
        } catch (Unanswered e) {
            plain(resp, 502, "the registry cannot say how the table is declared now: " + e.getMessage());
            return;
        }
        if (call.equals("series")) {
            series(q, resp);
        } else if (call.equals("live")) {
            live(q, req.getParameter("after"), resp);
        } else {
            plain(resp, 404, "GET " + PATH + call + " is not a call of the chart data: series or live");
        }
    }

    /** The table as the registry declares it, or null; a declaration never changes, so it is remembered. */
    private TableSchema declared(String table) {
        TableSchema s = schemas.get(table);
        if (s != null) {
            return s;
        }
        try {
            s = Declared.schema(consumer, table, Duration.ZERO);
        } catch (EndpointException e) {
            throw new Unanswered(e);
        }
        if (s != null && schemas.size() < MAX_SCHEMAS) {
            schemas.put(table, s);
        }
        return s;
    }

    /** The registry did not answer a declaration's look-up. */
    private static final class Unanswered extends RuntimeException {
        private static final long serialVersionUID = 1L;

        Unanswered(EndpointException cause) {
            super(cause.getMessage(), cause);
        }
    }

    private void series(ChartRequest q, HttpServletResponse resp) throws IOException {
        long now = Micros.now();
        long since = now - q.period().toNanos() / 1000;
        List<TableRow> rows;
        String note = null;
        try {
            rows = consumer.history(q.historySql(MAX_ROWS), Micros.instant(since));
        } catch (EndpointException e) {
            if (e.code() != ErrorCode.NO_ROUTE) {
                plain(resp, 502, "the history of " + q.schema().name() + " cannot be read now: " + e.getMessage());
                return;
            }
            rows = List.of();
            note = "no history: " + e.getMessage() + "; live rows only";
        } catch (TableException e) {
            plain(resp, 400, "the chart's query is refused: " + e.getMessage());
            return;
        }
        Map<String, Object> answer = ChartSeries.answer(q, rows, rows.size() >= MAX_ROWS, since, now);
        if (note == null && rows.size() >= MAX_ROWS) {
            note = "the period holds more than " + MAX_ROWS + " rows, the most an answer reads: the chart starts at"
                    + " the oldest of the newest " + MAX_ROWS + " (narrow it with where, or a shorter range)";
        }
        answer.put("note", note);
        byte[] body = JSON.writeValueAsBytes(answer);
        resp.setContentType("application/json");
        resp.setHeader("Cache-Control", "no-store");
        resp.setContentLength(body.length);
        resp.getOutputStream().write(body);
    }

    private void live(ChartRequest q, String afterParameter, HttpServletResponse resp) throws IOException {
        long after;
        try {
            after = afterParameter == null ? Micros.now() : Long.parseLong(afterParameter.trim());
        } catch (NumberFormatException e) {
            plain(resp, 400, "after \"" + afterParameter + "\" is not a time in microseconds since the epoch (the"
                    + " series' until)");
            return;
        }
        if (after < 0 || after > Micros.now() + 86_400_000_000L) {
            plain(resp, 400, "after " + after + " is outside 0.." + (Micros.now() + 86_400_000_000L)
                    + " microseconds since the epoch (now and a day)");
            return;
        }
        if (closed) {
            plain(resp, 503, "the archiver is stopping");
            return;
        }
        if (!liveSlots.tryAcquire()) {
            resp.setHeader("Retry-After", "10");
            plain(resp, 503, maxLive + " live charts are open at this archiver, its limit; close one (another tab)"
                    + " or try again later");
            return;
        }
        liveOpen.incrementAndGet();
        ArrayBlockingQueue<TableRow> queue = new ArrayBlockingQueue<>(LIVE_QUEUE);
        AtomicLong dropped = new AtomicLong();
        ContinuousQuery query = null;
        try {
            try {
                query = consumer.continuous(q.sql(), row -> {
                    if (!queue.offer(row)) {
                        dropped.incrementAndGet();
                    }
                });
            } catch (EndpointException | TableException e) {
                plain(resp, 502, "the rows of " + q.schema().name() + " cannot be followed now: " + e.getMessage());
                return;
            }
            stream(q, after, queue, dropped, resp);
        } finally {
            if (query != null) {
                query.close();
            }
            liveOpen.decrementAndGet();
            liveSlots.release();
        }
    }

    /** Writes the stream until the browser leaves or the archiver stops. */
    private void stream(ChartRequest q, long after, ArrayBlockingQueue<TableRow> queue, AtomicLong dropped,
            HttpServletResponse resp) throws IOException {
        resp.setContentType("text/event-stream");
        resp.setCharacterEncoding("UTF-8");
        resp.setHeader("Cache-Control", "no-store");
        ServletOutputStream out = resp.getOutputStream();
        write(out, ": rows of " + q.schema().name() + " after " + after + "\n\n");
        // what came between the series' answer and the continuous query, from the history; each row once
        Set<Identity> caughtUp = new HashSet<>();
        List<TableRow> rows = new ArrayList<>();
        try {
            for (TableRow r : consumer.history(q.sql() + " ORDER BY insert_time LIMIT " + CATCH_UP,
                    Micros.instant(after))) {
                if (r.insertMicros() > after) {
                    rows.add(r);
                    caughtUp.add(new Identity(r.producer(), r.insertMicros(), r.row()));
                }
            }
        } catch (EndpointException | TableException e) {
            LOG.debug("a live chart of {} catches up with nothing: {}", q.schema().name(), e.getMessage());
        }
        if (!rows.isEmpty()) {
            write(out, "event: rows\ndata: " + JSON.writeValueAsString(ChartSeries.points(q, rows)) + "\n\n");
            rows.clear();
        }
        long reported = 0;
        long lastWrite = System.nanoTime();
        while (!closed) {
            if (rows.isEmpty()) {
                TableRow first;
                try {
                    first = queue.poll(BATCH_MILLIS, TimeUnit.MILLISECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return;
                }
                if (first != null) {
                    rows.add(first);
                    queue.drainTo(rows, 1000);
                }
            }
            if (!caughtUp.isEmpty()) { // come live as well: sent already
                rows.removeIf(r -> caughtUp.remove(new Identity(r.producer(), r.insertMicros(), r.row())));
            }
            if (!rows.isEmpty()) {
                write(out, "event: rows\ndata: " + JSON.writeValueAsString(ChartSeries.points(q, rows)) + "\n\n");
                rows.clear();
                lastWrite = System.nanoTime();
            }
            long lost = dropped.get();
            if (lost > reported) {
                String sentence = lost + " rows were dropped: more than " + LIVE_QUEUE + " waited for this page";
                write(out, "event: note\ndata: " + JSON.writeValueAsString(Map.of("message", sentence)) + "\n\n");
                reported = lost;
            }
            if (System.nanoTime() - lastWrite > TimeUnit.MILLISECONDS.toNanos(HEARTBEAT_MILLIS)) {
                write(out, ": still here\n\n");
                lastWrite = System.nanoTime();
            }
        }
    }

    /** Who inserted a row, when, and its values: a row caught up and come live as well is sent once. */
    private record Identity(String producer, long insertMicros, Row row) {
    }

    private static void write(ServletOutputStream out, String event) throws IOException {
        out.write(event.getBytes(StandardCharsets.UTF_8));
        out.flush();
    }

    /** Answers {@code status} with a sentence, in plain text. */
    static void plain(HttpServletResponse resp, int status, String sentence) throws IOException {
        byte[] body = (sentence + "\n").getBytes(StandardCharsets.UTF_8);
        resp.setStatus(status);
        resp.setContentType("text/plain; charset=utf-8");
        resp.setContentLength(body.length);
        resp.getOutputStream().write(body);
    }

    /** Ends the live streams (each within 500 ms) and refuses new ones. */
    @Override
    public void close() {
        closed = true;
    }
}
