package io.gma.examples.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.gma.registry.api.QueryResult;
import io.gma.registry.api.RegistryClient;
import io.gma.registry.api.RegistryException;
import io.gma.security.HttpClients;
import io.gma.security.Security;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.Response;

/**
 * One look at everything the registry knows of: each PC servlet's {@code /gma/v1/status} (found in the domains
 * view) and each endpoint's {@code /metrics} (those that serve one register it as the attribute {@code metrics}),
 * asked several at a time, each within 3 s. What {@code gma top} draws; a part that does not answer is shown
 * with why.
 */
final class Survey implements AutoCloseable {
    /** One PC servlet, or one endpoint: its counters (cumulative) and gauges as read, or why none were. */
    record Part(String name, String url, Map<String, Double> values, String failure) {
    }

    /** What one look found, and when. */
    record Look(long nanos, List<Part> pcServlets, List<Part> endpoints, Map<String, Long> endpointsByDomain) {
    }

    private static final ObjectMapper JSON = new ObjectMapper();
    /** The largest page read: a status page of a PC servlet with thousands of clients stays under it. */
    private static final int MAX_PAGE_BYTES = 8 << 20;
    /** Pages asked for at once. */
    private static final int ASKED_AT_ONCE = 8;

    private final RegistryClient registry;
    private final OkHttpClient http;
    private final Security security;
    private final ExecutorService asking = Executors.newFixedThreadPool(ASKED_AT_ONCE, r -> {
        Thread t = new Thread(r, "gma-survey");
        t.setDaemon(true);
        return t;
    });

    Survey(RegistryClient registry, Security security) {
        this.registry = registry;
        this.security = security;
        this.http = HttpClients.configure(new OkHttpClient.Builder(), security).callTimeout(Duration.ofSeconds(3))
                .build();
    }

    /** Looks once. */
    Look look() throws RegistryException {
        Map<String, Long> byDomain = new LinkedHashMap<>();
        for (List<Object> row : registry.query("SELECT domain, COUNT(*) FROM endpoints GROUP BY domain ORDER BY"
                + " domain").rows()) {
            byDomain.put(String.valueOf(row.get(0)), ((Number) row.get(1)).longValue());
        }
        List<CompletableFuture<Part>> pcs = new ArrayList<>();
        for (List<Object> row : registry.query("SELECT domain, url, via FROM domains ORDER BY domain").rows()) {
            String domain = String.valueOf(row.get(0));
            pcs.add(row.get(1) == null ? CompletableFuture.completedFuture(new Part(domain, null, Map.of(),
                    "outbound-only (via " + row.get(2) + "): no status page"))
                    : CompletableFuture.supplyAsync(() -> pcServlet(domain, String.valueOf(row.get(1))), asking));
        }
        List<CompletableFuture<Part>> endpoints = new ArrayList<>();
        QueryResult pages = registry.query("SELECT name, value FROM attributes WHERE key = 'metrics' ORDER BY name");
        for (List<Object> row : pages.rows()) {
            endpoints.add(CompletableFuture.supplyAsync(() -> endpoint(String.valueOf(row.get(0)),
                    String.valueOf(row.get(1))), asking));
        }
        return new Look(System.nanoTime(), pcs.stream().map(CompletableFuture::join).toList(),
                endpoints.stream().map(CompletableFuture::join).toList(), byDomain);
    }

    private Part pcServlet(String domain, String url) {
        try {
            JsonNode status = JSON.readTree(get(url + "/gma/v1/status", domain));
            Map<String, Double> values = new HashMap<>();
            status.path("counters").fields().forEachRemaining(f -> {
                if (f.getValue().isNumber()) {
                    values.put(f.getKey(), f.getValue().asDouble());
                }
            });
            double messages = 0;
            double bytes = 0;
            int connected = 0;
            for (String queues : new String[] {"clients", "outbound", "relayed"}) {
                for (JsonNode q : status.path(queues)) {
                    messages += q.path("queuedMessages").asDouble();
                    bytes += q.path("queuedBytes").asDouble();
                    connected += q.path("connected").asBoolean() ? 1 : 0;
                }
            }
            values.put("queuedMessages", messages);
            values.put("queuedBytes", bytes);
            values.put("clients", (double) connected);
            return new Part(domain, url, values, null);
        } catch (IOException e) {
            return new Part(domain, url, Map.of(), e.getMessage());
        }
    }

    private Part endpoint(String name, String url) {
        try {
            return new Part(name, url, samples(get(url, name), name), null);
        } catch (IOException e) {
            return new Part(name, url, Map.of(), e.getMessage());
        }
    }

    /** Stops the threads that ask, and the HTTP client's. */
    @Override
    public void close() {
        asking.shutdownNow();
        http.dispatcher().executorService().shutdown();
        http.connectionPool().evictAll();
    }

    /**
     * The samples of a Prometheus text page that belong to {@code endpoint} (labelled {@code endpoint="..."}, or
     * unlabelled), by metric name; the labels of a metric with several samples are summed over.
     */
    static Map<String, Double> samples(String page, String endpoint) {
        Map<String, Double> values = new HashMap<>();
        String mine = "endpoint=\"" + endpoint + "\"";
        for (String line : page.split("\n")) {
            if (line.isEmpty() || line.startsWith("#")) {
                continue;
            }
            int brace = line.indexOf('{');
            int space = line.lastIndexOf(' ');
            if (space <= 0) {
                continue;
            }
            String labels = brace >= 0 ? line.substring(brace, line.lastIndexOf('}') + 1) : "";
            if (!labels.isEmpty() && labels.contains("endpoint=") && !labels.contains(mine)) {
                continue;
            }
            String metric = line.substring(0, brace >= 0 ? brace : space);
            try {
                values.merge(metric, Double.parseDouble(line.substring(space + 1)), Double::sum);
            } catch (NumberFormatException notASample) {
                // a line of another shape: left out
            }
        }
        return values;
    }

    private String get(String url, String audience) throws IOException {
        Request.Builder request = new Request.Builder().url(url);
        if (security.authenticates()) {
            if (!url.startsWith("https://")) {
                // any endpoint may register a metrics URL: a token must not follow one to plaintext
                throw new IOException(url + " is not https: not asked, a token does not cross the network in"
                        + " plaintext");
            }
            request.header("Authorization", security.bearer(audience));
        }
        try (Response response = http.newCall(request.build()).execute()) {
            byte[] body = response.body() == null ? new byte[0] : response.body().byteStream()
                    .readNBytes(MAX_PAGE_BYTES + 1);
            if (!response.isSuccessful()) {
                throw new IOException(url + " answered " + response.code());
            }
            if (body.length > MAX_PAGE_BYTES) {
                throw new IOException(url + " answered more than " + MAX_PAGE_BYTES + " bytes");
            }
            return new String(body, java.nio.charset.StandardCharsets.UTF_8);
        } catch (IllegalArgumentException badUrl) {
            throw new IOException("\"" + url + "\" is not an http or https URL");
        }
    }
}
