package io.gma.registry;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.hawkular.agent.prometheus.text.TextPrometheusMetricsProcessor;
import org.hawkular.agent.prometheus.types.Counter;
import org.hawkular.agent.prometheus.types.Gauge;
import org.hawkular.agent.prometheus.types.Histogram;
import org.hawkular.agent.prometheus.types.Metric;
import org.hawkular.agent.prometheus.types.MetricFamily;
import org.hawkular.agent.prometheus.types.Summary;
import org.hawkular.agent.prometheus.walkers.CollectorPrometheusMetricsWalker;

/**
 * A {@code GET /metrics} page as Prometheus reads it: fetched, its content type checked, and parsed with a
 * Prometheus text parser (Hawkular's), never a regular expression. The parser drops a line it cannot read
 * without a word, so every sample line of the page must come out of it as a sample, or the page is refused.
 * For the tests of the registry's, the endpoints' and the commands' metrics (a test-jar).
 */
public final class Scrape {
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    private final String text;
    private final Map<String, MetricFamily> families = new LinkedHashMap<>();

    private Scrape(String text) {
        this.text = text;
        CollectorPrometheusMetricsWalker walker = new CollectorPrometheusMetricsWalker();
        new TextPrometheusMetricsProcessor(new ByteArrayInputStream(text.getBytes(StandardCharsets.UTF_8)), walker)
                .walk();
        int parsed = 0;
        for (MetricFamily f : walker.getAllMetricFamilies()) {
            if (families.put(f.getName(), f) != null) {
                throw new AssertionError("metric " + f.getName() + " appears twice in\n" + text);
            }
            for (Metric m : f.getMetrics()) {
                parsed += m instanceof Histogram h ? h.getBuckets().size() + 2
                        : m instanceof Summary s ? s.getQuantiles().size() + 2 : 1;
            }
        }
        long lines = text.lines().filter(l -> !l.isBlank() && !l.startsWith("#")).count();
        if (lines != parsed) {
            throw new AssertionError(lines + " sample lines, but the parser read " + parsed + " samples in\n" + text);
        }
    }

    /** Reads {@code text} as a page. */
    public static Scrape parse(String text) {
        return new Scrape(text);
    }

    /** GETs {@code url}, which must answer 200 in the text format 0.0.4, and reads the page. */
    public static Scrape get(String url) throws IOException, InterruptedException {
        return get(HTTP, url);
    }

    /** As {@link #get(String)}, with {@code http} (one that trusts a test CA, say). */
    public static Scrape get(HttpClient http, String url) throws IOException, InterruptedException {
        HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(10))
                .build(), HttpResponse.BodyHandlers.ofString());
        if (r.statusCode() != 200) {
            throw new AssertionError("GET " + url + " answered " + r.statusCode() + ": " + r.body());
        }
        String type = r.headers().firstValue("Content-Type").orElse("");
        if (!type.replace(" ", "").equalsIgnoreCase("text/plain;version=0.0.4;charset=utf-8")) {
            throw new AssertionError("GET " + url + " answered content type \"" + type + "\"");
        }
        return new Scrape(r.body());
    }

    /** The page as served. */
    public String text() {
        return text;
    }

    /** The metric family {@code name}. */
    public MetricFamily family(String name) {
        MetricFamily f = families.get(name);
        if (f == null) {
            throw new AssertionError("no metric " + name + " in\n" + text);
        }
        return f;
    }

    /** Every family on the page, by name, in order. */
    public Map<String, MetricFamily> families() {
        return families;
    }

    /**
     * The value of the counter or gauge {@code name} whose labels are exactly {@code labels} (key, value, key,
     * value...).
     */
    public double value(String name, String... labels) {
        Metric m = metric(name, labels);
        if (m instanceof Counter c) {
            return c.getValue();
        }
        if (m instanceof Gauge g) {
            return g.getValue();
        }
        throw new AssertionError(name + " is a " + family(name).getType() + ", not a counter or gauge");
    }

    /** The histogram {@code name} whose labels are exactly {@code labels}. */
    public Histogram histogram(String name, String... labels) {
        if (metric(name, labels) instanceof Histogram h) {
            return h;
        }
        throw new AssertionError(name + " is a " + family(name).getType() + ", not a histogram");
    }

    private Metric metric(String name, String... labels) {
        Map<String, String> wanted = new LinkedHashMap<>();
        for (int i = 0; i + 1 < labels.length; i += 2) {
            wanted.put(labels[i], labels[i + 1]);
        }
        List<Metric> metrics = family(name).getMetrics();
        return metrics.stream().filter(m -> m.getLabels().equals(wanted)).findFirst().orElseThrow(
                () -> new AssertionError("no " + name + wanted + " in\n" + text));
    }
}
