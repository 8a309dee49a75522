package io.gma.pcservlet;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gma.client.EndpointException;
import io.gma.client.Producer;
import io.gma.client.Sent;
import io.gma.client.SniffingListener;
import io.gma.registry.Registry;
import io.gma.registry.api.RegistryClient;
import io.gma.security.HttpClients;
import io.gma.security.Keys;
import io.gma.security.Security;
import io.gma.security.Tls;
import io.gma.wire.ErrorCode;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.Response;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A sniffing listener stands where domain west's PC servlet would be: west is registered, in a real registry,
 * with an {@code http://} URL. A secured PC servlet of east neither posts to it nor polls it: the listener sees
 * no connection at all, so no {@code Authorization} header and no token; senders get ERROR UNAUTHORIZED naming
 * the URL, and the log says it once. Without security, the same URL is posted to and polled, and the listener
 * sees the requests: it would see a credential too.
 *
 * <p>The listener is checked before the callers' failures, so that a leak fails with what leaked.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class PlaintextPeerUrlTest {
    /** Long enough for a POST or poll that was going to be made anyway to reach the listener. */
    private static final Duration QUIET = Duration.ofMillis(500);
    /** The bound on every wait for something that should happen. */
    private static final Duration WAIT = Duration.ofSeconds(10);
    private static final String RULES = """
            register  producer   *@east
            domain    east       east
            domain    west       west
            send      *          *
            post      east,west  east,west
            query     *          endpoints,domains
            """;

    @TempDir
    static Path keys;
    private SniffingListener sniffer;
    private LogCapture log;

    @BeforeAll
    static void makeKeys() throws IOException {
        Keys.make(keys, List.of("localhost", "127.0.0.1"), List.of("producer"));
        Keys.addIdentities(keys, List.of("east", "west"));
        Files.writeString(keys.resolve("rules"), RULES);
    }

    @BeforeEach
    void listen() throws IOException {
        sniffer = SniffingListener.start();
        log = LogCapture.start();
    }

    @AfterEach
    void stopListening() throws Exception {
        log.close();
        sniffer.close();
    }

    private static Security secure(String identity) throws IOException {
        return Security.fromDirectory(keys, identity, Tls.ClientAuth.WANT).build();
    }

    /** Registers domain west at the sniffer's URL, as west itself (its identity and key) would. */
    private void registerWestAtTheSniffer(Registry registry, Security west) throws Exception {
        RegistryClient.builder(registry.url()).security(west).build().registerDomain("west", sniffer.url(), null,
                null);
    }

    /** What east's PC servlet says of west's URL with security on, after "did not send to" or "not polling: ". */
    private String refusal() {
        return "domain west's URL " + sniffer.url() + ": expected scheme 'https' but was 'http' (security is on:"
                + " credentials must not cross the network in plaintext)";
    }

    private static Producer producer(Registry registry, PcServer east, Security security) throws EndpointException {
        return Producer.builder().registry(registry.url()).domain("east").label("sender").pcServlet(east.uplink())
                .security(security).requestTimeout(WAIT).build();
    }

    @Test
    void aSecuredPcServletPostsNothingToAnHttpDomainAndEachSenderIsToldWhy() throws Exception {
        EndpointException refused;
        String reported;
        try (Registry registry = Registry.builder().port(0).security(secure("registry")).build().start();
                PcServer east = PcServer.builder("east", registry.url()).security(secure("east")).start()) {
            registerWestAtTheSniffer(registry, secure("west"));
            try (Producer p = producer(registry, east, secure("producer"))) {
                refused = assertThrows(EndpointException.class, () -> p.request("y@west", "ping".getBytes(UTF_8),
                        WAIT));
                // a notification is acknowledged by east's PC servlet (hop by hop); its ERROR comes after, logged
                Sent sent = p.send("x@west", "event".getBytes(UTF_8));
                sent.acknowledged().get(WAIT.toSeconds(), TimeUnit.SECONDS);
                reported = p.name() + ": x@west reported an error on message " + Long.toUnsignedString(
                        sent.sequence()) + ": UNAUTHORIZED east did not send to " + refusal();
                log.await(text -> text.contains(reported), WAIT);
            }
            // counted as this PC servlet's own refusal, not as west's (west never saw them)
            OkHttpClient http = HttpClients.configure(new OkHttpClient.Builder(), secure("west")).build();
            assertEquals(2, counter(http, east, "gma_pc_unsendable_total"));
            assertEquals(0, counter(http, east, "gma_pc_refused_total"));
            http.connectionPool().evictAll();
        }
        sniffer.assertNothingReceived(QUIET);
        assertEquals(ErrorCode.UNAUTHORIZED, refused.code(), refused.getMessage());
        assertEquals("y@west answered ERROR UNAUTHORIZED east did not send to " + refusal(), refused.getMessage());
        assertEquals(1, log.count(reported), log.text());
        assertEquals(1, log.count("east: " + refusal()), "logged once per URL: " + log.text());
    }

    @Test
    void aSecuredOutboundOnlyPcServletPollsNothingFromAnHttpDomainAndLogsItOnce() throws Exception {
        long retries;
        try (Registry registry = Registry.builder().port(0).security(secure("registry")).build().start()) {
            registerWestAtTheSniffer(registry, secure("west"));
            try (PcServer east = PcServer.builder("east", registry.url()).via("west").security(secure("east"))
                    .start()) {
                // each refused poll backs off and counts a retry: 100 ms doubling, so four take about 1.5 s
                OkHttpClient http = HttpClients.configure(new OkHttpClient.Builder(), secure("west")).build();
                await().atMost(WAIT).pollInterval(Duration.ofMillis(50)).until(() -> retries(http, east) >= 4);
                retries = retries(http, east);
                http.connectionPool().evictAll();
            }
        }
        sniffer.assertNothingReceived(QUIET);
        assertTrue(retries >= 4, "east retried its poll " + retries + " times");
        assertEquals(1, log.count("east: not polling: " + refusal()), "logged once per URL: " + log.text());
    }

    @Test
    void anInsecurePcServletPostsToTheSameUrlAndTheListenerSeesIt() throws Exception {
        try (Registry registry = Registry.builder().port(0).security(Security.insecure()).build().start();
                PcServer east = PcServer.builder("east", registry.url()).security(Security.insecure())
                        .drainTimeout(Duration.ZERO).start()) {
            registerWestAtTheSniffer(registry, Security.insecure());
            try (Producer p = producer(registry, east, Security.insecure())) {
                p.send("x@west", "event".getBytes(UTF_8));
                assertTrue(sniffer.awaitReceived("POST /gma/v1/messages HTTP/1.1", WAIT), sniffer.received());
            }
        }
        assertTrue(sniffer.received().contains("\r\nX-Gma-Domain: east\r\n"), sniffer.received());
        assertFalse(sniffer.received().contains("Authorization"), "insecure: no credentials to show");
    }

    @Test
    void anInsecureOutboundOnlyPcServletPollsTheSameUrlAndTheListenerSeesIt() throws Exception {
        try (Registry registry = Registry.builder().port(0).security(Security.insecure()).build().start()) {
            registerWestAtTheSniffer(registry, Security.insecure());
            try (PcServer east = PcServer.builder("east", registry.url()).via("west").security(Security.insecure())
                    .start()) {
                assertTrue(sniffer.awaitReceived("GET /gma/v1/messages?domain=east&wait=", WAIT), sniffer.received());
            }
        }
        assertFalse(sniffer.received().contains("Authorization"), "insecure: no credentials to show");
    }

    /** gma_pc_retries_total from the PC servlet's /metrics. */
    private static long retries(OkHttpClient http, PcServer pc) throws IOException {
        return counter(http, pc, "gma_pc_retries_total");
    }

    /** A counter from the PC servlet's /metrics (answered to this machine without credentials). */
    private static long counter(OkHttpClient http, PcServer pc, String name) throws IOException {
        try (Response r = http.newCall(new Request.Builder().url(pc.url() + "/metrics").build()).execute()) {
            String body = r.body().string();
            assertEquals(200, r.code(), body);
            Matcher m = Pattern.compile("(?m)^" + name + " (\\d+)$").matcher(body);
            assertTrue(m.find(), body);
            return Long.parseLong(m.group(1));
        }
    }

    /**
     * What is written to System.err (where slf4j-simple logs) while it runs, still written through to the
     * original.
     */
    private static final class LogCapture implements AutoCloseable {
        private final ByteArrayOutputStream captured = new ByteArrayOutputStream();
        private final PrintStream original = System.err;

        static LogCapture start() {
            LogCapture c = new LogCapture();
            System.setErr(new PrintStream(new Tee(c.captured, c.original), true, UTF_8));
            return c;
        }

        String text() {
            synchronized (captured) {
                return captured.toString(UTF_8);
            }
        }

        /** How many lines contain {@code text}. */
        long count(String text) {
            return text().lines().filter(line -> line.contains(text)).count();
        }

        /**
         * Waits until the log satisfies {@code condition}, for up to {@code timeout}; whether it did. Each write
         * wakes it.
         */
        boolean await(Predicate<String> condition, Duration timeout) throws InterruptedException {
            long deadline = System.nanoTime() + timeout.toNanos();
            synchronized (captured) {
                while (!condition.test(text())) {
                    long left = deadline - System.nanoTime();
                    if (left <= 0) {
                        return false;
                    }
                    TimeUnit.NANOSECONDS.timedWait(captured, left);
                }
                return true;
            }
        }

        @Override
        public void close() {
            System.err.flush();
            System.setErr(original);
        }
    }

    /** Writes to two streams; the first is the capture, guarded by itself, and woken on each write. */
    private static final class Tee extends OutputStream {
        private final ByteArrayOutputStream a;
        private final OutputStream b;

        Tee(ByteArrayOutputStream a, OutputStream b) {
            this.a = a;
            this.b = b;
        }

        @Override
        public void write(int c) throws IOException {
            synchronized (a) {
                a.write(c);
                a.notifyAll();
            }
            b.write(c);
        }

        @Override
        public void write(byte[] buf, int off, int len) throws IOException {
            synchronized (a) {
                a.write(buf, off, len);
                a.notifyAll();
            }
            b.write(buf, off, len);
        }
    }
}
