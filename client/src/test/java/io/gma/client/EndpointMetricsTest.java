package io.gma.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gma.registry.Scrape;
import io.gma.registry.api.QueryResult;
import io.gma.registry.api.RegistryClient;
import io.gma.security.AuthException;
import io.gma.security.Security;
import io.gma.security.SignedTokens;
import io.gma.security.SigningKey;
import io.gma.security.Tls;
import io.gma.wire.ErrorCode;
import java.io.IOException;
import java.lang.reflect.RecordComponent;
import java.net.ConnectException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.hawkular.agent.prometheus.types.Metric;
import org.hawkular.agent.prometheus.types.MetricFamily;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** An endpoint's {@code GET /metrics} ({@link EndpointBuilder#metrics}), read with a Prometheus text parser. */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class EndpointMetricsTest {
    private static final int MESSAGES = 25;

    @Test
    void countersMoveWithTheMessagesSentAndReceived() throws Exception {
        LinkedBlockingQueue<Incoming> received = new LinkedBlockingQueue<>();
        try (DirectFixture f = new DirectFixture();
                Consumer sink = f.consumer("sink").metrics("0").onMessage(received::add).build();
                Producer source = f.producer("source").metrics("127.0.0.1:0").build()) {
            String sourcePage = source.metricsUrl().orElseThrow();
            String sinkPage = sink.metricsUrl().orElseThrow();
            assertEquals(0, Scrape.get(sourcePage).value("gma_endpoint_messages_out_total", "endpoint",
                    source.name()));
            for (int i = 0; i < MESSAGES; i++) {
                source.send(sink.name(), ("m" + i).getBytes(StandardCharsets.UTF_8));
            }
            for (int i = 0; i < MESSAGES; i++) {
                assertTrue(received.poll(10, TimeUnit.SECONDS) != null, "message " + i + " did not arrive");
            }
            // each page is that endpoint's stats of the moment, under its own name only
            long before = source.stats().messagesOut();
            Scrape out = Scrape.get(sourcePage);
            double sent = out.value("gma_endpoint_messages_out_total", "endpoint", source.name());
            assertTrue(sent >= MESSAGES && before <= sent && sent <= source.stats().messagesOut(), out.text());
            assertTrue(out.value("gma_endpoint_bytes_out_total", "endpoint", source.name()) > 0, out.text());
            before = sink.stats().messagesIn();
            Scrape in = Scrape.get(sinkPage);
            double read = in.value("gma_endpoint_messages_in_total", "endpoint", sink.name());
            assertTrue(read >= MESSAGES && before <= read && read <= sink.stats().messagesIn(), in.text());
            for (MetricFamily family : in.families().values()) {
                for (Metric m : family.getMetrics()) {
                    assertEquals(sink.name(), m.getLabels().get("endpoint"), family.getName());
                }
            }
            assertEquals(0, in.value("gma_endpoint_connections_refused_total", "endpoint", sink.name(), "reason",
                    "over_cap"));
        }
    }

    @Test
    void everyFieldOfTheStatsIsOneSample() throws Exception {
        RecordComponent[] fields = EndpointStats.class.getRecordComponents();
        Class<?>[] types = new Class<?>[fields.length];
        Object[] values = new Object[fields.length];
        for (int i = 0; i < fields.length; i++) {
            types[i] = long.class;
            values[i] = 1000L + i; // a value of its own for each field
        }
        EndpointStats stats = EndpointStats.class.getDeclaredConstructor(types).newInstance(values);
        Scrape page = Scrape.parse(MetricsServer.text("x-abc234@lan", stats));
        Set<Double> seen = new HashSet<>();
        int samples = 0;
        for (MetricFamily family : page.families().values()) {
            assertTrue(family.getName().startsWith("gma_endpoint_"), family.getName());
            boolean counter = family.getName().endsWith("_total");
            assertEquals(counter ? "COUNTER" : "GAUGE", family.getType().name(), family.getName());
            for (Metric m : family.getMetrics()) {
                seen.add(page.value(family.getName(), m.getLabels().entrySet().stream()
                        .flatMap(e -> Stream.of(e.getKey(), e.getValue())).toArray(String[]::new)));
                samples++;
            }
        }
        assertEquals(fields.length, samples, page.text());
        assertEquals(fields.length, seen.size(), "a field was written twice, another not at all:\n" + page.text());
        assertEquals(1000 + Arrays.asList(fields).indexOf(Arrays.stream(fields)
                .filter(c -> c.getName().equals("handshakesTooLarge")).findFirst().orElseThrow()),
                page.value("gma_endpoint_connections_refused_total", "endpoint", "x-abc234@lan", "reason",
                        "too_large"));
    }

    @Test
    void thePageIsRegisteredAsTheAttributeMetrics() throws Exception {
        try (DirectFixture f = new DirectFixture();
                Producer p = f.producer("cpu").attribute("site", "cardiff").metrics("0").build();
                Producer quiet = f.producer("quiet").build()) {
            String url = p.metricsUrl().orElseThrow();
            assertTrue(url.matches("http://127\\.0\\.0\\.1:[0-9]+/metrics"), url);
            QueryResult rows = RegistryClient.create(f.registryUrl()).query("SELECT name, value FROM attributes"
                    + " WHERE key = '" + EndpointBuilder.METRICS_ATTRIBUTE + "'");
            assertEquals(List.of(List.of(p.name(), url)), rows.rows());
            assertEquals(p.name(), Scrape.get(url).family("gma_endpoint_messages_in_total").getMetrics().get(0)
                    .getLabels().get("endpoint"));
            assertTrue(quiet.metricsUrl().isEmpty());
        }
    }

    @Test
    void thePageStopsWithTheEndpoint() throws Exception {
        try (DirectFixture f = new DirectFixture()) {
            Producer p = f.producer("brief").metrics("0").build();
            String url = p.metricsUrl().orElseThrow();
            Scrape.get(url);
            p.close();
            HttpClient http = HttpClient.newHttpClient();
            assertThrows(ConnectException.class, () -> http.send(HttpRequest.newBuilder(URI.create(url)).build(),
                    HttpResponse.BodyHandlers.discarding()));
        }
    }

    @Test
    void aPortInUseFailsTheBuildNamingThePortAndTheOption() throws Exception {
        try (DirectFixture f = new DirectFixture();
                ServerSocket taken = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
            int port = taken.getLocalPort();
            EndpointException e = assertThrows(EndpointException.class,
                    () -> f.producer("busy").metrics(Integer.toString(port)).build());
            assertEquals(ErrorCode.INTERNAL, e.code());
            assertEquals("cannot listen on 127.0.0.1:" + port + " for metrics (Address already in use): another"
                    + " process has it; stop that one, or give --metrics-port (EndpointBuilder.metrics) another port"
                    + " (0 takes any free one)", e.getMessage());
            assertTrue(RegistryClient.create(f.registryUrl()).query("SELECT name FROM endpoints").rows().isEmpty(),
                    "an endpoint that did not start was registered");
        }
    }

    @Test
    void badAddressesAndCombinationsAreRefused() throws Exception {
        for (String bad : new String[] {"", "x", "70000", "-1", "host:", ":80", "[::1]:x"}) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> Producer.builder().metrics(bad), bad);
            assertEquals("metrics \"" + bad + "\" is not [HOST:]PORT with PORT 0..65535", e.getMessage());
        }
        EndpointBuilder<Producer> both = Producer.builder().registry("http://127.0.0.1:1").domain("lan")
                .label("x").attribute("metrics", "elsewhere").metrics("0");
        assertEquals("attribute metrics is given, and metrics(127.0.0.1:0) registers its own: drop one",
                assertThrows(IllegalStateException.class, both::build).getMessage());
        EndpointBuilder<Producer> exposed = Producer.builder().registry("http://127.0.0.1:1").domain("lan")
                .label("x").metrics("0.0.0.0:0");
        assertEquals("metrics 0.0.0.0:0 listens beyond this machine, where only authenticated callers are answered,"
                + " and this endpoint's security authenticates nobody: give metrics a PORT alone (127.0.0.1), or a"
                + " security with tokens or client certificates",
                assertThrows(IllegalStateException.class, exposed::build).getMessage());
    }

    @Test
    void otherHostsAreAnsweredOnlyWithCredentials() throws Exception {
        InetAddress other = InetAddress.getByName("192.0.2.7");
        AuthException open = assertThrows(AuthException.class,
                () -> MetricsServer.check(other, null, null, Security.insecure(), "x@lan"));
        assertEquals(AuthException.Kind.FORBIDDEN, open.kind());
        assertEquals("/metrics answers this machine only, not 192.0.2.7, while no authentication is configured",
                open.getMessage());
        MetricsServer.check(InetAddress.getByName("::1"), null, null, Security.insecure(), "x@lan");

        Path keys = TestKeys.main();
        Security secured = TestKeys.security(keys, "bob", "");
        AuthException none = assertThrows(AuthException.class,
                () -> MetricsServer.check(other, null, null, secured, "x@lan"));
        assertEquals(AuthException.Kind.UNAUTHORIZED, none.kind());
        String token = SignedTokens.issue(SigningKey.read(keys.resolve("alice.key")), "alice", "x@lan",
                Instant.now().plus(Duration.ofMinutes(5)));
        MetricsServer.check(other, Security.BEARER + token, null, secured, "x@lan");
        MetricsServer.check(other, null, "alice", secured, "x@lan"); // a verified client certificate's CN
        String forAnother = SignedTokens.issue(SigningKey.read(keys.resolve("alice.key")), "alice", "y@lan",
                Instant.now().plus(Duration.ofMinutes(5)));
        assertEquals(AuthException.Kind.UNAUTHORIZED, assertThrows(AuthException.class,
                () -> MetricsServer.check(other, Security.BEARER + forAnother, null, secured, "x@lan")).kind());
        MetricsServer.check(InetAddress.getLoopbackAddress(), null, null, secured, "x@lan");
    }

    @Test
    void aSecuredEndpointServesItsPageOverTls() throws Exception {
        Path keys = TestKeys.main();
        try (DirectFixture f = new DirectFixture(keys);
                Producer p = f.producer("tls").security(TestKeys.security(keys, "alice", "register alice *"))
                        .metrics("0").build()) {
            String url = p.metricsUrl().orElseThrow();
            assertTrue(url.startsWith("https://127.0.0.1:"), url);
            char[] password = Files.readString(keys.resolve("store.pass")).strip().toCharArray();
            Tls trust = Tls.builder().trustStore(keys.resolve("truststore.p12"), password).build();
            HttpClient http = HttpClient.newBuilder().sslContext(trust.context()).build();
            assertEquals(0, Scrape.get(http, url).value("gma_endpoint_drops_total", "endpoint", p.name()));
            // plaintext to the TLS port is no page
            HttpClient plain = HttpClient.newHttpClient();
            assertThrows(IOException.class, () -> plain.send(HttpRequest.newBuilder(URI.create(url.replace("https:",
                    "http:"))).timeout(Duration.ofSeconds(5)).build(), HttpResponse.BodyHandlers.ofString()));
        }
    }

    @Test
    void onlyGetOfTheMetricsPathIsAnswered() throws Exception {
        try (DirectFixture f = new DirectFixture(); Producer p = f.producer("methods").metrics("0").build()) {
            String url = p.metricsUrl().orElseThrow();
            HttpClient http = HttpClient.newHttpClient();
            HttpResponse<String> post = http.send(HttpRequest.newBuilder(URI.create(url))
                    .POST(HttpRequest.BodyPublishers.ofString("x")).build(), HttpResponse.BodyHandlers.ofString());
            assertEquals(405, post.statusCode());
            assertEquals("POST is not allowed here; use GET", post.body());
            HttpResponse<String> other = http.send(HttpRequest.newBuilder(URI.create(url + "x")).build(),
                    HttpResponse.BodyHandlers.ofString());
            assertEquals(404, other.statusCode());
            assertEquals("no such page: /metricsx; the metrics are at /metrics", other.body());
        }
    }
}
