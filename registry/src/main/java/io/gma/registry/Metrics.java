package io.gma.registry;

import io.gma.wire.PrometheusText;
import java.sql.SQLException;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The registry's counters and its histogram of query times, added to from any thread, and their page in the
 * Prometheus text format ({@link MetricsServlet}). The calls are counted by how they were answered: each
 * {@link Event} once it succeeded, a refusal (4xx) or a failure (5xx) by its error code; leases that ran out
 * as the sweeper (or a registration of the same name) removes them. Counts are this registry's own since it
 * started: registries that share one database each count what they answered and what they swept.
 */
final class Metrics {
    private static final Logger LOG = LoggerFactory.getLogger(Metrics.class);
    /** Upper bounds of the query-time buckets, in seconds (the statement timeout is 1 s to 1 h, default 5 s). */
    static final double[] QUERY_BUCKETS = {0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1,
            0.25, 0.5, 1, 2.5, 5, 10};

    /** What a registration is of: the {@code kind} label. */
    enum Kind {
        ENDPOINT, DOMAIN;

        String label() {
            return PrometheusText.label("kind", name().toLowerCase(Locale.ROOT));
        }
    }

    /** What is counted by kind: a call that succeeded, or a lease that ran out. */
    enum Event {
        REGISTERED("gma_registry_registrations_total", "New registrations (201), by kind; a domain registered"
                + " again by its holder is a renewal"),
        RENEWED("gma_registry_renewals_total", "Leases renewed: PUT .../lease of an endpoint, POST /domains of a"
                + " live domain by its holder"),
        REMOVED("gma_registry_removals_total", "Registrations removed by DELETE (204)"),
        LOOKED_UP("gma_registry_lookups_total", "Look-ups answered with the endpoint or domain (200); a name not"
                + " found is a refusal NOT_FOUND"),
        EXPIRED("gma_registry_lease_expiries_total", "Registrations whose lease ran out, removed by this registry's"
                + " sweeper or replaced by a new registration of the name");

        private final String metric;
        private final String help;

        Event(String metric, String help) {
            this.metric = metric;
            this.help = help;
        }
    }

    private static final int KINDS = Kind.values().length;

    /** One count an event and kind: {@link #adder}. */
    private final LongAdder[] events = new LongAdder[Event.values().length * KINDS];
    private final LongAdder queries = new LongAdder();
    private final PrometheusText.Histogram querySeconds = new PrometheusText.Histogram(QUERY_BUCKETS);
    /** By error code, a fixed set of the registry's own (ApiException's codes, UNAUTHORIZED, FORBIDDEN). */
    private final Map<String, LongAdder> refused = new ConcurrentHashMap<>();
    private final Map<String, LongAdder> failed = new ConcurrentHashMap<>();

    Metrics() {
        for (int i = 0; i < events.length; i++) {
            events[i] = new LongAdder();
        }
    }

    void count(Event event, Kind kind) {
        count(event, kind, 1);
    }

    void count(Event event, Kind kind, long n) {
        adder(event, kind).add(n);
    }

    private LongAdder adder(Event event, Kind kind) {
        return events[event.ordinal() * KINDS + kind.ordinal()];
    }

    /** A query the database ran, whatever came of it, and how long it took there. */
    void queryTook(long nanos) {
        querySeconds.record(nanos);
    }

    /** A query answered with its rows (200). */
    void queryAnswered() {
        queries.increment();
    }

    /** An answer of 4xx ({@code status < 500}) or 5xx, by its error code. */
    void answeredError(int status, String code) {
        (status < 500 ? refused : failed).computeIfAbsent(code, c -> new LongAdder()).increment();
    }

    /** The page: every metric, the live registrations read from {@code store} now (left out if that fails). */
    String text(EndpointStore store) {
        StringBuilder out = new StringBuilder(4096);
        for (Event e : Event.values()) {
            PrometheusText.metric(out, e.metric, "counter", e.help);
            for (Kind k : Kind.values()) {
                PrometheusText.sample(out, e.metric, k.label(), adder(e, k).sum());
            }
        }
        PrometheusText.counter(out, "gma_registry_queries_total", "Queries answered with rows (200)", null,
                queries.sum());
        querySeconds.write(out, "gma_registry_query_seconds", "Time of each query the database ran, whatever came"
                + " of it (rows, QUERY_FAILED, TIMEOUT, TOO_LARGE), from the statement's start to its last row read");
        byCode(out, "gma_registry_refused_total", "Calls refused (4xx), by error code: UNAUTHORIZED,"
                + " FORBIDDEN, BAD_REQUEST (an SQL statement the guard refused among them), NOT_FOUND, ...", refused);
        byCode(out, "gma_registry_failed_total", "Calls that failed (5xx), by error code: INTERNAL (the"
                + " database failed), UNAVAILABLE (busy)", failed);
        try {
            long endpoints = store.liveEndpoints();
            long domains = store.liveDomains();
            PrometheusText.metric(out, "gma_registry_live_registrations", "gauge", "Registrations whose lease has"
                    + " not run out, in the database (every registry's that shares it)");
            PrometheusText.sample(out, "gma_registry_live_registrations", Kind.ENDPOINT.label(), endpoints);
            PrometheusText.sample(out, "gma_registry_live_registrations", Kind.DOMAIN.label(), domains);
        } catch (SQLException e) {
            LOG.debug("metrics without live registrations: the database did not answer: {}", e.toString());
        }
        return out.toString();
    }

    private static void byCode(StringBuilder out, String name, String help, Map<String, LongAdder> byCode) {
        PrometheusText.metric(out, name, "counter", help);
        new TreeMap<>(byCode).forEach((code, n) -> PrometheusText.sample(out, name, PrometheusText.label("code",
                code), n.sum()));
    }
}
