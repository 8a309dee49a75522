package io.gma.registry;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gma.registry.api.Kind;
import io.gma.registry.api.Lease;
import io.gma.registry.api.Registration;
import io.gma.registry.api.RegistryClient;
import io.gma.registry.api.RegistryException;
import jakarta.servlet.ServletOutputStream;
import jakarta.servlet.WriteListener;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.ByteArrayOutputStream;
import java.lang.reflect.Proxy;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.hawkular.agent.prometheus.types.Histogram;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The registry's {@code GET /metrics}: read with a Prometheus parser, its counters moving with the calls made. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class RegistryMetricsTest {
    @Test
    void countersMoveWithRegistrationsLookupsQueriesRefusalsAndExpiries() throws Exception {
        try (Registry registry = Registry.builder().port(0).sweepInterval(Duration.ofMillis(50)).build().start()) {
            String metrics = registry.url() + "/metrics";
            RegistryClient client = RegistryClient.create(registry.url());
            Scrape before = Scrape.get(metrics);
            for (String counter : new String[] {"registrations", "renewals", "removals", "lookups", "lease_expiries"}) {
                for (String kind : new String[] {"endpoint", "domain"}) {
                    assertEquals(0, before.value("gma_registry_" + counter + "_total", "kind", kind), counter);
                }
            }
            assertEquals(0, before.value("gma_registry_queries_total"));
            assertEquals(0, before.histogram("gma_registry_query_seconds").getSampleCount());
            assertEquals(0, before.family("gma_registry_refused_total").getMetrics().size());

            Lease kept = client.register(Registration.builder(Kind.PRODUCER, "cpu", "dsg").port(7000).build());
            Lease brief = client.register(Registration.builder(Kind.CONSUMER, "gone", "dsg").port(7001)
                    .lease(Duration.ofSeconds(1)).build());
            client.renew(kept.name());
            client.lookup(kept.name());
            client.registerDomain("dsg", "http://127.0.0.1:9000", null, Duration.ofSeconds(60));
            client.registerDomain("dsg", "http://127.0.0.1:9000", null, Duration.ofSeconds(60));
            client.lookupDomain("dsg");
            client.unregisterDomain("dsg");
            for (int i = 0; i < 3; i++) {
                client.query("SELECT name FROM endpoints");
            }
            assertEquals(400, assertThrows(RegistryException.class,
                    () -> client.query("DELETE FROM endpoints")).status());
            assertEquals(404, assertThrows(RegistryException.class, () -> client.lookup("nobody@dsg")).status());

            Scrape after = Scrape.get(metrics);
            assertEquals(2, after.value("gma_registry_registrations_total", "kind", "endpoint"));
            assertEquals(1, after.value("gma_registry_registrations_total", "kind", "domain"));
            assertEquals(1, after.value("gma_registry_renewals_total", "kind", "endpoint"));
            assertEquals(1, after.value("gma_registry_renewals_total", "kind", "domain"));
            assertEquals(1, after.value("gma_registry_lookups_total", "kind", "endpoint"));
            assertEquals(1, after.value("gma_registry_lookups_total", "kind", "domain"));
            assertEquals(0, after.value("gma_registry_removals_total", "kind", "endpoint"));
            assertEquals(1, after.value("gma_registry_removals_total", "kind", "domain"));
            assertEquals(1, after.value("gma_registry_refused_total", "code", "BAD_REQUEST"));
            assertEquals(1, after.value("gma_registry_refused_total", "code", "NOT_FOUND"));
            // the refused statement never reached the database: three queries, three times
            assertEquals(3, after.value("gma_registry_queries_total"));
            Histogram times = after.histogram("gma_registry_query_seconds");
            assertEquals(3, times.getSampleCount());
            assertEquals(0.0001, times.getBuckets().get(0).getUpperBound());
            assertEquals(Double.POSITIVE_INFINITY, times.getBuckets().get(times.getBuckets().size() - 1)
                    .getUpperBound());
            assertEquals(3, times.getBuckets().get(times.getBuckets().size() - 1).getCumulativeCount());
            assertTrue(times.getSampleSum() > 0, after.text());

            // the one-second lease runs out and the sweeper removes it
            await().atMost(Duration.ofSeconds(10)).until(() -> Scrape.get(metrics)
                    .value("gma_registry_lease_expiries_total", "kind", "endpoint") == 1);
            Scrape swept = Scrape.get(metrics);
            assertEquals(1, swept.value("gma_registry_live_registrations", "kind", "endpoint"), brief.name());
            assertEquals(0, swept.value("gma_registry_live_registrations", "kind", "domain"));
            assertEquals(0, swept.value("gma_registry_lease_expiries_total", "kind", "domain"));
        }
    }

    @Test
    void anExpiredNameRegisteredAgainBeforeTheSweepCountsAsAnExpiry() throws Exception {
        try (Registry registry = Registry.builder().port(0).sweepInterval(Duration.ofHours(1)).build().start()) {
            RegistryClient client = RegistryClient.create(registry.url());
            Registration exact = Registration.builder(Kind.PRODUCER, "pong", "lan").port(7000).exact(true)
                    .lease(Duration.ofSeconds(1)).build();
            client.register(exact);
            client.registerDomain("lan", "http://127.0.0.1:9000", null, Duration.ofSeconds(1));
            await().atMost(Duration.ofSeconds(10)).until(() -> Scrape.get(registry.url() + "/metrics")
                    .value("gma_registry_live_registrations", "kind", "endpoint") == 0);
            await().atMost(Duration.ofSeconds(10)).until(() -> Scrape.get(registry.url() + "/metrics")
                    .value("gma_registry_live_registrations", "kind", "domain") == 0);
            client.register(exact);
            client.registerDomain("lan", "http://127.0.0.1:9000", null, Duration.ofSeconds(60));
            Scrape page = Scrape.get(registry.url() + "/metrics");
            assertEquals(1, page.value("gma_registry_lease_expiries_total", "kind", "endpoint"));
            assertEquals(1, page.value("gma_registry_lease_expiries_total", "kind", "domain"));
            assertEquals(2, page.value("gma_registry_registrations_total", "kind", "endpoint"));
            assertEquals(2, page.value("gma_registry_registrations_total", "kind", "domain"));
        }
    }

    @Test
    void refusalsOfAuthenticationAndServerFailuresAreCountedByCode() throws Exception {
        RegistryCore core = new RegistryCore(Settings.defaults(), null, null);
        try {
            core.metrics.answeredError(401, "UNAUTHORIZED");
            core.metrics.answeredError(401, "UNAUTHORIZED");
            core.metrics.answeredError(503, "UNAVAILABLE");
            Scrape page = Scrape.parse(core.metrics.text(core.store));
            assertEquals(2, page.value("gma_registry_refused_total", "code", "UNAUTHORIZED"));
            assertEquals(1, page.value("gma_registry_failed_total", "code", "UNAVAILABLE"));
        } finally {
            core.close();
        }
    }

    @Test
    void otherHostsAreRefusedWhileTheRegistryIsOpen() throws Exception {
        RegistryCore core = new RegistryCore(Settings.defaults(), null, null);
        try {
            MetricsServlet servlet = new MetricsServlet(core);
            Answer refused = get(servlet, "192.0.2.7", null);
            assertEquals(403, refused.status);
            assertEquals("{\"error\":\"FORBIDDEN\",\"message\":\"/metrics answers this machine only, not 192.0.2.7,"
                    + " while no authentication is configured\"}", refused.body);
            Answer local = get(servlet, "::1", null);
            assertEquals(200, local.status);
            assertEquals(1, Scrape.parse(local.body).value("gma_registry_refused_total", "code", "FORBIDDEN"));
        } finally {
            core.close();
        }
    }

    @Test
    void otherHostsMustAuthenticateWhenAuthenticationIsConfigured() throws Exception {
        Authenticator tokens = req -> {
            if (!"Bearer good".equals(req.getHeader("Authorization"))) {
                throw new AccessDeniedException("no credentials: send 'Bearer <token>'");
            }
            return "prometheus";
        };
        RegistryCore core = new RegistryCore(Settings.defaults(), tokens, null);
        try {
            MetricsServlet servlet = new MetricsServlet(core);
            Answer refused = get(servlet, "192.0.2.7", null);
            assertEquals(401, refused.status);
            assertEquals("Bearer", refused.headers.get("WWW-Authenticate"));
            assertEquals("{\"error\":\"UNAUTHORIZED\",\"message\":\"no credentials: send 'Bearer <token>'\"}",
                    refused.body);
            assertEquals(200, get(servlet, "192.0.2.7", "Bearer good").status);
            Answer local = get(servlet, "127.0.0.1", null); // this machine needs no credentials
            assertEquals(200, local.status);
            assertEquals(1, Scrape.parse(local.body).value("gma_registry_refused_total", "code", "UNAUTHORIZED"));
        } finally {
            core.close();
        }
    }

    /** What the servlet answered a caller at {@code address}. */
    private record Answer(int status, Map<String, String> headers, String body) {
    }

    /** Calls the servlet as the container would for a GET from {@code address} with an Authorization header. */
    private static Answer get(MetricsServlet servlet, String address, String authorization) throws Exception {
        HttpServletRequest req = (HttpServletRequest) Proxy.newProxyInstance(RegistryMetricsTest.class
                .getClassLoader(), new Class<?>[] {HttpServletRequest.class}, (proxy, method, args) -> {
                    switch (method.getName()) {
                        case "getRemoteAddr":
                            return address;
                        case "getHeader":
                            return "Authorization".equalsIgnoreCase((String) args[0]) ? authorization : null;
                        case "getMethod":
                            return "GET";
                        default:
                            return null;
                    }
                });
        int[] status = {200};
        Map<String, String> headers = new HashMap<>();
        ByteArrayOutputStream body = new ByteArrayOutputStream();
        ServletOutputStream out = new ServletOutputStream() {
            @Override
            public void write(int b) {
                body.write(b);
            }

            @Override
            public boolean isReady() {
                return true;
            }

            @Override
            public void setWriteListener(WriteListener listener) {
            }
        };
        HttpServletResponse resp = (HttpServletResponse) Proxy.newProxyInstance(RegistryMetricsTest.class
                .getClassLoader(), new Class<?>[] {HttpServletResponse.class}, (proxy, method, args) -> {
                    switch (method.getName()) {
                        case "setStatus":
                            status[0] = (Integer) args[0];
                            return null;
                        case "setHeader":
                            headers.put((String) args[0], (String) args[1]);
                            return null;
                        case "setContentType":
                            headers.put("Content-Type", (String) args[0]);
                            return null;
                        case "getOutputStream":
                            return out;
                        case "isCommitted":
                            return false;
                        default:
                            return null;
                    }
                });
        servlet.doGet(req, resp);
        return new Answer(status[0], headers, body.toString(StandardCharsets.UTF_8));
    }
}
