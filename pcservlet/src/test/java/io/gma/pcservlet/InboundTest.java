package io.gma.pcservlet;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.gma.client.Consumer;
import io.gma.client.Incoming;
import io.gma.client.MessageHandler;
import io.gma.registry.Registry;
import io.gma.wire.Command;
import io.gma.wire.Message;
import io.gma.wire.Packed;
import io.gma.wire.StreamDecoder;
import io.gma.wire.WireCodec;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;
import okhttp3.MediaType;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * What a PC servlet answers to POSTs of batches from other domains (protocol.md section 6), driven with raw
 * bodies against a real PC servlet of domain west, its registry and one consumer in west. After every refusal
 * the PC servlet must still take a good batch.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class InboundTest {
    private static final int MAX_BATCH = 64 * 1024;
    private static final MediaType GMA = MediaType.get("application/x-gma");
    private static final WireCodec CODEC = WireCodec.standard();
    /** A sender in another domain; nobody registers it, a POST only names it. */
    private static final String SOURCE = "src-aaaaaa@east";

    private final OkHttpClient http = new OkHttpClient.Builder().readTimeout(Duration.ofSeconds(20))
            .retryOnConnectionFailure(false).build();
    private final LinkedBlockingQueue<Incoming> received = new LinkedBlockingQueue<>();
    /** Holds a consumer's handler in the throttling test; released at the latest when the test ends. */
    private final CountDownLatch release = new CountDownLatch(1);
    private Registry registry;
    private PcServer pc;
    private Consumer sink;
    private long sequence;

    /** What a POST was answered. */
    private record Answer(int status, String contentType, String retryAfter, byte[] body) {
        String text() {
            return new String(body, UTF_8);
        }
    }

    @BeforeEach
    void startRegistry() throws Exception {
        registry = Registry.builder().port(0).build().start();
    }

    @AfterEach
    void stop() throws Exception {
        release.countDown();
        if (sink != null) {
            sink.close();
        }
        if (pc != null) {
            pc.close();
        }
        registry.close();
        http.dispatcher().executorService().shutdown();
        http.connectionPool().evictAll();
    }

    /** The PC servlet of west with maxBatchBytes 64 KiB, and the consumer "sink" queueing what it gets. */
    private void serve() throws Exception {
        serve(b -> b.maxBatchBytes(MAX_BATCH), received::add);
    }

    private void serve(UnaryOperator<PcServer.Builder> options, MessageHandler handler) throws Exception {
        pc = options.apply(PcServer.builder("west", registry.url()).registryGrace(Duration.ZERO)).start();
        sink = Consumer.builder().registry(registry.url()).domain("west").pcServlet(pc.uplink()).label("sink")
                .onMessage(handler).build();
    }

    // ---------------------------------------------------------------- helpers

    private byte[] data(String to, String text) {
        return Packed.make(++sequence, Command.DATA, SOURCE, to, text);
    }

    private static byte[] concat(byte[]... messages) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (byte[] m : messages) {
            out.writeBytes(m);
        }
        return out.toByteArray();
    }

    private Answer post(String domain, RequestBody body) throws IOException {
        Request.Builder r = new Request.Builder().url(pc.url() + Tunnel.MESSAGES_PATH).post(body);
        if (domain != null) {
            r.header(Tunnel.DOMAIN_HEADER, domain);
        }
        try (Response response = http.newCall(r.build()).execute()) {
            return new Answer(response.code(), response.header("Content-Type"), response.header("Retry-After"),
                    response.body().bytes());
        }
    }

    private Answer post(byte[] body) throws IOException {
        return post("east", RequestBody.create(body, GMA));
    }

    private static List<Message> decode(byte[] body) throws IOException {
        List<Message> out = new ArrayList<>();
        StreamDecoder decoder = CODEC.newStreamDecoder();
        decoder.feed(body, 0, body.length, out::add);
        decoder.finish();
        return out;
    }

    private Incoming next() throws InterruptedException {
        Incoming m = received.poll(10, TimeUnit.SECONDS);
        assertNotNull(m, "nothing was delivered to the consumer within 10 s");
        return m;
    }

    @Test
    void aBatchThatWaitsForItsTurnHoldsItsMemoryUntilItIsQueued() throws Exception {
        // maxTotalBytes 96 KiB: batch 3 of a stream (60 KB) waits for batch 2, holding its 59 KiB; a POST of
        // another 60 KB finds no room (429); once batch 2 came and batch 3 is queued, it fits
        java.util.concurrent.CompletableFuture<Answer> waiting = servedWithABatchWaitingItsTurn();
        Answer crowded = post("south", RequestBody.create(data(sink.name(), "c".repeat(60_000)), GMA));
        assertEquals(429, crowded.status(), crowded.text());
        assertTrue(crowded.text().contains("KiB for POST bodies being read"), crowded.text());
        Answer second = postInStream("east", "a1/1/2", data(sink.name(), "a"));
        assertEquals(200, second.status(), second.text());
        assertEquals(200, waiting.get(10, TimeUnit.SECONDS).status());
        Answer later = post("south", RequestBody.create(data(sink.name(), "d".repeat(60_000)), GMA));
        assertEquals(200, later.status(), later.text());
    }

    @Test
    void aCompressedBodyOfSeveralFramesHoldsWhatItDecompressesToNotWhatItsFirstFrameDeclares() throws Exception {
        // maxTotalBytes 96 KiB, 59 of them held by a batch that waits for its turn; a zstd body whose first frame
        // declares one small message and whose second holds 100 KB more finds no room as it decompresses (429),
        // where it held 2 KiB before and took the rest unbounded
        java.util.concurrent.CompletableFuture<Answer> waiting = servedWithABatchWaitingItsTurn();
        byte[] frames = concat(Compression.zstd(data(sink.name(), "x")), Compression.zstd(concat(
                data(sink.name(), "y".repeat(50_000)), data(sink.name(), "z".repeat(50_000)))));
        Request r = new Request.Builder().url(pc.url() + Tunnel.MESSAGES_PATH).post(RequestBody.create(frames, GMA))
                .header(Tunnel.DOMAIN_HEADER, "south").header("Content-Encoding", Compression.ZSTD).build();
        try (Response response = http.newCall(r).execute()) {
            String text = response.body().string();
            assertEquals(429, response.code(), text);
            assertTrue(text.contains("decompresses past"), text);
        }
        assertEquals(200, postInStream("east", "a1/1/2", data(sink.name(), "a")).status());
        assertEquals(200, waiting.get(10, TimeUnit.SECONDS).status());
        try (Response response = http.newCall(r).execute()) {
            assertEquals(200, response.code(), response.body().string()); // room again
        }
    }

    /**
     * Serves west with maxTotalBytes 96 KiB, and posts batch 3 of a stream whose batch 1 came (60 KB): it is read,
     * and waits for batch 2 (up to 10 s), holding 59 KiB. Its answer, once batch 2 comes.
     */
    private java.util.concurrent.CompletableFuture<Answer> servedWithABatchWaitingItsTurn() throws Exception {
        serve(b -> b.maxBatchBytes(MAX_BATCH).maxTotalBytes(96 * 1024), received::add);
        assertEquals(200, postInStream("east", "a1/1/1", data(sink.name(), "a")).status());
        byte[] third = data(sink.name(), "b".repeat(60_000));
        java.util.concurrent.CompletableFuture<Answer> waiting = java.util.concurrent.CompletableFuture.supplyAsync(
                () -> {
                    try {
                        return postInStream("east", "a1/1/3", third);
                    } catch (IOException e) {
                        throw new IllegalStateException(e);
                    }
                });
        Thread.sleep(500);
        return waiting;
    }

    private Answer postInStream(String domain, String position, byte[] body) throws IOException {
        Request r = new Request.Builder().url(pc.url() + Tunnel.MESSAGES_PATH).post(RequestBody.create(body, GMA))
                .header(Tunnel.DOMAIN_HEADER, domain).header(Tunnel.STREAM_HEADER, position).build();
        try (Response response = http.newCall(r).execute()) {
            return new Answer(response.code(), response.header("Content-Type"), response.header("Retry-After"),
                    response.body().bytes());
        }
    }

    @Test
    void aPostWhileThePcServletStartsIsAnswered503AndABatchIsTakenOnceItHasStarted() throws Exception {
        // the registry answers the PC servlet's registration only once the gate opens; its HTTP side listens
        // meanwhile, and a batch posted then must not be queued ahead of what its spool held at start
        CountDownLatch gate = new CountDownLatch(1);
        URI direct = URI.create(registry.url());
        try (ServerSocket proxy = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
            Thread gatekeeper = new Thread(() -> gated(proxy, gate, direct.getPort()), "test-registry-gate");
            gatekeeper.setDaemon(true);
            gatekeeper.start();
            int port;
            try (ServerSocket free = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
                port = free.getLocalPort();
            }
            String proxied = direct.getScheme() + "://127.0.0.1:" + proxy.getLocalPort() + direct.getRawPath();
            java.util.concurrent.CompletableFuture<PcServer> starting = java.util.concurrent.CompletableFuture
                    .supplyAsync(() -> {
                        try {
                            return PcServer.builder("west", proxied).httpPort(port).registryGrace(Duration.ZERO)
                                    .maxBatchBytes(MAX_BATCH).start();
                        } catch (Exception e) {
                            throw new IllegalStateException(e);
                        }
                    });
            await().atMost(Duration.ofSeconds(20)).until(() -> listens(port));
            Request early = new Request.Builder().url("http://127.0.0.1:" + port + Tunnel.MESSAGES_PATH)
                    .header(Tunnel.DOMAIN_HEADER, "east").post(RequestBody.create(data("s@west", "early"), GMA))
                    .build();
            try (Response r = http.newCall(early).execute()) {
                String text = r.body().string();
                assertEquals(503, r.code(), text);
                assertTrue(text.contains("west is starting"), text);
            }
            gate.countDown();
            pc = starting.get(30, TimeUnit.SECONDS);
        }
        sink = Consumer.builder().registry(registry.url()).domain("west").pcServlet(pc.uplink()).label("sink")
                .onMessage(received::add).build();
        assertStillServes();
    }

    /** Whether something listens on {@code port} of the loopback address. */
    private static boolean listens(int port) {
        try (Socket s = new Socket(InetAddress.getLoopbackAddress(), port)) {
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    /** Accepts connections on {@code proxy} and, once {@code gate} opens, joins each to the registry's port. */
    private static void gated(ServerSocket proxy, CountDownLatch gate, int target) {
        while (!proxy.isClosed()) {
            try {
                Socket in = proxy.accept();
                Thread t = new Thread(() -> {
                    try (in; Socket out = new Socket(InetAddress.getLoopbackAddress(), target)) {
                        gate.await();
                        Thread back = new Thread(() -> pump(out, in));
                        back.setDaemon(true);
                        back.start();
                        pump(in, out);
                        back.join(5_000);
                    } catch (IOException | InterruptedException e) {
                        // the test ended, or a side closed
                    }
                }, "test-registry-gate-pipe");
                t.setDaemon(true);
                t.start();
            } catch (IOException e) {
                return; // closed
            }
        }
    }

    private static void pump(Socket from, Socket to) {
        try {
            from.getInputStream().transferTo(to.getOutputStream());
            to.shutdownOutput();
        } catch (IOException e) {
            // a side closed
        }
    }

    /** A good one-message batch is still accepted and is the next (and only) thing the consumer gets. */
    private void assertStillServes() throws Exception {
        byte[] good = data(sink.name(), "still serving");
        Answer a = post(good);
        assertEquals(200, a.status(), a.text());
        assertEquals(0, a.body().length, a.text());
        Incoming m = next();
        assertEquals("still serving", new String(m.data(), UTF_8), "something refused earlier was delivered");
        assertEquals(Packed.sequence(good), m.sequence());
        assertNull(received.poll(100, TimeUnit.MILLISECONDS));
    }

    // ---------------------------------------------------------------- (a) a good batch

    @Test
    void aBatchPostedTwiceIsDeliveredOnce() throws Exception {
        serve(); // as after a retry whose first answer was lost, or OkHttp's own silent retry
        byte[] body = concat(data(sink.name(), "once"), data(sink.name(), "only"));
        assertEquals(200, post(body).status());
        assertEquals(200, post(body).status());
        assertEquals("once", new String(next().data(), UTF_8));
        assertEquals("only", new String(next().data(), UTF_8));
        assertNull(received.poll(300, TimeUnit.MILLISECONDS), "a duplicate was delivered");
    }

    @Test
    void acceptsAGoodBatchWithAnEmptyBodyAndDeliversItInOrder() throws Exception {
        serve();
        byte[][] batch = {data(sink.name(), "one"), data(sink.name(), "two"), data(sink.name(), "three")};
        Answer a = post(concat(batch));
        assertEquals(200, a.status(), a.text());
        assertEquals(0, a.body().length);
        for (byte[] sent : batch) {
            Incoming m = next();
            assertEquals(SOURCE, m.from());
            assertEquals(Command.DATA, m.command());
            assertEquals(Packed.sequence(sent), m.sequence());
            assertArrayEquals(Packed.data(sent), m.data());
        }
        assertNull(received.poll(200, TimeUnit.MILLISECONDS));
    }

    // ---------------------------------------------------------------- (b), (c) over maxBatchBytes

    @Test
    void refusesAContentLengthOverMaxBatchBytesWithoutWaitingForTheBody() throws Exception {
        serve();
        long announced = 20L << 20; // over maxBatchBytes, even plus one message of the largest size
        Answer a = rawPost("Content-Length: " + announced, new byte[0]); // and the body never comes
        assertEquals(413, a.status(), a.text());
        assertEquals("TOO_LARGE a batch of " + announced + " bytes exceeds maxBatchBytes " + MAX_BATCH
                + " plus one message (" + (MAX_BATCH + BatchCodec.MAX_ENCODED_MESSAGE) + " in all)", a.text());
        assertStillServes();
    }

    @Test
    void refusesAChunkedBodyOverMaxBatchBytesWithoutWaitingForItsEnd() throws Exception {
        serve();
        ByteArrayOutputStream chunks = new ByteArrayOutputStream();
        int size = 0;
        while (size <= MAX_BATCH + 16 * 1024) { // good messages for the live consumer, more than one batch
            byte[] m = data(sink.name(), "x".repeat(1000));
            chunks.writeBytes((Integer.toHexString(m.length) + "\r\n").getBytes(UTF_8));
            chunks.writeBytes(m);
            chunks.writeBytes("\r\n".getBytes(UTF_8));
            size += m.length;
        }
        // no last chunk: the body has not ended when the limit is passed, and the answer comes all the same
        Answer a = rawPost("Transfer-Encoding: chunked", chunks.toByteArray());
        assertEquals(413, a.status(), a.text());
        assertEquals("TOO_LARGE the batch exceeds maxBatchBytes " + MAX_BATCH + " plus one message", a.text());
        assertStillServes(); // and none of the refused batch was delivered
    }

    // ---------------------------------------------------------------- (d), (e), (f) bad requests

    @Test
    void refusesAPostWithoutADomainHeader() throws Exception {
        serve();
        Answer a = post(null, RequestBody.create(data(sink.name(), "lost"), GMA));
        assertEquals(400, a.status(), a.text());
        assertEquals("MALFORMED header X-Gma-Domain \"null\" is missing or not 1..64 of [A-Za-z0-9.-]", a.text());
        Answer b = post("no such/domain", RequestBody.create(data(sink.name(), "lost"), GMA));
        assertEquals(400, b.status(), b.text());
        assertEquals("MALFORMED header X-Gma-Domain \"no such/domain\" is missing or not 1..64 of [A-Za-z0-9.-]",
                b.text());
        assertStillServes();
    }

    @Test
    void refusesGarbage() throws Exception {
        serve();
        Answer a = post("hello, world".getBytes(UTF_8));
        assertEquals(400, a.status(), a.text());
        assertEquals("MALFORMED magic 0x6865 is not 0x474D (\"GM\"): this is not a GMA stream", a.text());
        assertStillServes();
    }

    @Test
    void refusesATruncatedMessageAndDeliversNoneOfTheBatch() throws Exception {
        serve();
        byte[] whole = data(sink.name(), "whole");
        byte[] cut = data(sink.name(), "cut short");
        Answer a = post(concat(whole, Arrays.copyOf(cut, cut.length - 3)));
        assertEquals(400, a.status(), a.text());
        assertEquals("MALFORMED stream ended inside a message: " + (cut.length - 3) + " of its " + cut.length
                + " bytes arrived", a.text());
        assertStillServes(); // the whole message before the cut one was not delivered either
    }

    @Test
    void refusesAHeaderAnnouncingTwoGibibytes() throws Exception {
        serve();
        byte[] header = Arrays.copyOf(Packed.make(++sequence, Command.DATA, SOURCE, sink.name(), new byte[0]), 200);
        int dataLengthAt = 16;
        ByteBuffer.wrap(header).putInt(dataLengthAt, 0x8000_0000); // 2 GiB, as an unsigned 32-bit number
        Answer a = post(header);
        assertTrue(a.status() == 400 || a.status() == 413, a.status() + " " + a.text());
        assertEquals("TOO_LARGE dataLength 2147483648 exceeds maxMessageBytes 16777216", a.text());
        assertStillServes();
    }

    /** The status follows the code (protocol.md section 6): TOO_LARGE is 413, whatever part was too large. */
    @Test
    void aMessageAnnouncingMoreThanMaxMessageBytesIs413() throws Exception {
        serve();
        byte[] header = Arrays.copyOf(Packed.make(++sequence, Command.DATA, SOURCE, sink.name(), new byte[0]), 200);
        ByteBuffer.wrap(header).putInt(16, (16 << 20) + 1);
        Answer a = post(header);
        assertEquals(413, a.status(), a.text());
        assertEquals("TOO_LARGE dataLength 16777217 exceeds maxMessageBytes 16777216", a.text());
        assertStillServes();
    }

    /** A body that is not a batch by its Content-Type is not read as messages: 415, nothing delivered. */
    @Test
    void aPostThatIsNotApplicationXGmaIs415AndDeliversNothing() throws Exception {
        serve();
        byte[] batch = data(sink.name(), "not a batch by its type");
        for (String type : new String[] {"text/plain", "application/octet-stream", "application/json"}) {
            Answer a = post("east", RequestBody.create(batch, MediaType.get(type)));
            assertEquals(415, a.status(), a.text());
            assertEquals("MALFORMED Content-Type \"" + type + "\" is not application/x-gma: nothing was read as"
                    + " messages", a.text());
        }
        Answer untyped = rawPostWithoutType(batch);
        assertEquals(415, untyped.status(), untyped.text());
        assertEquals("MALFORMED Content-Type (none) is not application/x-gma: nothing was read as messages",
                untyped.text());
        // the type's case and parameters do not matter, nor a charset no JVM knows
        assertEquals(200, post("east", RequestBody.create(data(sink.name(), "typed"),
                MediaType.get("Application/X-GMA; charset=binary"))).status());
        assertEquals("typed", new String(next().data(), UTF_8), "a body refused for its type was delivered");
        assertNull(received.poll(200, TimeUnit.MILLISECONDS));
    }

    @Test
    void refusesAnEmptyBody() throws Exception {
        serve();
        Answer a = post(new byte[0]);
        assertEquals(400, a.status(), a.text());
        assertEquals("MALFORMED the batch is empty: a POST carries 1..N messages", a.text());
        assertStillServes();
    }

    // ---------------------------------------------------------------- (g), (h) per-message errors in a 200

    @Test
    void answersNoRouteForEachMessageWithNowhereToGoAndDeliversTheRest() throws Exception {
        serve();
        byte[] live = data(sink.name(), "for the live one");
        byte[] nobody = data("nobody-aaaaaa@west", "for nobody");
        byte[] elsewhere = data("x-aaaaaa@elsewhere", "for another domain");
        Answer a = post(concat(live, nobody, elsewhere));
        assertEquals(200, a.status(), a.text());
        assertEquals("application/x-gma", a.contentType());
        List<Message> errors = decode(a.body());
        assertEquals(2, errors.size(), errors.toString());
        byte[][] failed = {nobody, elsewhere};
        for (int i = 0; i < 2; i++) {
            Message e = errors.get(i);
            assertEquals(Command.ERROR, e.command());
            assertEquals(Packed.to(failed[i]), e.from());
            assertEquals(SOURCE, e.to());
            assertEquals(Packed.sequence(failed[i]), e.sequence());
            assertTrue(e.dataAsString().startsWith("NO_ROUTE "), e.dataAsString());
        }
        assertEquals("NO_ROUTE nobody-aaaaaa@west is not registered", errors.get(0).dataAsString());
        assertEquals("NO_ROUTE domain elsewhere is not served by west's PC servlet", errors.get(1).dataAsString());
        Incoming m = next();
        assertEquals("for the live one", new String(m.data(), UTF_8));
        assertEquals(Packed.sequence(live), m.sequence());
        assertNull(received.poll(200, TimeUnit.MILLISECONDS));
        assertStillServes();
    }

    @Test
    void answersMalformedForStreamCommandsInABodyAndDeliversNothing() throws Exception {
        serve();
        String to = sink.name();
        List<Message> stream = List.of(Message.of(Command.PING, SOURCE, to, 0, "p".getBytes(UTF_8)),
                Message.of(Command.ACK, SOURCE, to, 0, new byte[8]),
                Message.of(Command.PONG, SOURCE, to, 0, new byte[0]),
                Message.of(Command.HELLO, SOURCE, "", 0, new byte[0]),
                Message.of(Command.WELCOME, SOURCE, to, 0, new byte[0]),
                Message.of(Command.BYE, SOURCE, to, 0, new byte[0]));
        ByteArrayOutputStream body = new ByteArrayOutputStream();
        stream.forEach(m -> body.writeBytes(CODEC.encode(m)));
        Answer a = post(body.toByteArray());
        assertEquals(200, a.status(), a.text());
        List<Message> errors = decode(a.body());
        assertEquals(stream.size(), errors.size(), errors.toString());
        for (int i = 0; i < stream.size(); i++) {
            Message e = errors.get(i);
            assertEquals(Command.ERROR, e.command());
            assertEquals(stream.get(i).to(), e.from());
            assertEquals(SOURCE, e.to());
            assertEquals("MALFORMED " + stream.get(i).command() + " belongs to a TCP stream, not to the HTTP tunnel",
                    e.dataAsString());
        }
        assertNull(received.poll(200, TimeUnit.MILLISECONDS));
        assertStillServes();
    }

    // ---------------------------------------------------------------- (i) throttling

    @Test
    void answers429WhenTheConsumersQueueIsFullAndDeliversEveryAcceptedBatchOnceInOrder() throws Exception {
        List<Long> got = new ArrayList<>();
        serve(b -> b.maxBatchBytes(MAX_BATCH).maxEndpointBytes(1024), m -> {
            synchronized (got) {
                got.add(m.sequence());
            }
            release.await(); // the first message holds the consumer's link: nothing more is read or acked
        });
        List<Long> accepted = new ArrayList<>();
        Answer full = null;
        byte[] refused = null;
        List<Long> refusedSequences = null;
        for (int i = 0; i < 50 && full == null; i++) {
            byte[] one = data(sink.name(), "y".repeat(600));
            byte[] two = data(sink.name(), "z".repeat(600));
            Answer a = post(concat(one, two));
            if (a.status() == 200) {
                assertEquals(0, a.body().length, a.text());
                accepted.add(Packed.sequence(one));
                accepted.add(Packed.sequence(two));
            } else {
                full = a;
                refused = concat(one, two);
                refusedSequences = List.of(Packed.sequence(one), Packed.sequence(two));
            }
        }
        assertNotNull(full, "50 batches of 2 x 600 bytes were all accepted with maxEndpointBytes 1024");
        assertEquals(429, full.status(), full.text());
        assertNotNull(full.retryAfter(), "429 without Retry-After");
        assertTrue(full.retryAfter().matches("[0-9]+") && Long.parseLong(full.retryAfter()) >= 1,
                "Retry-After: " + full.retryAfter());
        assertTrue(full.text().matches("QUEUE_FULL west has no room for the whole batch of 2 messages now: the queue"
                + " for " + sink.name() + " holds [0-9]+ messages, [0-9]+ bytes \\(limits 65536, 1024\\); 2 more,"
                + " [0-9]+ bytes, came"), full.text());
        assertTrue(accepted.size() >= 2, "not even the first batch was accepted");
        assertDelivered(got, accepted.subList(0, 1)); // the consumer took the first message and holds on to it

        release.countDown();
        assertDelivered(got, accepted);
        // the refused batch, sent again once there is room, is delivered after them
        byte[] batch = refused;
        Answer again = await().atMost(Duration.ofSeconds(10)).pollDelay(Duration.ZERO)
                .pollInterval(Duration.ofMillis(100)).until(() -> post(batch), a -> a.status() != 429);
        assertEquals(200, again.status(), again.text());
        accepted.addAll(refusedSequences);
        assertDelivered(got, accepted);
    }

    /**
     * Waits up to 20 s for {@code got} to hold exactly {@code want}, in order, and to go on holding it for 300 ms,
     * long enough for anything extra (a duplicate, a refused message) to come.
     */
    private static void assertDelivered(List<Long> got, List<Long> want) {
        await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(20)).during(Duration.ofMillis(300))
                .untilAsserted(() -> {
                    synchronized (got) {
                        assertEquals(want, got, "delivered, in order, exactly what was answered 200");
                    }
                });
    }

    // ---------------------------------------------------------------- one message larger than a batch

    /**
     * protocol.md section 6 bounds a body by "maxBatchBytes, default 16 MiB plus one message", and a sending PC
     * servlet posts a message longer than maxBatchBytes alone (DomainQueue.nextBatch, WireCodec.newWriter). So
     * with every limit at its default, a message with 16 MiB of data, which endpoints accept, must cross.
     */
    @Test
    void acceptsOneMessageOfMaxMessageBytesWithDefaultLimits() throws Exception {
        serve(b -> b, received::add);
        byte[] big = Packed.make(++sequence, Command.DATA, SOURCE, sink.name(),
                new byte[WireCodec.DEFAULT_MAX_MESSAGE_BYTES]);
        Answer a = post(big);
        assertEquals(200, a.status(), a.text());
        Incoming m = next();
        assertEquals(WireCodec.DEFAULT_MAX_MESSAGE_BYTES, m.data().length);
    }

    // ---------------------------------------------------------------- raw HTTP

    /**
     * A POST over a socket of its own, with {@code framing} as its one length header and {@code body} sent as
     * is, then nothing more: the answer is read while the request is still unfinished.
     */
    private Answer rawPost(String framing, byte[] body) throws IOException {
        URI u = URI.create(pc.url());
        try (Socket s = new Socket(u.getHost(), u.getPort())) {
            s.setSoTimeout(10_000);
            OutputStream out = s.getOutputStream();
            out.write(("POST " + Tunnel.MESSAGES_PATH + " HTTP/1.1\r\nHost: " + u.getAuthority()
                    + "\r\nX-Gma-Domain: east\r\nContent-Type: application/x-gma\r\n" + framing + "\r\n\r\n")
                    .getBytes(UTF_8));
            out.write(body);
            out.flush();
            String head = readHead(s.getInputStream());
            byte[] text = s.getInputStream().readNBytes(contentLength(head));
            return new Answer(Integer.parseInt(head.substring(9, 12)), null, null, text);
        }
    }

    /** A POST of {@code body} with no Content-Type at all, over a socket of its own. */
    private Answer rawPostWithoutType(byte[] body) throws IOException {
        URI u = URI.create(pc.url());
        try (Socket s = new Socket(u.getHost(), u.getPort())) {
            s.setSoTimeout(10_000);
            OutputStream out = s.getOutputStream();
            out.write(("POST " + Tunnel.MESSAGES_PATH + " HTTP/1.1\r\nHost: " + u.getAuthority()
                    + "\r\nX-Gma-Domain: east\r\nContent-Length: " + body.length + "\r\n\r\n").getBytes(UTF_8));
            out.write(body);
            out.flush();
            String head = readHead(s.getInputStream());
            byte[] text = s.getInputStream().readNBytes(contentLength(head));
            return new Answer(Integer.parseInt(head.substring(9, 12)), null, null, text);
        }
    }

    private static String readHead(InputStream in) throws IOException {
        ByteArrayOutputStream head = new ByteArrayOutputStream();
        int matched = 0;
        while (matched < 4) {
            int b = in.read();
            if (b < 0) {
                fail("the connection closed inside the answer's head: " + head.toString(UTF_8));
            }
            head.write(b);
            matched = b == "\r\n\r\n".charAt(matched) ? matched + 1 : b == '\r' ? 1 : 0;
        }
        return head.toString(UTF_8);
    }

    private static int contentLength(String head) {
        for (String line : head.split("\r\n")) {
            if (line.toLowerCase(Locale.ROOT).startsWith("content-length:")) {
                return Integer.parseInt(line.substring(line.indexOf(':') + 1).trim());
            }
        }
        fail("no Content-Length in " + head);
        return -1;
    }
}
