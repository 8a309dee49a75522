package io.gma.pcservlet;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gma.client.EndpointException;
import io.gma.client.Producer;
import io.gma.registry.Registry;
import io.gma.registry.api.RegistryClient;
import io.gma.wire.Command;
import io.gma.wire.ErrorCode;
import io.gma.wire.Message;
import io.gma.wire.StreamDecoder;
import io.gma.wire.WireCodec;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.BiFunction;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.Response;
import org.eclipse.jetty.ee10.servlet.ServletContextHandler;
import org.eclipse.jetty.ee10.servlet.ServletHolder;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * How a sending PC servlet (east, real) acts on each answer of a remote one (west, a scripted fake), as the
 * table of protocol.md section 6 says: refusals are final and reach the sender, pushback waits Retry-After,
 * failures are retried with the same bytes, ERRORs in a 200 go back to their senders.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ForwarderAnswersTest {
    private static final String DESTINATION = "dst-aaaaaa@west";

    private final FakeWest fake = new FakeWest();
    private final OkHttpClient http = new OkHttpClient();
    private Server fakeServer;
    private Registry registry;
    private PcServer east;
    private Producer producer;

    /** One POST the fake received: when (System.nanoTime), its X-Gma-Domain and Content-Type, its body. */
    private record Post(long nanos, String domain, String contentType, byte[] body) {
    }

    /** What the fake answers. */
    private record Scripted(int status, String retryAfter, String contentType, byte[] body) {
        static Scripted text(int status, String text) {
            return new Scripted(status, null, "text/plain; charset=utf-8", text.getBytes(UTF_8));
        }

        static Scripted ok() {
            return new Scripted(200, null, "application/x-gma", new byte[0]);
        }
    }

    /** A fake PC servlet of domain west: records each POST and answers what {@link #script} says. */
    private static final class FakeWest extends HttpServlet {
        private static final long serialVersionUID = 1L;
        final List<Post> posts = new CopyOnWriteArrayList<>();
        /** Each POST's Content-Encoding, in order (absent: "none"). */
        final List<String> encodings = new CopyOnWriteArrayList<>();
        /** Whether its answers say Accept-Encoding: zstd (as a PC servlet that reads zstd does). */
        volatile boolean advertise;
        /** (the POST's number from 1, its body) to the answer. */
        volatile BiFunction<Integer, byte[], Scripted> script = (n, body) -> Scripted.ok();

        @Override
        protected void doPost(HttpServletRequest req, HttpServletResponse resp) throws IOException {
            long now = System.nanoTime();
            byte[] body = req.getInputStream().readAllBytes();
            String encoding = req.getHeader("Content-Encoding");
            encodings.add(encoding == null ? "none" : encoding);
            posts.add(new Post(now, req.getHeader("X-Gma-Domain"), req.getContentType(), body));
            Scripted s = script.apply(posts.size(), body);
            if (advertise) {
                resp.setHeader("Accept-Encoding", "zstd");
            }
            resp.setStatus(s.status());
            if (s.retryAfter() != null) {
                resp.setHeader("Retry-After", s.retryAfter());
            }
            resp.setContentType(s.contentType());
            resp.setContentLength(s.body().length);
            resp.getOutputStream().write(s.body());
        }
    }

    @BeforeEach
    void start() throws Exception {
        fakeServer = new Server();
        ServerConnector connector = new ServerConnector(fakeServer);
        connector.setHost("127.0.0.1");
        connector.setPort(0);
        fakeServer.addConnector(connector);
        ServletContextHandler context = new ServletContextHandler("/");
        context.addServlet(new ServletHolder(fake), "/*");
        fakeServer.setHandler(context);
        fakeServer.start();
        String fakeUrl = "http://127.0.0.1:" + connector.getLocalPort();

        registry = Registry.builder().port(0).build().start();
        RegistryClient.create(registry.url()).registerDomain("west", fakeUrl, null, Duration.ofSeconds(30));
        east = PcServer.builder("east", registry.url()).start();
        producer = Producer.builder().registry(registry.url()).domain("east").pcServlet(east.uplink()).label("src")
                .requestTimeout(Duration.ofSeconds(10)).build();
    }

    @AfterEach
    void stop() throws Exception {
        if (producer != null) {
            producer.close();
        }
        if (east != null) {
            east.close();
        }
        if (registry != null) {
            registry.close();
        }
        fakeServer.stop();
        http.dispatcher().executorService().shutdown();
        http.connectionPool().evictAll();
    }

    // ---------------------------------------------------------------- helpers

    private static List<Message> decode(byte[] body) throws IOException {
        List<Message> out = new ArrayList<>();
        StreamDecoder decoder = WireCodec.standard().newStreamDecoder();
        decoder.feed(body, 0, body.length, out::add);
        decoder.finish();
        return out;
    }

    private void awaitPosts(int n) {
        await().atMost(Duration.ofSeconds(15)).pollInterval(Duration.ofMillis(10)).untilAsserted(() ->
                assertTrue(fake.posts.size() >= n, "the fake got " + fake.posts.size() + " POSTs, not " + n));
    }

    /** No more POSTs come within a second: a refused batch is not retried. */
    private void assertNoMorePostsThan(int n) {
        await().pollDelay(Duration.ZERO).during(Duration.ofSeconds(1)).atMost(Duration.ofSeconds(3))
                .untilAsserted(() -> assertEquals(n, fake.posts.size(), "POSTs to the fake"));
    }

    private String metrics() throws IOException {
        try (Response r = http.newCall(new Request.Builder().url(east.url() + "/metrics").build()).execute()) {
            assertEquals(200, r.code());
            return r.body().string();
        }
    }

    /** The one message of a POST's body: the producer's, for the destination. */
    private Message theMessage(Post p) throws IOException {
        List<Message> ms = decode(p.body());
        assertEquals(1, ms.size(), ms.toString());
        Message m = ms.get(0);
        assertEquals(producer.name(), m.from());
        assertEquals(DESTINATION, m.to());
        return m;
    }

    // ---------------------------------------------------------------- refusals: final, reported, not retried

    @Test
    void forbiddenReachesTheSenderAndIsNotRetried() throws Exception {
        fake.script = (n, body) -> Scripted.text(403, "FORBIDDEN domain east may not post here");
        EndpointException e = assertThrows(EndpointException.class,
                () -> producer.request(DESTINATION, "q".getBytes(UTF_8), Duration.ofSeconds(10)));
        assertEquals(ErrorCode.FORBIDDEN, e.code(), e.getMessage());
        assertTrue(e.getMessage().contains("FORBIDDEN domain east may not post here"), e.getMessage());
        assertNoMorePostsThan(1);
        Post p = fake.posts.get(0);
        assertEquals("east", p.domain());
        assertTrue(p.contentType().startsWith("application/x-gma"), p.contentType());
        Message m = theMessage(p);
        assertEquals(Command.REQUEST, m.command());
        assertTrue(metrics().contains("\ngma_pc_refused_total 1\n"), "refused counter");
    }

    @Test
    void tooLargeReachesTheSenderAndIsNotRetried() throws Exception {
        fake.script = (n, body) -> Scripted.text(413, "TOO_LARGE a batch of " + body.length
                + " bytes exceeds maxBatchBytes 10");
        EndpointException e = assertThrows(EndpointException.class,
                () -> producer.request(DESTINATION, "q".getBytes(UTF_8), Duration.ofSeconds(10)));
        assertEquals(ErrorCode.TOO_LARGE, e.code(), e.getMessage());
        assertTrue(e.getMessage().contains("exceeds maxBatchBytes 10"), e.getMessage());
        assertNoMorePostsThan(1);
        assertTrue(metrics().contains("\ngma_pc_refused_total 1\n"), "refused counter");
    }

    @Test
    void unsupportedMediaTypeReachesTheSenderAsMalformedAndIsNotRetried() throws Exception {
        fake.script = (n, body) -> Scripted.text(415, "MALFORMED Content-Type \"x\" is not application/x-gma:"
                + " nothing was read as messages");
        EndpointException e = assertThrows(EndpointException.class,
                () -> producer.request(DESTINATION, "q".getBytes(UTF_8), Duration.ofSeconds(10)));
        assertEquals(ErrorCode.MALFORMED, e.code(), e.getMessage());
        assertTrue(e.getMessage().contains("refused the batch (415)"), e.getMessage());
        assertNoMorePostsThan(1);
        assertTrue(metrics().contains("\ngma_pc_refused_total 1\n"), "refused counter");
    }

    @Test
    void aCompressedBatchAnswered415GoesAgainPlain() throws Exception {
        fake.advertise = true;
        fake.script = (n, body) -> {
            if (fake.encodings.get(n - 1).equals("zstd")) {
                fake.advertise = false; // as a receiver restarted without zstd: it no longer says it reads it
                return Scripted.text(415, "MALFORMED Content-Encoding \"zstd\" is not one this PC servlet reads"
                        + " (identity): nothing was read as messages");
            }
            return Scripted.ok();
        };
        byte[] data = "host=node17 load1=0.42 ".repeat(100).getBytes(UTF_8);
        producer.send(DESTINATION, data).acknowledged().get(10, TimeUnit.SECONDS);
        awaitPosts(1); // plain: west has not said yet that it reads zstd
        producer.send(DESTINATION, data);
        awaitPosts(3);
        assertEquals(List.of("none", "zstd", "none"), fake.encodings);
        assertArrayEquals(data, theMessage(fake.posts.get(2)).data());
        assertTrue(fake.posts.get(1).body().length < data.length / 4, fake.posts.get(1).body().length + " bytes");
        assertNoMorePostsThan(3);
        String text = metrics();
        assertTrue(text.contains("\ngma_pc_refused_total 0\n"), text);
        assertTrue(text.contains("\ngma_pc_messages_sent_total 2\n"), text);
    }

    // ---------------------------------------------------------------- pushback and failures: retried

    @Test
    void tooManyRequestsIsRetriedAfterRetryAfterWithTheSameBytes() throws Exception {
        fake.script = (n, body) -> n == 1 ? new Scripted(429, "1", "text/plain; charset=utf-8",
                "QUEUE_FULL west has no room for the whole batch now".getBytes(UTF_8)) : Scripted.ok();
        producer.send(DESTINATION, "d".getBytes(UTF_8));
        awaitPosts(2);
        Post first = fake.posts.get(0);
        Post second = fake.posts.get(1);
        long gapMillis = TimeUnit.NANOSECONDS.toMillis(second.nanos() - first.nanos());
        assertTrue(gapMillis >= 900, "retried after " + gapMillis + " ms, not after Retry-After: 1");
        assertArrayEquals(first.body(), second.body());
        assertEquals(Command.DATA, theMessage(second).command());
        assertNoMorePostsThan(2);
        String text = metrics();
        assertTrue(text.contains("\ngma_pc_throttled_received_total 1\n"), text);
        assertTrue(text.contains("\ngma_pc_messages_sent_total 1\n"), text);
    }

    @Test
    void serverErrorsAreRetriedWithBackoffAndTheSameBytes() throws Exception {
        fake.script = (n, body) -> n <= 2 ? Scripted.text(500, "INTERNAL something broke") : Scripted.ok();
        producer.send(DESTINATION, "d".getBytes(UTF_8));
        awaitPosts(3);
        List<Post> posts = fake.posts;
        for (int i = 1; i < 3; i++) {
            assertArrayEquals(posts.get(0).body(), posts.get(i).body(), "POST " + (i + 1));
            long gapMillis = TimeUnit.NANOSECONDS.toMillis(posts.get(i).nanos() - posts.get(i - 1).nanos());
            assertTrue(gapMillis >= 40, "POST " + (i + 1) + " came " + gapMillis + " ms after the one before");
        }
        theMessage(posts.get(2));
        assertNoMorePostsThan(3);
        String text = metrics();
        assertTrue(text.contains("\ngma_pc_retries_total 2\n"), text);
        assertTrue(text.contains("\ngma_pc_messages_sent_total 1\n"), text);
        assertTrue(text.contains("\ngma_pc_outbound_queue_messages{domain=\"west\"} 0\n"), text);
    }

    // ---------------------------------------------------------------- ERRORs in a 200 answer

    @Test
    void anErrorInA200AnswerReachesItsSender() throws Exception {
        fake.script = (n, body) -> {
            try {
                Message request = decode(body).get(0);
                Message error = Message.error(request.to(), request.from(), request.sequence(), ErrorCode.NO_ROUTE,
                        "no endpoint named \"" + request.to() + "\" is registered");
                return new Scripted(200, null, "application/x-gma", WireCodec.standard().encode(error));
            } catch (IOException e) {
                return Scripted.text(400, "MALFORMED " + e.getMessage());
            }
        };
        EndpointException e = assertThrows(EndpointException.class,
                () -> producer.request(DESTINATION, "q".getBytes(UTF_8), Duration.ofSeconds(10)));
        assertEquals(ErrorCode.NO_ROUTE, e.code(), e.getMessage());
        assertTrue(e.getMessage().contains("no endpoint named \"" + DESTINATION + "\" is registered"),
                e.getMessage());
        assertNoMorePostsThan(1);
    }
}
