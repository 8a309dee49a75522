package io.gma.registry;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.gma.registry.api.RegistryClient;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.eclipse.jetty.ee10.servlet.ServletContextHandler;
import org.eclipse.jetty.ee10.servlet.ServletHolder;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The registry's samples of the PC servlets, for the dashboard's charts: a real registry sampling every second a
 * real HTTP server that answers as a PC servlet's status page does (the PC servlet module depends on this one, so
 * its own status page is charted in the examples' DashboardTest). The answer has each reachable domain's rates
 * and depths, a status that names another domain is no sample and says so, an outbound-only domain is not asked,
 * a range that is not one of the three is refused naming it; the dashboard serves uPlot from its webjar.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class PcSamplerTest {
    private static final HttpClient HTTP = HttpClient.newHttpClient();

    /** A status page of {@code domain}: 20 messages in and 10 out since the last call, 7 queued. */
    private static class Status extends HttpServlet {
        private static final long serialVersionUID = 1L;
        private final String domain;
        private final AtomicLong calls = new AtomicLong();

        Status(String domain) {
            this.domain = domain;
        }

        @Override
        protected void doGet(HttpServletRequest req, HttpServletResponse resp) throws IOException {
            long n = calls.incrementAndGet();
            resp.setContentType("application/json");
            String queues = "\"clients\":[{\"name\":\"a\",\"queuedMessages\":3,\"queuedBytes\":300}],"
                    + "\"outbound\":[{\"domain\":\"x\",\"queuedMessages\":4,\"queuedBytes\":400}],\"relayed\":[]";
            String counters = "\"messagesReceived\":" + n * 15 + ",\"uplinkMessagesIn\":" + n * 5
                    + ",\"messagesSent\":" + n * 4 + ",\"uplinkMessagesOut\":" + n * 6;
            resp.getOutputStream().write(("{\"domain\":\"" + domain + "\"," + queues + ",\"counters\":{" + counters
                    + "}}").getBytes(StandardCharsets.UTF_8));
        }
    }

    private static Server statusPage(String domain, Status status) throws Exception {
        Server s = new Server();
        ServerConnector c = new ServerConnector(s);
        c.setHost("127.0.0.1");
        s.addConnector(c);
        ServletContextHandler context = new ServletContextHandler("/");
        context.addServlet(new ServletHolder(status), "/gma/v1/status");
        s.setHandler(context);
        s.start();
        return s;
    }

    private static String url(Server s) {
        return "http://127.0.0.1:" + ((ServerConnector) s.getConnectors()[0]).getLocalPort();
    }

    private static HttpResponse<String> get(String url) throws Exception {
        return HTTP.send(HttpRequest.newBuilder(URI.create(url)).build(), HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void aStatusPageThatIsTooLongOrRedirectsIsNotReadNorFollowed() throws Exception {
        // whoever registers a domain names its URL: the registry reads a bounded page there, and goes nowhere else
        Server huge = statusPage("huge", new Status("huge") {
            private static final long serialVersionUID = 1L;

            @Override
            protected void doGet(HttpServletRequest req, HttpServletResponse resp) throws IOException {
                resp.setContentType("application/json");
                byte[] chunk = "x".repeat(64 * 1024).getBytes(StandardCharsets.UTF_8);
                resp.getOutputStream().write("{\"domain\":\"".getBytes(StandardCharsets.UTF_8));
                for (int i = 0; i < 64; i++) { // 4 MiB, and more if it were read
                    resp.getOutputStream().write(chunk);
                }
            }
        });
        Server east = statusPage("east", new Status("east"));
        Server away = statusPage("away", new Status("away") {
            private static final long serialVersionUID = 1L;

            @Override
            protected void doGet(HttpServletRequest req, HttpServletResponse resp) throws IOException {
                resp.sendRedirect(url(east) + "/gma/v1/status");
            }
        });
        try (Registry registry = Registry.builder().port(0).pcSampling(Duration.ofSeconds(1)).build().start()) {
            RegistryClient client = RegistryClient.create(registry.url());
            client.registerDomain("huge", url(huge), null, Duration.ofMinutes(1));
            client.registerDomain("away", url(away), null, Duration.ofMinutes(1));
            String pcs = registry.url() + Registry.API_PATH + "/pcs";
            await().atMost(Duration.ofSeconds(20)).until(() -> {
                JsonNode answer = Json.MAPPER.readTree(get(pcs + "?range=5m").body()).get("pcs");
                return answer.size() == 2 && !answer.get(0).get("error").isNull()
                        && !answer.get(1).get("error").isNull();
            });
            JsonNode answer = Json.MAPPER.readTree(get(pcs + "?range=5m").body()).get("pcs");
            assertEquals(url(away) + "/gma/v1/status answered 302", answer.get(0).get("error").asText());
            assertEquals(url(huge) + "/gma/v1/status answered more than " + PcSampler.MAX_STATUS_BYTES + " bytes,"
                    + " the most a status page may be; not read", answer.get(1).get("error").asText());
        } finally {
            huge.stop();
            east.stop();
            away.stop();
        }
    }

    @Test
    void eachReachablePcServletIsSampledAndChartedOverThePeriodAsked() throws Exception {
        Status east = new Status("east");
        Server eastPage = statusPage("east", east);
        Server liar = statusPage("west", new Status("other"));
        try (Registry registry = Registry.builder().port(0).pcSampling(Duration.ofSeconds(1)).build().start()) {
            RegistryClient client = RegistryClient.create(registry.url());
            client.registerDomain("east", url(eastPage), null, Duration.ofMinutes(1));
            client.registerDomain("west", url(liar), null, Duration.ofMinutes(1));
            client.registerDomain("far", null, "east", Duration.ofMinutes(1));
            String pcs = registry.url() + Registry.API_PATH + "/pcs";
            await().atMost(Duration.ofSeconds(20)).until(() -> east.calls.get() >= 4);
            JsonNode answer = Json.MAPPER.readTree(get(pcs + "?range=5m").body());
            assertEquals("5m", answer.get("range").asText());
            assertEquals(1000, answer.get("intervalMillis").asLong());
            assertEquals(8_640, answer.get("keptSeconds").asLong());
            assertEquals(2, answer.get("pcs").size(), "far is outbound-only: " + answer);
            JsonNode e = answer.get("pcs").get(0);
            assertEquals("east", e.get("domain").asText());
            assertTrue(e.get("error").isNull(), e.toString());
            assertTrue(e.get("at").size() >= 3, e.toString());
            assertTrue(e.get("in").get(0).isNull(), "the first sample has none before it to count from: " + e);
            for (int i = 1; i < e.get("at").size(); i++) {
                // 20 in and 10 out a call, a call a second or so
                double in = e.get("in").get(i).asDouble();
                double out = e.get("out").get(i).asDouble();
                assertTrue(in > 5 && in < 60 && Math.abs(in - 2 * out) < 1e-6, e.toString());
                assertEquals(7, e.get("queuedMessages").get(i).asLong());
                assertEquals(700, e.get("queuedBytes").get(i).asLong());
            }
            JsonNode w = answer.get("pcs").get(1);
            assertEquals("west", w.get("domain").asText());
            assertEquals("the status answered names domain \"other\", not west", w.get("error").asText());
            assertEquals(0, w.get("at").size());
            JsonNode day = Json.MAPPER.readTree(get(pcs + "?range=1d").body()).get("pcs").get(0);
            assertTrue(day.get("at").size() >= e.get("at").size(), "a day holds the 5 minutes: " + day);

            HttpResponse<String> refused = get(pcs + "?range=2d");
            assertEquals(400, refused.statusCode());
            assertEquals("range \"2d\" is not one of 5m, 1h, 1d", Json.MAPPER.readTree(refused.body()).get("message")
                    .asText());

            // the dashboard's pages find the samples, and uPlot comes from its webjar
            assertEquals(Registry.API_PATH + "/pcs", Json.MAPPER.readTree(get(registry.url()
                    + "/dashboard/config.json").body()).get("pcs").asText());
            HttpResponse<String> uplot = get(registry.url() + "/dashboard/uplot/uPlot.iife.min.js");
            assertEquals(200, uplot.statusCode());
            assertTrue(uplot.headers().firstValue("Content-Type").orElse("").startsWith("text/javascript"));
            assertTrue(uplot.body().contains("uPlot") && uplot.body().length() > 40_000, "uPlot's min.js");
            assertTrue(get(registry.url() + "/dashboard/uplot/LICENSE").body().contains("MIT License"));
            for (String page : new String[] {"table.html", "pcs.html", "table.js", "pcs.js", "routes.js",
                "common.js", "uplot/uPlot.min.css"}) {
                assertEquals(200, get(registry.url() + "/dashboard/" + page).statusCode(), page);
            }
        } finally {
            eastPage.stop();
            liar.stop();
        }
    }
}
