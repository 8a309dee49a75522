package io.gma.examples.agent;

import io.gma.client.Consumer;
import io.gma.client.ContinuousQuery;
import io.gma.client.EndpointBuilder;
import io.gma.client.EndpointException;
import io.gma.client.TableRow;
import io.gma.security.Security;
import io.gma.tables.Row;
import io.gma.wire.Name;
import io.gma.wire.Threads;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The collector: a consumer with a continuous query over each of the agents' tables ({@link #QUERIES}), which
 * keeps the latest row per agent and key (the CPU total, each file system, each interface), with when it was
 * inserted and the route it came by. The mediator in its consumer finds every agent that publishes a table, in
 * any domain, and follows those that come and go; the collector does not know the agents by name. A table no
 * agent declared yet is asked for again every {@code retryEvery}.
 */
public final class Collector implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(Collector.class);

    /** One of the collector's queries: what it selects, and how a row of it is shown. */
    private record View(String sql, Function<Row, String> metric, Function<Row, String> values) {
    }

    /** What the collector shows: the whole machine's CPU, memory, every file system and every interface. */
    private static final List<View> VIEWS = List.of(
            new View("SELECT host, busy, usr, sys, load1 FROM host_cpu WHERE cpu = -1", r -> "cpu",
                    r -> "busy " + pct(r, 1) + " (usr " + pct(r, 2) + ", sys " + pct(r, 3) + ")"
                    + (r.isNull(4) ? "" : ", load " + num(r, 4))),
            new View("SELECT host, used_pct, total, swap_used, swap_total FROM host_memory", r -> "memory",
                    r -> "used " + pct(r, 1) + " of " + bytes(r, 2) + (r.isNull(4) || r.getLong(4) == 0 ? ""
                    : ", swap " + bytes(r, 3) + " of " + bytes(r, 4))),
            new View("SELECT host, mount, used_pct, total, disk, read_bytes_s, write_bytes_s FROM host_disk",
                    r -> "disk " + shortened(r.getString(1)), r -> "used " + pct(r, 2) + " of " + bytes(r, 3)
                    + (r.isNull(4) ? "" : ", " + r.getString(4).replaceFirst("^/dev/", "") + " read " + bytes(r, 5)
                    + "/s, write " + bytes(r, 6) + "/s")),
            new View("SELECT host, iface, rx_bytes_s, tx_bytes_s FROM host_net", r -> "net " + r.getString(1),
                    r -> "in " + bytes(r, 2) + "/s, out " + bytes(r, 3) + "/s"));

    /** The longest mount point shown whole; a longer one keeps its end, where the names differ. */
    static final int MOUNT_SHOWN = 24;

    /** The continuous queries the collector runs over the agents' tables. */
    public static final List<String> QUERIES = VIEWS.stream().map(View::sql).toList();

    /** The latest row of one key of one agent, as shown. */
    public record Reading(String agent, String host, String metric, String values, long insertMicros,
            String route) {
    }

    /** A reading before its route is known: the route is worked out when shown, from the domains then. */
    private record Latest(String agent, String host, String metric, String values, long insertMicros) {
    }

    private final Consumer consumer;
    private final String domain;
    private final Map<String, Latest> latest = new ConcurrentHashMap<>();
    private final Map<String, ContinuousQuery> running = new ConcurrentHashMap<>();
    private volatile Map<String, String> vias = Map.of();
    private final ScheduledExecutorService timer;

    private Collector(EndpointBuilder<Consumer> b, String domain, Duration retryEvery) throws EndpointException {
        this.domain = domain;
        this.consumer = b.build();
        this.timer = Executors.newSingleThreadScheduledExecutor(Threads.named("gma-collector"));
        timer.scheduleWithFixedDelay(this::round, 0, retryEvery.toMillis(), TimeUnit.MILLISECONDS);
    }

    /** Starts a collector in {@code domain} (through {@code pcServlet}, null for none). */
    public static Collector start(String registry, String domain, String pcServlet, Duration retryEvery)
            throws EndpointException {
        return start(registry, domain, pcServlet, retryEvery, Security.insecure());
    }

    /**
     * As {@link #start(String, String, String, Duration)}, with {@code security} on every hop: its identity needs
     * to query {@code tables}, {@code table_columns}, {@code publishers} and {@code domains}, and to send to the
     * agents.
     */
    public static Collector start(String registry, String domain, String pcServlet, Duration retryEvery,
            Security security) throws EndpointException {
        EndpointBuilder<Consumer> b = Consumer.builder().registry(registry).domain(domain).label("collector")
                .security(security);
        if (pcServlet != null) {
            b.pcServlet(pcServlet);
        }
        return new Collector(b, domain, retryEvery);
    }

    /** Learns the domains' relays (for the routes), and starts the queries not running yet. */
    private void round() {
        try {
            Map<String, String> now = new HashMap<>();
            for (List<Object> row : consumer.query("SELECT domain, via FROM domains").rows()) {
                now.put((String) row.get(0), (String) row.get(1));
            }
            vias = now;
        } catch (EndpointException | RuntimeException e) {
            LOG.warn("reading the domains failed, will retry: {}", e.getMessage());
        }
        for (View view : VIEWS) {
            if (running.containsKey(view.sql())) {
                continue;
            }
            try {
                running.put(view.sql(), consumer.continuous(view.sql(), row -> take(view, row)));
                // rows inserted before the query started: the latest of each key, kept unless one came since
                for (TableRow row : consumer.latest(view.sql())) {
                    take(view, row);
                }
            } catch (EndpointException | RuntimeException e) {
                // NO_ROUTE until an agent declared the table: asked again at the next round
                LOG.debug("{} is not running yet, will retry: {}", view.sql(), e.getMessage());
            }
        }
    }

    /** A row of a view, on a link's event loop or from a latest query: kept unless a newer one is there. */
    private void take(View view, TableRow row) {
        Latest r = new Latest(row.producer(), row.row().getString(0), view.metric().apply(row.row()),
                view.values().apply(row.row()), row.insertMicros());
        latest.merge(r.agent() + "|" + r.metric(), r, (old, now) -> now.insertMicros() >= old.insertMicros() ? now
                : old);
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

    /** The latest readings, by agent and metric, each with the route from its agent's domain to this one's. */
    public List<Reading> readings() {
        Map<String, String> relays = vias;
        List<Reading> all = new ArrayList<>();
        for (Latest r : latest.values()) {
            all.add(new Reading(r.agent(), r.host(), r.metric(), r.values(), r.insertMicros(),
                    route(domain, Name.domainOf(r.agent()), relays)));
        }
        all.sort(Comparator.comparing(Reading::agent).thenComparing(Reading::metric));
        return all;
    }

    /** The readings as an aligned table, ages counted from {@code nowMillis}. */
    public static String table(List<Reading> readings, long nowMillis) {
        String[] head = {"agent", "host", "metric", "values", "age", "route"};
        List<String[]> rows = new ArrayList<>();
        rows.add(head);
        for (Reading r : readings) {
            rows.add(new String[] {r.agent(), r.host(), r.metric(), r.values(), String.format(Locale.ROOT, "%.1f s",
                Math.max(0, nowMillis * 1000 - r.insertMicros()) / 1e6), r.route()});
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
                b.append(i == 4 ? pad(row[i], width[i], true) : pad(row[i], width[i], false)).append("  ");
            }
            b.append(row[row.length - 1]).append('\n'); // the last column unpadded: no trailing spaces
        }
        return b.toString();
    }

    private static String pad(String s, int width, boolean right) {
        String fill = " ".repeat(width - s.length());
        return right ? fill + s : s + fill;
    }

    /** A percentage with one decimal; {@code -} for NULL (a rate in the agent's first round). */
    static String pct(Row r, int i) {
        return r.isNull(i) ? "-" : String.format(Locale.ROOT, "%.1f%%", r.getDouble(i));
    }

    /** A number with two decimals, or {@code -}. */
    static String num(Row r, int i) {
        return r.isNull(i) ? "-" : String.format(Locale.ROOT, "%.2f", r.getDouble(i));
    }

    /** A mount point of at most {@link #MOUNT_SHOWN} characters: a longer one is {@code ...} and its end. */
    static String shortened(String mount) {
        return mount.length() <= MOUNT_SHOWN ? mount : "..." + mount.substring(mount.length() - MOUNT_SHOWN + 3);
    }

    /** A count of bytes (INTEGER) or bytes a second (DOUBLE) in B, KiB, MiB, GiB or TiB; or {@code -}. */
    static String bytes(Row r, int i) {
        if (r.isNull(i)) {
            return "-";
        }
        double v = r.get(i) instanceof Long l ? l : r.getDouble(i);
        String[] units = {"B", "KiB", "MiB", "GiB", "TiB"};
        int u = 0;
        while (Math.abs(v) >= 1024 && u < units.length - 1) {
            v /= 1024;
            u++;
        }
        return u == 0 ? String.format(Locale.ROOT, "%.0f B", v) : String.format(Locale.ROOT, "%.1f %s", v, units[u]);
    }

    public String name() {
        return consumer.name();
    }

    @Override
    public void close() {
        timer.shutdownNow();
        consumer.close(); // its queries end with it: its BYE tells each agent
    }
}
