package io.gma.archiver;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.gma.client.Consumer;
import io.gma.client.Producer;
import io.gma.registry.Scrape;
import io.gma.security.Security;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The archiver's HTTP listener ({@link Archiver.Builder#http}), for real: a registry and two domains, a producer of
 * host_cpu in east, the archiver in west on H2. The chart data answers the history of a period as series per key,
 * then the rows inserted after it, caught up and live, each once; it refuses what the bounds and the declared schema
 * do not allow, with a sentence naming the value and the limit; it keeps a bounded number of live streams; and
 * {@code /metrics} counts per table.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class ChartDataTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    private final List<AutoCloseable> closing = new ArrayList<>();
    private TwoDomains domains;
    private Producer producer;
    private Archiver archiver;
    private String url;

    @TempDir
    Path dir;

    @BeforeEach
    void start() throws Exception {
        domains = new TwoDomains();
        producer = closed(domains.producer("east", "cpu").build());
        producer.declare(Rows.schema(Duration.ZERO));
        archiver = closed(domains.archiver("west").tables(Rows.TABLE).retention(Duration.ofHours(1)).dataDir(dir)
                .http("127.0.0.1", 0).build());
        url = archiver.httpUrl().orElseThrow();
    }

    @AfterEach
    void stop() throws Exception {
        for (int i = closing.size() - 1; i >= 0; i--) {
            closing.get(i).close();
        }
        domains.close();
    }

    private <T extends AutoCloseable> T closed(T c) {
        closing.add(c);
        return c;
    }

    /** Rows {@code from}..{@code to - 1} of east, on hosts e0..e3; each seq%7 == 3 has a NaN load1. */
    private void insert(int from, int to) throws Exception {
        for (int i = from; i < to; i++) {
            producer.insert(Rows.TABLE, Rows.row("east", i, 4));
        }
    }

    private HttpResponse<String> get(String path) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create(url + path)).timeout(Duration.ofSeconds(30)).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    private JsonNode series(String query) throws Exception {
        HttpResponse<String> r = get("/data/v1/series?" + query);
        assertEquals(200, r.statusCode(), r.body());
        return JSON.readTree(r.body());
    }

    @Test
    void theHistoryOfThePeriodThenEachRowInsertedAfterItOnce() throws Exception {
        insert(0, 40);
        await().atMost(Duration.ofSeconds(30)).until(() -> Rows.stored(archiver) == 40);
        assertEquals(List.of("charts"), domains.consumer("west", "look").build().query("SELECT key FROM attributes"
                + " WHERE value = '" + url + "'").rows().stream().map(r -> r.get(0)).toList());

        JsonNode s = series("table=host_cpu&column=load1");
        assertEquals(40, s.get("rowsRead").asInt());
        assertEquals("[\"host\"]", s.get("by").toString()); // the key, by default
        assertEquals(500, s.get("bucketMillis").asLong()); // 5 minutes in 600 points
        assertEquals(4, s.get("keys").asInt());
        // the highest latest values first: e3 39 (9.75), e1 37 (9.25), e0 36 (9.0), e2 34 (8.5: 38 is NaN)
        List<String> keys = new ArrayList<>();
        s.get("series").forEach(x -> keys.add(x.get("key").asText() + "=" + x.get("latest").asDouble()));
        assertEquals(List.of("e3=9.75", "e1=9.25", "e0=9.0", "e2=8.5"), keys);
        int points = 0;
        for (JsonNode x : s.get("series")) {
            for (JsonNode p : x.get("points")) {
                assertEquals(0, p.get(0).asLong() % 500, p.toString()); // buckets the page shares between series
                points++;
            }
        }
        assertTrue(points >= 4 && points <= 12, points + " points: the rows came within a second or so");
        // e0's rows are 0, 4, ..., 36, 24 a NaN (left out): one bucket holds the mean of the others, 39 / 9, and
        // several buckets means within their range
        JsonNode e0 = s.get("series").get(2).get("points");
        for (JsonNode p : e0) {
            double v = p.get(1).asDouble();
            assertTrue(e0.size() == 1 ? Math.abs(v - 39.0 / 9) < 1e-9 : v >= 0 && v <= 9, e0.toString());
        }
        assertEquals(List.of("e3", "e1"), series("table=host_cpu&column=load1&top=2").findValues("key").stream()
                .map(JsonNode::asText).toList());
        assertEquals(1, series("table=host_cpu&column=load1&where=host&equals=e1").get("series").size());
        long until = s.get("until").asLong();

        // rows inserted after the answer and before the live stream are caught up; those after come live
        insert(40, 45);
        await().atMost(Duration.ofSeconds(30)).until(() -> Rows.stored(archiver) == 45);
        try (Events live = new Events(url + "/data/v1/live?table=host_cpu&column=load1&after=" + until)) {
            Set<Double> got = new HashSet<>();
            List<Double> all = new ArrayList<>();
            boolean inserted = false;
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (got.size() < 9 && System.nanoTime() < deadline) {
                String[] event = live.events.poll(500, TimeUnit.MILLISECONDS);
                if (event != null && event[0].equals("rows")) {
                    for (JsonNode row : JSON.readTree(event[1])) {
                        assertEquals("e" + ((int) (row.get(2).asDouble() * 4) % 4), row.get(0).asText());
                        assertTrue(row.get(1).asLong() * 1000 > until - 1000, row.toString());
                        all.add(row.get(2).asDouble());
                        got.add(row.get(2).asDouble());
                    }
                }
                if (!inserted && got.size() == 5) {
                    insert(45, 50); // live
                    inserted = true;
                }
            }
            // 40..49 but 45 (NaN), each once
            assertEquals(Set.of(10.0, 10.25, 10.5, 10.75, 11.0, 11.5, 11.75, 12.0, 12.25), got);
            assertEquals(9, all.size(), all.toString());
        }
    }

    @Test
    void whatTheBoundsAndTheSchemaDoNotAllowIsRefusedNamingTheValueAndTheLimit() throws Exception {
        String[][] refused = {
            {"table=host_cpu&column=load1&points=5000", "points 5000 is outside 10..1000, the points a series has in"
                + " an answer"},
            {"table=host_cpu&column=load1&top=21", "top 21 is outside 1..20, the series a chart draws"},
            {"table=host_cpu&column=load1&range=2d", "range \"2d\" is not one of 5m, 1h, 1d"},
            {"table=nope&column=load1", "table \"nope\" is not declared in the registry"},
            {"table=host_cpu&column=nope", "column \"nope\" is not a column of host_cpu (site, host, seq, load1, up,"
                + " sampled)"},
            {"table=host_cpu&column=host", "column host of host_cpu is STRING; a chart draws an INTEGER or DOUBLE"
                + " column (seq, load1)"},
            {"table=host_cpu&column=load1&by=seq", "by \"seq\" is not a key column of host_cpu (host)"},
            {"table=" + enc("host_cpu; DROP TABLE host_cpu") + "&column=load1", "table \"host_cpu; DROP TABLE"
                + " host_cpu\" is not a name of a table or column: 1..64 of a-z, 0-9 and _, starting with a letter"},
            {"table=host_cpu&column=" + enc("load1) OR (1=1"), "column \"load1) OR (1=1\" is not a name of a table or"
                + " column: 1..64 of a-z, 0-9 and _, starting with a letter"},
            {"table=host_cpu&column=load1&where=seq&equals=" + enc("1 OR 1=1"), "equals \"1 OR 1=1\" is not an"
                + " integer, as seq of host_cpu is"},
            {"table=host_cpu&column=load1&where=host&equals=" + "x".repeat(257), "equals is 257 characters, over the"
                + " limit of 256"},
            {"column=load1", "table is required: the table to chart, such as table=host_cpu"},
        };
        for (String[] r : refused) {
            for (String call : List.of("series", "live")) {
                HttpResponse<String> answer = get("/data/v1/" + call + "?" + r[0]);
                assertEquals(400, answer.statusCode(), r[0]);
                assertEquals(r[1], answer.body().strip(), r[0]);
            }
        }
        // a string that would break out of its quotes is a value like any other
        insert(0, 8);
        await().atMost(Duration.ofSeconds(30)).until(() -> Rows.stored(archiver) == 8);
        assertEquals(0, series("table=host_cpu&column=load1&where=host&equals=" + enc("x' OR '1'='1")).get("series")
                .size());
        assertEquals(400, get("/data/v1/live?table=host_cpu&column=load1&after=yesterday").statusCode());
        HttpResponse<String> other = get("/data/v1/rows?table=host_cpu&column=load1");
        assertEquals(404, other.statusCode());
        assertEquals("GET /data/v1/rows is not a call of the chart data: series or live", other.body().strip());
    }

    @Test
    void liveStreamsAreBoundedPerProcessAndMetricsCountPerTable() throws Exception {
        // a listener of its own with room for two live streams
        Consumer reader = closed(domains.consumer("west", "reader").build());
        ArchiverHttp small = closed(ArchiverHttp.start("127.0.0.1", 0, Security.insecure(), domains.registry.url()));
        small.serve("reader", new TableData(reader, 2), () -> "");
        String live = small.url() + "/data/v1/live?table=host_cpu&column=load1";
        Events first = closed(new Events(live));
        try (Events second = new Events(live)) {
            assertNotNull(first.events.poll(20, TimeUnit.SECONDS), "the first stream opens");
            assertNotNull(second.events.poll(20, TimeUnit.SECONDS), "the second stream opens");
            HttpResponse<String> third = http.send(HttpRequest.newBuilder(URI.create(live)).build(),
                    HttpResponse.BodyHandlers.ofString());
            assertEquals(503, third.statusCode());
            assertEquals("2 live charts are open at this archiver, its limit; close one (another tab) or try again"
                    + " later", third.body().strip());
            first.close(); // the stream finds it gone at its next write: a row, or the heartbeat
            await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(300)).until(() -> {
                insert(0, 1);
                HttpResponse<Stream<String>> again = http.send(HttpRequest.newBuilder(URI.create(live)).build(),
                        HttpResponse.BodyHandlers.ofLines());
                again.body().close();
                return again.statusCode() == 200;
            });
        }

        // the archiver's own page: what it stored and deleted, per table
        await().atMost(Duration.ofSeconds(30)).until(() -> Rows.stored(archiver) > 0 && Rows.stored(archiver)
                == Scrape.get(url + "/metrics").value("gma_archiver_rows_stored_total", "table", "host_cpu"));
        long stored = Rows.stored(archiver);
        Scrape page = Scrape.get(url + "/metrics");
        assertEquals(0, page.value("gma_archiver_rows_duplicate_total", "table", "host_cpu"));
        assertEquals(0, page.value("gma_archiver_gaps_total", "table", "host_cpu"));
        assertEquals(1, page.value("gma_archiver_tables_archived"));
        assertEquals(0, page.value("gma_archiver_tables_waiting"));
        assertEquals(0, page.value("gma_archiver_live_charts"));
        archiver.sweep(Micros.now() + Duration.ofHours(2).toNanos() / 1000);
        page = Scrape.get(url + "/metrics");
        assertEquals(stored, page.value("gma_archiver_rows_deleted_total", "table", "host_cpu"));
        assertEquals(archiver.stats().rowsDeleted(), stored);
    }

    private static String enc(String s) {
        return URLEncoder.encode(s, StandardCharsets.UTF_8);
    }

    /**
     * A stream of Server-Sent Events, read on a thread of its own: each event as {@code [name, data]} ("open" for
     * the comment a stream starts with). Closing it closes the connection.
     */
    private final class Events implements AutoCloseable {
        final BlockingQueue<String[]> events = new LinkedBlockingQueue<>();
        private final Stream<String> lines;
        private final Thread reader;

        Events(String address) throws Exception {
            HttpResponse<Stream<String>> r = http.send(HttpRequest.newBuilder(URI.create(address)).build(),
                    HttpResponse.BodyHandlers.ofLines());
            assertEquals(200, r.statusCode());
            assertEquals("text/event-stream;charset=utf-8", r.headers().firstValue("Content-Type").orElse("")
                    .replace(" ", "").toLowerCase());
            lines = r.body();
            reader = new Thread(() -> {
                String[] event = {"message", null};
                try {
                    for (String line : (Iterable<String>) lines::iterator) {
                        if (line.startsWith(":")) {
                            events.add(new String[] {"open", line});
                        } else if (line.startsWith("event: ")) {
                            event[0] = line.substring(7);
                        } else if (line.startsWith("data: ")) {
                            event[1] = line.substring(6);
                        } else if (line.isEmpty() && event[1] != null) {
                            events.add(event.clone());
                            event[0] = "message";
                            event[1] = null;
                        }
                    }
                } catch (RuntimeException closed) {
                    // the stream was closed: nothing more comes
                }
            }, "sse-reader");
            reader.setDaemon(true);
            reader.start();
        }

        @Override
        public void close() throws Exception {
            lines.close();
            reader.join(5000);
        }
    }
}
