package io.gma.examples.agent;

import io.gma.client.Consumer;
import io.gma.client.EndpointBuilder;
import io.gma.security.Security;
import io.gma.client.EndpointException;
import io.gma.client.Incoming;
import io.gma.registry.api.QueryResult;
import io.gma.wire.Name;
import io.gma.wire.Threads;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The collector: a consumer that finds agents with an SQL query, subscribes to each, and keeps the latest
 * value per (agent, metric), with when it was sampled and the route it came by.
 */
public final class Collector implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(Collector.class);
    /** How agents are found: producers with the attribute role=agent, anywhere. */
    public static final String AGENTS = "SELECT p.name, p.domain FROM producers p JOIN attributes a"
            + " ON a.name = p.name WHERE a.key = 'role' AND a.value = 'agent' ORDER BY p.name";

    /** The latest value of one metric of one agent. */
    public record Reading(String agent, String host, String metric, double value, String unit, long sampledAt,
            String route) {
    }

    private final Consumer consumer;
    private final String domain;
    private final Map<String, Reading> latest = new ConcurrentHashMap<>();
    private final Map<String, String> routes = new ConcurrentHashMap<>();
    private final Set<String> subscribed = ConcurrentHashMap.newKeySet();
    private final ScheduledExecutorService timer;

    private Collector(EndpointBuilder<Consumer> b, String domain, Duration discoverEvery) throws EndpointException {
        this.domain = domain;
        this.consumer = b.onMessage(this::take).build();
        this.timer = Executors.newSingleThreadScheduledExecutor(Threads.named("gma-collector-discover"));
        timer.scheduleWithFixedDelay(this::discover, 0, discoverEvery.toMillis(), TimeUnit.MILLISECONDS);
    }

    /** Starts a collector in {@code domain} (through {@code pcServlet}, null for none). */
    public static Collector start(String registry, String domain, String pcServlet, Duration discoverEvery)
            throws EndpointException {
        return start(registry, domain, pcServlet, discoverEvery, Security.insecure());
    }

    /** As {@link #start(String, String, String, Duration)}, with {@code security} on every hop. */
    public static Collector start(String registry, String domain, String pcServlet, Duration discoverEvery,
            Security security) throws EndpointException {
        EndpointBuilder<Consumer> b = Consumer.builder().registry(registry).domain(domain).label("collector")
                .security(security);
        if (pcServlet != null) {
            b.pcServlet(pcServlet);
        }
        return new Collector(b, domain, discoverEvery);
    }

    /** Finds agents not subscribed to yet, and subscribes. */
    private void discover() {
        try {
            Map<String, String> vias = new HashMap<>();
            for (List<Object> row : consumer.query("SELECT domain, via FROM domains").rows()) {
                vias.put((String) row.get(0), (String) row.get(1));
            }
            QueryResult agents = consumer.query(AGENTS);
            for (List<Object> row : agents.rows()) {
                String agent = (String) row.get(0);
                routes.put(agent, route(domain, (String) row.get(1), vias));
                if (subscribed.add(agent)) {
                    consumer.subscribe(agent, null);
                }
            }
        } catch (EndpointException | RuntimeException e) {
            LOG.warn("finding agents failed, will retry: {}", e.getMessage());
        }
    }

    /** How a message from domain {@code from} reaches domain {@code to}: direct, or through which PC servlets. */
    static String route(String to, String from, Map<String, String> vias) {
        if (from.equals(to)) {
            return "direct";
        }
        List<String> hops = new ArrayList<>();
        hops.add(Name.pcServlet(from));
        String fromVia = vias.get(from);
        if (fromVia != null) {
            hops.add(Name.pcServlet(fromVia));
        }
        String toVia = vias.get(to);
        if (toVia != null && !toVia.equals(fromVia)) {
            hops.add(Name.pcServlet(toVia));
        }
        hops.add(Name.pcServlet(to));
        return "via " + String.join(" > ", hops);
    }

    private void take(Incoming m) {
        String route = routes.getOrDefault(m.from(), "?");
        for (String line : new String(m.data(), StandardCharsets.UTF_8).split("\n")) {
            Map<String, String> f = new HashMap<>();
            for (String pair : line.trim().split(" ")) {
                int eq = pair.indexOf('=');
                if (eq > 0) {
                    f.put(pair.substring(0, eq), pair.substring(eq + 1));
                }
            }
            try {
                Reading r = new Reading(m.from(), f.get("host"), f.get("metric"), Double.parseDouble(f.get("value")),
                        f.getOrDefault("unit", ""), Long.parseLong(f.get("at")), route);
                if (r.metric() != null) {
                    latest.put(r.agent() + "|" + r.metric(), r);
                }
            } catch (RuntimeException notASample) {
                LOG.debug("{} sent a line that is not a sample: {}", m.from(), line);
            }
        }
    }

    /** The latest readings, by agent and metric. */
    public List<Reading> readings() {
        List<Reading> all = new ArrayList<>(latest.values());
        all.sort(Comparator.comparing(Reading::agent).thenComparing(Reading::metric));
        return all;
    }

    /** The readings as an aligned table, ages counted from {@code nowMillis}. */
    public static String table(List<Reading> readings, long nowMillis) {
        String[] head = {"agent", "host", "metric", "value", "age", "route"};
        List<String[]> rows = new ArrayList<>();
        rows.add(head);
        for (Reading r : readings) {
            rows.add(new String[] {r.agent(), r.host(), r.metric(),
                String.format(Locale.ROOT, "%.2f %s", r.value(), r.unit()).trim(),
                String.format(Locale.ROOT, "%.1f s", Math.max(0, nowMillis - r.sampledAt()) / 1000.0), r.route()});
        }
        int[] width = new int[head.length];
        for (String[] row : rows) {
            for (int i = 0; i < row.length; i++) {
                width[i] = Math.max(width[i], row[i].length());
            }
        }
        StringBuilder b = new StringBuilder();
        for (String[] row : rows) {
            for (int i = 0; i < row.length - 1; i++) {
                b.append(i == 3 || i == 4 ? pad(row[i], width[i], true) : pad(row[i], width[i], false)).append("  ");
            }
            b.append(row[row.length - 1]).append('\n'); // the last column unpadded: no trailing spaces
        }
        return b.toString();
    }

    private static String pad(String s, int width, boolean right) {
        String fill = " ".repeat(width - s.length());
        return right ? fill + s : s + fill;
    }

    public String name() {
        return consumer.name();
    }

    @Override
    public void close() {
        timer.shutdownNow();
        consumer.close();
    }
}
