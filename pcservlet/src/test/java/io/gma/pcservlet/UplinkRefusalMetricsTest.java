package io.gma.pcservlet;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gma.client.ChildJvm;
import io.gma.client.Probes;
import io.gma.client.TestKeys;
import io.gma.internal.link.Link;
import io.gma.registry.Registry;
import io.gma.security.AlteredTokens;
import io.gma.security.HttpClients;
import io.gma.security.Rules;
import io.gma.security.Security;
import io.gma.security.SignedTokens;
import io.gma.security.SigningKey;
import io.gma.security.Tls;
import io.gma.wire.Message;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.Response;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A secured PC servlet counts in {@code /metrics} each uplink it refused before authentication, by reason: one
 * over the cap on connections not yet authenticated, one that never finished its handshake, one with an altered
 * token. It runs in a JVM of its own, its cap per source address at 1: the caps are read once per process, so a
 * system property set here would leak into every other test of this JVM.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class UplinkRefusalMetricsTest {
    private static final Pattern READY = Pattern.compile(".*GMA PC servlet of west at (\\S+), uplinks at \\S+:(\\d+)");

    private final Path keys = TestKeys.main();

    @Test
    void overTheCapATimedOutHandshakeAndAnAlteredTokenAreEachCounted() throws Exception {
        Security registrySecurity = Security.fromDirectory(keys, "registry", Tls.ClientAuth.NONE)
                .rules(Rules.parse("domain west west", "test registry rules")).build();
        Tls trustOnly = Tls.builder().trustStore(keys.resolve("truststore.p12"), Files.readString(keys.resolve(
                "store.pass")).strip().toCharArray()).build();
        OkHttpClient http = HttpClients.configure(new OkHttpClient.Builder(), Security.builder().tls(trustOnly)
                .token(() -> null).build()).build();
        try (Registry registry = Registry.builder().port(0).security(registrySecurity).build().start();
                ChildJvm west = ChildJvm.start(List.of("-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
                        "-Dgma.maxUnauthenticatedPerAddress=1"), PcServer.class.getName(), List.of("--domain", "west",
                        "--registry", registry.url(), "--http-port", "0", "--uplink-port", "0", "--security",
                        keys.toString(), "--identity", "west", "--memory"))) {
            try {
                refuseAndCount(west, http, trustOnly);
            } finally {
                west.stop();
            }
        } finally {
            http.dispatcher().executorService().shutdown();
            http.connectionPool().evictAll();
        }
    }

    /** Refuses one uplink for each reason, in turn, and awaits each count in {@code /metrics}. */
    private void refuseAndCount(ChildJvm west, OkHttpClient http, Tls trustOnly) throws Exception {
        Matcher ready = west.await(READY, 30_000);
        String metrics = ready.group(1) + "/metrics";
        int uplink = Integer.parseInt(ready.group(2));
        try (Socket pending = new Socket(InetAddress.getLoopbackAddress(), uplink)) {
            // TCP only, no TLS handshake: pending until the deadline, and the one this address may have
            long connected = System.nanoTime();
            try (Socket over = new Socket(InetAddress.getLoopbackAddress(), uplink)) {
                assertEquals(-1, readUntilClosed(over, 5_000), "the second is closed at once, without a word");
            }
            awaitCount(http, metrics, "over_cap", 1, west);
            readUntilClosed(pending, 15_000);
            long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - connected);
            long deadline = TimeUnit.NANOSECONDS.toMillis(Link.HANDSHAKE_NANOS);
            assertTrue(millis >= deadline - 500 && millis < deadline + 5_000, "closed after " + millis + " ms");
            awaitCount(http, metrics, "timeout", 1, west);
        }
        // the pending one is gone (its place was freed before its timeout was counted, which was awaited): a TLS
        // handshake, and HELLO alone with alice's token for west, one byte of its signature altered
        String token = SignedTokens.issue(SigningKey.read(keys.resolve("alice.key")), "alice", "west",
                Instant.now().plusSeconds(3600));
        String altered = AlteredTokens.of(token).stream().filter(a -> a.part().equals("signature")).findFirst()
                .orElseThrow().token();
        Security forger = Security.builder().tls(trustOnly).tokens(audience -> altered).build();
        Message refused = Probes.helloAnswer(forger, uplink, "alice", "west");
        assertEquals("ERROR UNAUTHORIZED token refused: it is not a valid token of a trusted issuer",
                refused.command() + " " + refused.dataAsString());
        awaitCount(http, metrics, "unauthorized", 1, west);
        String text = get(http, metrics);
        for (String[] count : new String[][] {{"over_cap", "1"}, {"timeout", "1"}, {"unauthorized", "1"},
            {"too_large", "0"}, {"malformed", "0"}}) {
            assertEquals(count[1], sample(text, count[0]), count[0] + " in\n" + text);
        }
    }

    /** Reads and drops what comes until the peer closes: -1, or the number of bytes that came before. */
    private static int readUntilClosed(Socket s, int timeoutMillis) throws IOException {
        s.setSoTimeout(timeoutMillis);
        InputStream in = s.getInputStream();
        int bytes = 0;
        try {
            for (int n; (n = in.read(new byte[512])) >= 0;) {
                bytes += n;
            }
        } catch (java.net.SocketException reset) {
            // closed with a reset: closed all the same
        }
        return bytes == 0 ? -1 : bytes;
    }

    private static String get(OkHttpClient http, String url) throws IOException {
        try (Response r = http.newCall(new Request.Builder().url(url).build()).execute()) {
            assertEquals(200, r.code(), url);
            return r.body().string();
        }
    }

    /** The value of {@code gma_pc_uplink_refused_total} for {@code reason}. */
    private static String sample(String metrics, String reason) {
        Matcher m = Pattern.compile("(?m)^gma_pc_uplink_refused_total\\{reason=\"" + reason + "\"} (\\d+)$")
                .matcher(metrics);
        assertTrue(m.find(), "no " + reason + " in\n" + metrics);
        return m.group(1);
    }

    /** Waits up to 10 s for the count of {@code reason} to be {@code n}. */
    private static void awaitCount(OkHttpClient http, String url, String reason, int n, ChildJvm west)
            throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        String last = sample(get(http, url), reason);
        while (!last.equals(Integer.toString(n)) && System.nanoTime() < deadline) {
            Thread.sleep(20);
            last = sample(get(http, url), reason);
        }
        assertEquals(Integer.toString(n), last, reason + "; west's output:\n" + west.output());
    }
}
