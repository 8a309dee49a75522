package io.gma.pcservlet;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.gma.client.Consumer;
import io.gma.client.Incoming;
import io.gma.client.Producer;
import io.gma.registry.Registry;
import io.gma.wire.Command;
import io.gma.wire.Packed;
import java.io.IOException;
import java.net.InetAddress;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.Response;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@code GET /gma/v1/status} and {@code GET /metrics} of two real PC servlets, east and west, after a producer
 * in east has sent a few messages to a consumer in west through them.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class StatusPagesTest {
    /** A sample line of the Prometheus text format 0.0.4: name, optional labels, one value. */
    private static final Pattern SAMPLE = Pattern.compile(
            "[a-zA-Z_:][a-zA-Z0-9_:]*(\\{[^}]*\\})? ([-+0-9.eE]+|NaN|\\+Inf|-Inf)");
    private static final int SENT = 5;

    private final OkHttpClient http = new OkHttpClient();
    private final LinkedBlockingQueue<Incoming> received = new LinkedBlockingQueue<>();
    private Registry registry;
    private PcServer east;
    private PcServer west;
    private Producer producer;
    private Consumer consumer;

    /** An answer to a GET. */
    private record Page(int status, String contentType, String text) {
    }

    @BeforeEach
    void startAndSend() throws Exception {
        registry = Registry.builder().port(0).build().start();
        east = PcServer.builder("east", registry.url()).start();
        west = PcServer.builder("west", registry.url()).start();
        producer = Producer.builder().registry(registry.url()).domain("east").pcServlet(east.uplink())
                .label("sensor").build();
        consumer = Consumer.builder().registry(registry.url()).domain("west").pcServlet(west.uplink())
                .label("collector").onMessage(received::add).build();
        for (int i = 0; i < SENT; i++) {
            producer.send(consumer.name(), ("n=" + i).getBytes(UTF_8));
        }
        for (int i = 0; i < SENT; i++) {
            Incoming m = received.poll(10, TimeUnit.SECONDS);
            assertNotNull(m, "message " + i + " did not arrive");
            assertEquals("n=" + i, new String(m.data(), UTF_8));
        }
        // the consumer may get a message before either side has counted it: east counts on the 200
        awaitCounter(east, "messagesSent");
        awaitCounter(west, "delivered");
    }

    private void awaitCounter(PcServer pc, String counter) {
        await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(20))
                .until(() -> status(pc).get("counters").get(counter).asLong() >= SENT);
    }

    @AfterEach
    void stop() throws Exception {
        if (consumer != null) {
            consumer.close();
        }
        if (producer != null) {
            producer.close();
        }
        if (west != null) {
            west.close();
        }
        if (east != null) {
            east.close();
        }
        registry.close();
        http.dispatcher().executorService().shutdown();
        http.connectionPool().evictAll();
    }

    private Page get(String url) throws IOException {
        try (Response r = http.newCall(new Request.Builder().url(url).build()).execute()) {
            return new Page(r.code(), r.header("Content-Type"), r.body().string());
        }
    }

    private JsonNode status(PcServer pc) throws IOException {
        Page p = get(pc.url() + "/gma/v1/status");
        assertEquals(200, p.status(), p.text());
        assertNotNull(p.contentType());
        assertTrue(p.contentType().startsWith("application/json"), p.contentType());
        return new ObjectMapper().readTree(p.text());
    }

    private static JsonNode client(JsonNode status, String name) {
        for (JsonNode c : status.get("clients")) {
            if (c.get("name").asText().equals(name)) {
                return c;
            }
        }
        throw new AssertionError(name + " is not among the clients: " + status.get("clients"));
    }

    @Test
    void statusOfTheSendingSide() throws Exception {
        JsonNode s = status(east);
        assertEquals("east", s.get("domain").asText());
        assertEquals(Tunnel.VERSION, s.get("version").asText());
        assertEquals(east.url(), s.get("url").asText());
        assertEquals(east.uplink(), s.get("uplink").asText());
        assertFalse(s.get("stopping").asBoolean());
        assertTrue(client(s, producer.name()).get("connected").asBoolean());
        List<String> outbound = new ArrayList<>();
        s.get("outbound").forEach(q -> outbound.add(q.get("domain").asText()));
        assertEquals(List.of("west"), outbound);
        JsonNode counters = s.get("counters");
        assertEquals(SENT, counters.get("messagesSent").asLong(), counters.toString());
        assertTrue(counters.get("batchesSent").asLong() > 0, counters.toString());
        assertEquals(0, counters.get("refused").asLong(), counters.toString());
        assertEquals(0, counters.get("unsendable").asLong(), counters.toString());
        assertTrue(counters.get("uplinkMessagesIn").asLong() >= SENT, counters.toString()); // from the producer
    }

    @Test
    void statusOfTheReceivingSide() throws Exception {
        JsonNode s = status(west);
        assertEquals("west", s.get("domain").asText());
        assertEquals(west.url(), s.get("url").asText());
        assertEquals(west.uplink(), s.get("uplink").asText());
        assertTrue(client(s, consumer.name()).get("connected").asBoolean());
        JsonNode counters = s.get("counters");
        assertEquals(SENT, counters.get("delivered").asLong(), counters.toString());
        assertEquals(SENT, counters.get("messagesReceived").asLong(), counters.toString());
        assertTrue(counters.get("batchesReceived").asLong() > 0, counters.toString());
        assertTrue(counters.get("uplinkMessagesOut").asLong() >= SENT, counters.toString()); // to the consumer
    }

    @Test
    void metricsAreInThePrometheusTextFormat() throws Exception {
        Page p = get(east.url() + "/metrics");
        assertEquals(200, p.status(), p.text());
        assertNotNull(p.contentType());
        assertTrue(p.contentType().startsWith("text/plain"), p.contentType());
        List<String> lines = List.of(p.text().split("\n"));
        for (String line : lines) {
            if (!line.startsWith("#")) {
                assertTrue(SAMPLE.matcher(line).matches(), "not a sample line: \"" + line + "\"");
            }
        }
        assertTrue(lines.contains("# HELP gma_pc_post_seconds Round trip of each POST to another domain"), p.text());
        assertTrue(lines.contains("# TYPE gma_pc_post_seconds histogram"), p.text());
        assertTrue(lines.contains("# TYPE gma_pc_outbound_queue_bytes gauge"), p.text());
        assertTrue(lines.stream().anyMatch(l -> l.startsWith("# HELP gma_pc_outbound_queue_bytes ")), p.text());
        assertTrue(lines.stream().anyMatch(l -> l.matches("gma_pc_outbound_queue_bytes\\{domain=\"west\"} [0-9]+")),
                p.text());

        // the histogram: cumulative buckets, +Inf last and equal to _count, as many POSTs as batches sent
        Pattern bucket = Pattern.compile("gma_pc_post_seconds_bucket\\{le=\"([^\"]+)\"} ([0-9]+)");
        long previous = 0;
        String lastLe = null;
        for (String line : lines) {
            Matcher m = bucket.matcher(line);
            if (m.matches()) {
                long n = Long.parseLong(m.group(2));
                assertTrue(n >= previous, "buckets are not cumulative at " + line);
                previous = n;
                lastLe = m.group(1);
            }
        }
        assertEquals("+Inf", lastLe);
        long count = Long.parseLong(value(lines, "gma_pc_post_seconds_count"));
        assertEquals(previous, count);
        assertTrue(count > 0, "no POST was timed");
        assertEquals(value(lines, "gma_pc_batches_sent_total"), Long.toString(count));
        assertTrue(Double.parseDouble(value(lines, "gma_pc_post_seconds_sum")) > 0, p.text());
    }

    /** The value of the one sample named {@code name} (without labels). */
    private static String value(List<String> lines, String name) {
        for (String line : lines) {
            if (line.startsWith(name + " ")) {
                return line.substring(name.length() + 1);
            }
        }
        throw new AssertionError("no sample " + name);
    }

    @Test
    void uplinkRefusalsAreCountedByReason() throws Exception {
        try (Socket s = new Socket(InetAddress.getLoopbackAddress(), west.uplinkPort())) {
            // a HELLO header announcing 16 MiB, from a peer that has not authenticated
            byte[] header = Packed.make(0, Command.HELLO, "flood@west", "", new byte[0]);
            ByteBuffer.wrap(header).putInt(16, 16 << 20);
            s.getOutputStream().write(header, 0, 20);
            s.setSoTimeout(10_000);
            assertTrue(s.getInputStream().readAllBytes().length > 0, "no ERROR before the close");
        }
        await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(20))
                .until(() -> status(west).get("counters").get("uplinkRefused").get("tooLarge").asLong() > 0);
        JsonNode refused = status(west).get("counters").get("uplinkRefused");
        assertEquals("{\"overCap\":0,\"unauthorized\":0,\"tooLarge\":1,\"malformed\":0,\"timeout\":0}",
                refused.toString());
        List<String> lines = List.of(get(west.url() + "/metrics").text().split("\n"));
        assertTrue(lines.contains("# TYPE gma_pc_uplink_refused_total counter"), lines.toString());
        for (String reason : List.of("over_cap", "unauthorized", "malformed", "timeout")) {
            assertTrue(lines.contains("gma_pc_uplink_refused_total{reason=\"" + reason + "\"} 0"), lines.toString());
        }
        assertTrue(lines.contains("gma_pc_uplink_refused_total{reason=\"too_large\"} 1"), lines.toString());
        List<String> atEast = List.of(get(east.url() + "/metrics").text().split("\n"));
        assertTrue(atEast.contains("gma_pc_uplink_refused_total{reason=\"too_large\"} 0"), atEast.toString());
    }

    @Test
    void anythingElseIsNotFound() throws Exception {
        Page p = get(east.url() + "/nothing");
        assertEquals(404, p.status(), p.text());
        assertEquals("NO_ROUTE GET /nothing is not an endpoint of this PC servlet", p.text());
    }
}
