package io.gma.pcservlet;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.github.luben.zstd.ZstdOutputStreamNoFinalizer;
import io.gma.client.Consumer;
import io.gma.client.Incoming;
import io.gma.client.Producer;
import io.gma.registry.Registry;
import io.gma.wire.Command;
import io.gma.wire.Packed;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
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
 * Batches compressed between PC servlets (protocol.md section 6.2): real PC servlets on ephemeral ports, a real
 * registry, real endpoints, and raw POSTs for what a well-behaved peer never sends.
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class CompressionTest {
    private static final MediaType GMA = MediaType.get(Tunnel.MEDIA_TYPE);
    private static final String SOURCE = "src-aaaaaa@east";
    private static final int MAX_BATCH = 64 * 1024;
    private static final int MESSAGES = 600;
    private static final int ROUND = 50;

    private final OkHttpClient http = new OkHttpClient.Builder().readTimeout(Duration.ofSeconds(20))
            .retryOnConnectionFailure(false).build();
    private final LinkedBlockingQueue<Incoming> received = new LinkedBlockingQueue<>();
    private final List<AutoCloseable> open = new ArrayList<>();
    private Registry registry;
    private long sequence;
    /** The sink the last round trip sent to. */
    private String sinkName;

    @BeforeEach
    void startRegistry() throws Exception {
        registry = Registry.builder().port(0).build().start();
    }

    @AfterEach
    void stop() throws Exception {
        for (int i = open.size() - 1; i >= 0; i--) {
            open.get(i).close();
        }
        registry.close();
        http.dispatcher().executorService().shutdown();
        http.connectionPool().evictAll();
    }

    private PcServer pc(String domain, UnaryOperator<PcServer.Builder> options) throws Exception {
        PcServer pc = options.apply(PcServer.builder(domain, registry.url()).registryGrace(Duration.ZERO)
                .linger(Duration.ofMillis(5))).start();
        open.add(pc);
        return pc;
    }

    private Consumer sink(PcServer pc) throws Exception {
        Consumer c = Consumer.builder().registry(registry.url()).domain(pc.domain()).pcServlet(pc.uplink())
                .label("sink").onMessage(received::add).build();
        open.add(c);
        return c;
    }

    private Producer source(PcServer pc) throws Exception {
        Producer p = Producer.builder().registry(registry.url()).domain(pc.domain()).pcServlet(pc.uplink())
                .label("source").build();
        open.add(p);
        return p;
    }

    /** A line of monitoring text, as an agent's sample: {@code host=node17 load1=0.42 ...}. */
    /** {@link #MESSAGES} samples, in order. */
    private static List<byte[]> samples() {
        List<byte[]> payloads = new ArrayList<>();
        for (int i = 0; i < MESSAGES; i++) {
            payloads.add(sample(i));
        }
        return payloads;
    }

    private static byte[] sample(int i) {
        return String.format(java.util.Locale.ROOT, "site=cardiff host=node%d cpu=%d busy=%.2f usr=%.2f sys=%.2f"
                + " iowait=%.2f idle=%.2f load1=%.2f load5=%.2f load15=%.2f sampled=%d", i % 40, i % 8,
                (i * 7 % 100) / 1.0, (i * 3 % 60) / 1.0, (i % 20) / 1.0, (i % 5) / 10.0, 100 - (i * 7 % 100) / 1.0,
                (i % 17) / 10.0, (i % 13) / 10.0, (i % 11) / 10.0, 1_790_000_000_000L + i * 1000L).getBytes(UTF_8);
    }

    /** Sends {@code payloads} from a producer at {@code from} to the sink at {@code to}; all must come, intact. */
    private void roundTrip(PcServer from, PcServer to, List<byte[]> payloads) throws Exception {
        Consumer c = sink(to);
        sinkName = c.name();
        Producer p = source(from);
        // in rounds, each acknowledged before the next: several batches, the first of them plain (the sender does
        // not know yet whether the receiver reads zstd)
        for (int at = 0; at < payloads.size(); at += ROUND) {
            List<io.gma.client.Sent> sent = new ArrayList<>();
            for (byte[] data : payloads.subList(at, Math.min(payloads.size(), at + ROUND))) {
                sent.add(p.send(c.name(), data));
            }
            for (io.gma.client.Sent s : sent) {
                s.acknowledged().get(30, TimeUnit.SECONDS);
            }
        }
        for (int i = 0; i < payloads.size(); i++) {
            Incoming m = received.poll(30, TimeUnit.SECONDS);
            assertArrayEquals(payloads.get(i), m.data(), "message " + i + " altered or out of order");
        }
        assertNull(received.poll(200, TimeUnit.MILLISECONDS), "a message came twice");
    }

    // ---------------------------------------------------------------- between PC servlets

    @Test
    void compressedBatchesBetweenTwoPcServletsArriveIntactWithFewerBytes() throws Exception {
        PcServer west = pc("west", b -> b);
        PcServer east = pc("east", b -> b);
        List<byte[]> payloads = samples();
        roundTrip(east, west, payloads);
        String sent = metrics(east);
        String got = metrics(west);
        assertTrue(counter(sent, "gma_pc_compressed_batches_total", "sent") >= 1, sent);
        assertEquals(counter(sent, "gma_pc_compressed_batches_total", "sent"),
                counter(got, "gma_pc_compressed_batches_total", "received"), got);
        // the first batch goes plain (west has not said it reads zstd yet); the rest at least 3x smaller
        long wire = counter(sent, "gma_pc_tunnel_wire_bytes_total", "sent");
        long plain = counter(sent, "gma_pc_tunnel_plain_bytes_total", "sent");
        assertEquals(plain, counter(got, "gma_pc_tunnel_plain_bytes_total", "received"), got);
        assertEquals(wire, counter(got, "gma_pc_tunnel_wire_bytes_total", "received"), got);
        assertTrue(plain > 3 * wire, "plain " + plain + " bytes went as " + wire + " on the wire");
    }

    @Test
    void aPeerWithCompressionOffGetsPlainBatchesAndSaysNothing() throws Exception {
        PcServer west = pc("west", b -> b.compression("off"));
        PcServer east = pc("east", b -> b);
        List<byte[]> payloads = samples();
        roundTrip(east, west, payloads);
        String sent = metrics(east);
        assertEquals(0, counter(sent, "gma_pc_compressed_batches_total", "sent"), sent);
        assertEquals(counter(sent, "gma_pc_tunnel_plain_bytes_total", "sent"),
                counter(sent, "gma_pc_tunnel_wire_bytes_total", "sent"), sent);
        try (Response r = post(west, "east", null, batchOf(data("west", "plain")))) {
            assertEquals(200, r.code());
            assertNull(r.header("Accept-Encoding"), "a PC servlet with compression off must not offer zstd");
        }
    }

    @Test
    void randomPayloadsGoUncompressed() throws Exception {
        PcServer west = pc("west", b -> b);
        PcServer east = pc("east", b -> b);
        Random random = new Random(26);
        List<byte[]> payloads = new ArrayList<>();
        for (int i = 0; i < MESSAGES; i++) {
            byte[] data = new byte[1024];
            random.nextBytes(data);
            payloads.add(data);
        }
        roundTrip(east, west, payloads);
        String sent = metrics(east);
        assertEquals(0, counter(sent, "gma_pc_compressed_batches_total", "sent"), sent);
        assertTrue(counter(sent, "gma_pc_uncompressed_batches_sent_total", null) >= 1, sent);
        assertEquals(counter(sent, "gma_pc_tunnel_plain_bytes_total", "sent"),
                counter(sent, "gma_pc_tunnel_wire_bytes_total", "sent"), sent);
    }

    @Test
    void largeRandomBatchesAreJudgedByASample() throws Exception {
        PcServer west = pc("west", b -> b);
        PcServer east = pc("east", b -> b.linger(Duration.ofMillis(500)));
        List<byte[]> first = new ArrayList<>();
        for (int i = 0; i < ROUND; i++) {
            first.add(sample(i));
        }
        roundTrip(east, west, first); // east learns that west reads zstd
        String before = metrics(east);
        // one batch: random bytes past the sample, then text that would pay; judged by the sample, it goes plain
        Random random = new Random(7);
        List<byte[]> mixed = new ArrayList<>();
        for (int i = 0; i < 2 * Compression.SAMPLE_BYTES / 1024; i++) {
            byte[] noise = new byte[1024];
            random.nextBytes(noise);
            mixed.add(noise);
        }
        for (int i = 0; mixed.size() < 8 * Compression.SAMPLE_BYTES / 1024; i++) {
            mixed.add(("x".repeat(900) + i).getBytes(UTF_8));
        }
        Producer p = source(east);
        List<io.gma.client.Sent> sent = new ArrayList<>();
        for (byte[] data : mixed) {
            sent.add(p.send(sinkName, data));
        }
        for (io.gma.client.Sent s : sent) {
            s.acknowledged().get(30, TimeUnit.SECONDS);
        }
        for (int i = 0; i < mixed.size(); i++) {
            assertArrayEquals(mixed.get(i), received.poll(30, TimeUnit.SECONDS).data(), "message " + i);
        }
        // the sink has them before east reads west's answer, which counts the batch sent: until then, a look
        String after = metrics(east);
        for (long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10); counter(after,
                "gma_pc_batches_sent_total", null) == counter(before, "gma_pc_batches_sent_total", null)
                && System.nanoTime() < deadline; after = metrics(east)) {
            Thread.sleep(20);
        }
        assertEquals(1, counter(after, "gma_pc_batches_sent_total", null)
                - counter(before, "gma_pc_batches_sent_total", null), "the messages must go as one batch\n" + after);
        assertEquals(counter(before, "gma_pc_compressed_batches_total", "sent"),
                counter(after, "gma_pc_compressed_batches_total", "sent"), after);
        assertEquals(counter(before, "gma_pc_uncompressed_batches_sent_total", null) + 1,
                counter(after, "gma_pc_uncompressed_batches_sent_total", null), after);
    }

    @Test
    void pollAnswersGoCompressedToAPollerThatReadsZstdOnly() throws Exception {
        PcServer hub = pc("hub", b -> b);
        PcServer east = pc("east", b -> b.via("hub"));
        PcServer west = pc("west", b -> b);
        List<byte[]> payloads = samples();
        roundTrip(west, east, payloads); // west posts to hub, which relays for east: east polls it
        String relay = metrics(hub);
        String polled = metrics(east);
        assertTrue(counter(relay, "gma_pc_compressed_batches_total", "sent") >= 1, relay);
        assertEquals(counter(relay, "gma_pc_compressed_batches_total", "sent"),
                counter(polled, "gma_pc_compressed_batches_total", "received"), polled);
        assertEquals(counter(relay, "gma_pc_tunnel_wire_bytes_total", "sent"),
                counter(polled, "gma_pc_tunnel_wire_bytes_total", "received"), polled);
    }

    @Test
    void aPollerWithCompressionOffGetsPlainAnswers() throws Exception {
        PcServer hub = pc("hub", b -> b);
        PcServer east = pc("east", b -> b.via("hub").compression("off"));
        PcServer west = pc("west", b -> b);
        List<byte[]> payloads = samples();
        roundTrip(west, east, payloads);
        String relay = metrics(hub);
        assertEquals(0, counter(relay, "gma_pc_compressed_batches_total", "sent"), relay);
        assertTrue(counter(relay, "gma_pc_batches_sent_total", null) >= 1, relay);
    }

    @Test
    void aPollerThatReadsSmallerBatchesThanItsViaMakesGetsEveryMessage() throws Exception {
        // east reads batches of 64 KiB; hub, its via, makes batches of 16 MiB: a poll says how much it reads, and
        // hub's answers fit (before, hub handed out one of 400 KB again and again, and nothing more reached east)
        PcServer hub = pc("hub", b -> b);
        PcServer east = pc("east", b -> b.via("hub").compression("off").maxBatchBytes(64 * 1024));
        PcServer west = pc("west", b -> b);
        Consumer c = sink(east);
        Producer p = source(west);
        java.util.Random random = new java.util.Random(26);
        List<byte[]> payloads = new ArrayList<>();
        List<io.gma.client.Sent> sent = new ArrayList<>();
        for (int i = 0; i < 200; i++) {
            byte[] data = new byte[2048];
            random.nextBytes(data);
            payloads.add(data);
            sent.add(p.send(c.name(), data)); // together: they reach hub's relay queue as one POST
        }
        for (io.gma.client.Sent s : sent) {
            s.acknowledged().get(30, TimeUnit.SECONDS);
        }
        for (int i = 0; i < payloads.size(); i++) {
            Incoming m = received.poll(30, TimeUnit.SECONDS);
            assertNotNull(m, "message " + i + " did not reach east in 30 s");
            assertArrayEquals(payloads.get(i), m.data(), "message " + i + " altered or out of order");
        }
        assertNull(received.poll(200, TimeUnit.MILLISECONDS), "a message came twice");
    }

    // ---------------------------------------------------------------- raw POSTs

    private byte[] data(String domain, String text) {
        return Packed.make(++sequence, Command.DATA, SOURCE, "sink-" + domain + "@" + domain, text);
    }

    private static byte[] batchOf(byte[]... messages) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (byte[] m : messages) {
            out.writeBytes(m);
        }
        return out.toByteArray();
    }

    private Response post(PcServer pc, String domain, String encoding, byte[] body) throws IOException {
        Request.Builder r = new Request.Builder().url(pc.url() + Tunnel.MESSAGES_PATH).post(RequestBody.create(body,
                GMA)).header(Tunnel.DOMAIN_HEADER, domain);
        if (encoding != null) {
            r.header("Content-Encoding", encoding);
        }
        return http.newCall(r.build()).execute();
    }

    private static String text(Response r) throws IOException {
        return r.body().string();
    }

    /** Posts a good batch, compressed, and sees it delivered: the PC servlet still serves. */
    private void stillServes(PcServer west, String sinkName) throws Exception {
        byte[] good = Packed.make(++sequence, Command.DATA, SOURCE, sinkName, "after");
        try (Response r = post(west, "east", "zstd", Compression.zstd(good))) {
            assertEquals(200, r.code(), text(r));
        }
        Incoming m = received.poll(10, TimeUnit.SECONDS);
        assertEquals("after", new String(m.data(), UTF_8));
    }

    @Test
    void aPlainPostIsAnsweredPlainAndOffersZstd() throws Exception {
        PcServer west = pc("west", b -> b);
        Consumer c = sink(west);
        byte[] one = Packed.make(++sequence, Command.DATA, SOURCE, c.name(), "plain " + "x".repeat(500));
        try (Response r = post(west, "east", null, one)) {
            assertEquals(200, r.code());
            assertEquals("zstd", r.header("Accept-Encoding"));
            assertNull(r.header("Content-Encoding"));
            assertEquals(0, r.body().bytes().length);
        }
        assertEquals("plain " + "x".repeat(500), new String(received.poll(10, TimeUnit.SECONDS).data(), UTF_8));
        // a poll that does not say it reads zstd gets no compressed answer either (here: refused, in text)
        try (Response r = http.newCall(new Request.Builder().url(west.url() + Tunnel.MESSAGES_PATH
                + "?domain=nowhere&wait=0").header("Accept-Encoding", "identity").build()).execute()) {
            assertNull(r.header("Content-Encoding"));
        }
    }

    @Test
    void aCorruptZstdBodyIsRefusedAndNothingIsDelivered() throws Exception {
        PcServer west = pc("west", b -> b.maxBatchBytes(MAX_BATCH));
        Consumer c = sink(west);
        byte[] batch = batchOf(Packed.make(++sequence, Command.DATA, SOURCE, c.name(), "one " + "y".repeat(300)),
                Packed.make(++sequence, Command.DATA, SOURCE, c.name(), "two " + "y".repeat(300)));
        byte[] frame = Compression.zstd(batch);
        // not zstd; cut short; a byte changed; a good frame, then bytes that are not one (its messages decode first)
        byte[][] bad = {"this is not zstd at all".getBytes(UTF_8), Arrays.copyOf(frame, frame.length / 2),
            flipped(frame, frame.length - 3), batchOf(frame, "and then garbage".getBytes(UTF_8))};
        for (byte[] body : bad) {
            try (Response r = post(west, "east", "zstd", body)) {
                String text = text(r);
                assertEquals(400, r.code(), text);
                assertTrue(text.startsWith("MALFORMED the body is not a valid zstd frame"), text);
            }
        }
        assertNull(received.poll(300, TimeUnit.MILLISECONDS), "a message of a corrupt body was delivered");
        stillServes(west, c.name());
    }

    private static byte[] flipped(byte[] frame, int at) {
        byte[] copy = frame.clone();
        copy[at] ^= 0x5a;
        return copy;
    }

    @Test
    void anUnknownContentEncodingIsRefused415() throws Exception {
        PcServer west = pc("west", b -> b);
        Consumer c = sink(west);
        byte[] one = Packed.make(++sequence, Command.DATA, SOURCE, c.name(), "gzip?");
        try (Response r = post(west, "east", "gzip", one)) {
            assertEquals(415, r.code());
            assertEquals("MALFORMED Content-Encoding \"gzip\" is not one this PC servlet reads (zstd, identity):"
                    + " nothing was read as messages", text(r));
        }
        assertNull(received.poll(300, TimeUnit.MILLISECONDS));
        stillServes(west, c.name());
    }

    @Test
    void aBombIsRefused413WithoutDecompressingPastTheLimit() throws Exception {
        PcServer west = pc("west", b -> b.maxBatchBytes(MAX_BATCH));
        Consumer c = sink(west);
        byte[] one = Packed.make(++sequence, Command.DATA, SOURCE, c.name(), "z".repeat(1000));
        ByteArrayOutputStream plain = new ByteArrayOutputStream();
        long limit = new BatchCodec("west", MAX_BATCH).bodyLimit(); // 64 KiB, plus the largest message
        while (plain.size() <= limit) {
            plain.writeBytes(one); // valid messages, past the limit
        }
        byte[] declared = Compression.zstd(plain.toByteArray());
        assertTrue(declared.length < MAX_BATCH, declared.length + " bytes");
        try (Response r = post(west, "east", "zstd", declared)) {
            assertEquals(413, r.code());
            assertEquals("TOO_LARGE a batch that decompresses to " + plain.size() + " bytes exceeds maxBatchBytes "
                    + MAX_BATCH + " plus one message (" + limit + " in all); nothing was read as messages", text(r));
        }
        // a frame that does not say its size is decompressed while its messages start within maxBatchBytes (and
        // within the limit), and no further
        for (int size : new int[] {4 << 20, (int) limit + 1}) {
            ByteArrayOutputStream streamed = new ByteArrayOutputStream();
            try (ZstdOutputStreamNoFinalizer z = new ZstdOutputStreamNoFinalizer(streamed)) {
                byte[] all = plain.toByteArray();
                for (int at = 0; at < size; at += 8192) {
                    z.write(all, at, Math.min(8192, size - at));
                }
            }
            assertEquals(-1, Compression.declaredSize(streamed.toByteArray()));
            try (Response r = post(west, "east", "zstd", streamed.toByteArray())) {
                assertEquals(413, r.code());
                assertEquals("TOO_LARGE a batch of " + streamed.size() + " compressed bytes decompresses to more than"
                        + " maxBatchBytes " + MAX_BATCH + " plus one message (" + limit + " bytes in all); nothing"
                        + " was taken", text(r));
            }
        }
        assertNull(received.poll(300, TimeUnit.MILLISECONDS), "a message of a bomb was delivered");
        stillServes(west, c.name());
    }

    // ---------------------------------------------------------------- the parts

    @Test
    void acceptEncodingIsReadAsRfc9110Says() {
        assertTrue(Compression.accepts("zstd"));
        assertTrue(Compression.accepts("gzip, ZSTD;q=0.5"));
        assertFalse(Compression.accepts("zstd;q=0"));
        assertFalse(Compression.accepts("gzip"));
        assertFalse(Compression.accepts("*"));
        assertFalse(Compression.accepts(null));
    }

    @Test
    void anIncompressibleStreamIsTriedOnceInAWhileOnly() {
        Random random = new Random(1);
        byte[] noise = new byte[16 * 1024];
        random.nextBytes(noise);
        byte[] text = new byte[16 * 1024];
        Arrays.fill(text, (byte) 'a');
        try (Compression.Compressor z = new Compression.Compressor()) {
            assertFalse(z.tries(Compression.MIN_BYTES - 1));
            int tried = 0;
            for (int i = 0; i < 1000; i++) {
                if (z.tries(noise.length)) {
                    tried++;
                    assertNull(z.compress(noise, noise.length));
                }
            }
            assertTrue(tried <= 1000 / Compression.MAX_SKIP + 8, tried + " of 1000 random batches tried");
            // compressible data again: tried within MAX_SKIP batches, and from then on each time
            int untried = 0;
            while (!z.tries(text.length)) {
                untried++;
            }
            assertTrue(untried <= Compression.MAX_SKIP, untried + "");
            byte[] small = z.compress(text, text.length);
            assertTrue(small.length < text.length / 10, small.length + "");
            assertTrue(z.tries(text.length));
        }
    }

    // ---------------------------------------------------------------- metrics

    private String metrics(PcServer pc) throws IOException {
        try (Response r = http.newCall(new Request.Builder().url(pc.url() + "/metrics").build()).execute()) {
            return r.body().string();
        }
    }

    /** A counter's value, with {@code direction} its label (null: none). */
    private static long counter(String page, String name, String direction) {
        String labels = direction == null ? "" : "\\{direction=\"" + direction + "\"\\}";
        Matcher m = Pattern.compile("(?m)^" + name + labels + " (\\S+)$").matcher(page);
        assertTrue(m.find(), name + " " + direction + " not in\n" + page);
        return (long) Double.parseDouble(m.group(1));
    }
}
