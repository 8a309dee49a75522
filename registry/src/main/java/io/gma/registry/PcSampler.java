package io.gma.registry;

import com.fasterxml.jackson.databind.JsonNode;
import io.gma.security.HttpClients;
import io.gma.security.Security;
import io.gma.wire.Threads;
import java.io.IOException;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import okhttp3.Call;
import okhttp3.Callback;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.Response;
import okhttp3.ResponseBody;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Samples each PC servlet's {@code GET /gma/v1/status} every interval, for the dashboard's charts of messages per
 * second in and out and queue depths over time (docs/dashboard.md): a page cannot have a day of history on load,
 * so the registry, which knows the PC servlets, keeps it. Each domain with a URL (an outbound-only one has none:
 * nothing reaches it; its via domain's relay queue shows what waits for it) gets a {@link SampleRing} of
 * {@link #CAPACITY} samples: a day at the default 10 s. At most {@link #MAX_DOMAINS} domains are sampled; a
 * domain that is gone keeps its ring until its newest sample is older than the ring's span.
 *
 * <p>A sample is the status page's counters: in, {@code messagesReceived} (from other domains) plus
 * {@code uplinkMessagesIn} (from this domain's endpoints); out, {@code messagesSent} plus
 * {@code uplinkMessagesOut}; and the messages and bytes queued for its endpoints, other domains and the
 * outbound-only domains it relays. A PC servlet that does not answer within 2 s, answers something else or names
 * another domain adds no sample (a gap in the charts) and its sentence is kept for the answer.
 */
final class PcSampler implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(PcSampler.class);
    /** Samples kept per PC servlet: a day at 10 s. */
    static final int CAPACITY = 8_640;
    /** The most PC servlets sampled. */
    static final int MAX_DOMAINS = 64;
    /** The most points of a series in an answer. */
    static final int MAX_POINTS = 720;
    /** The default interval; the shortest and longest. */
    static final Duration DEFAULT_INTERVAL = Duration.ofSeconds(10);
    static final Duration MIN_INTERVAL = Duration.ofSeconds(1);
    static final Duration MAX_INTERVAL = Duration.ofMinutes(1);
    private static final Duration TIMEOUT = Duration.ofSeconds(2);
    /** A status page this long or longer is not read: a PC servlet's is a few KiB (its queues, 64 of each at most). */
    static final int MAX_STATUS_BYTES = 256 * 1024;

    private final EndpointStore store;
    private final Security security;
    private final Duration interval;
    private final int capacity;
    private final OkHttpClient http;
    private final ScheduledExecutorService timer;
    private final Map<String, Sampled> sampled = new ConcurrentHashMap<>();
    private volatile boolean overLimitSaid;

    /** A PC servlet sampled: where, its ring, and why its last sample failed (null: it answered). */
    private static final class Sampled {
        final SampleRing ring;
        volatile String url;
        volatile String error;

        Sampled(int capacity, String url) {
            this.ring = new SampleRing(capacity);
            this.url = url;
        }
    }

    PcSampler(EndpointStore store, Security security, Duration interval) {
        this(store, security, interval, CAPACITY);
    }

    PcSampler(EndpointStore store, Security security, Duration interval, int capacity) {
        this.store = store;
        this.security = security;
        this.interval = interval;
        this.capacity = capacity;
        // no redirects: whoever registers a domain names the URL, which must not send the registry elsewhere
        this.http = HttpClients.configure(new OkHttpClient.Builder(), security).callTimeout(TIMEOUT)
                .retryOnConnectionFailure(false).followRedirects(false).followSslRedirects(false).build();
        this.timer = Executors.newSingleThreadScheduledExecutor(Threads.named("gma-registry-pc-sampler"));
        timer.scheduleWithFixedDelay(this::sample, 0, interval.toMillis(), TimeUnit.MILLISECONDS);
    }

    /** Checks an interval for {@link Registry.Builder#pcSampling}. */
    static Duration checkInterval(Duration interval) {
        if (interval.compareTo(MIN_INTERVAL) < 0 || interval.compareTo(MAX_INTERVAL) > 0) {
            throw new IllegalArgumentException("pcSampling " + interval + " is outside " + MIN_INTERVAL.toSeconds()
                    + ".." + MAX_INTERVAL.toSeconds() + " s");
        }
        return interval;
    }

    private void sample() {
        Map<String, String> domains;
        try {
            domains = store.reachableDomains(MAX_DOMAINS + 1);
        } catch (SQLException | RuntimeException e) {
            LOG.info("the PC servlets are not sampled now: the registry's database failed: {}", e.getMessage());
            return;
        }
        if (domains.size() > MAX_DOMAINS && !overLimitSaid) {
            overLimitSaid = true;
            LOG.warn("over {} domains have a PC servlet: the dashboard charts the first {} by name", MAX_DOMAINS,
                    MAX_DOMAINS);
        }
        long now = System.currentTimeMillis();
        long span = interval.toMillis() * capacity;
        sampled.entrySet().removeIf(e -> !domains.containsKey(e.getKey()) && e.getValue().ring.newest() < now - span);
        int n = 0;
        for (Map.Entry<String, String> d : domains.entrySet()) {
            if (n++ == MAX_DOMAINS) {
                break;
            }
            if (sampled.size() >= 2 * MAX_DOMAINS && !sampled.containsKey(d.getKey())) {
                continue; // domains that went away fill the map until their rings run out
            }
            Sampled s = sampled.computeIfAbsent(d.getKey(), k -> new Sampled(capacity, d.getValue()));
            s.url = d.getValue();
            request(d.getKey(), s);
        }
    }

    private void request(String domain, Sampled s) {
        Request.Builder r = new Request.Builder().url(s.url + "/gma/v1/status");
        if (security.authenticates() && s.url.regionMatches(true, 0, "https://", 0, 8)) {
            String bearer = security.bearer(domain); // this machine needs none; another host asks for one
            if (bearer != null) {
                r.header("Authorization", bearer);
            }
        }
        Call call;
        try {
            call = http.newCall(r.build());
        } catch (IllegalArgumentException badUrl) {
            s.error = "its URL " + s.url + " cannot be called: " + badUrl.getMessage();
            return;
        }
        call.enqueue(new Callback() {
            @Override
            public void onFailure(Call c, IOException e) {
                s.error = "no answer from " + s.url + ": " + e.getMessage();
            }

            @Override
            public void onResponse(Call c, Response response) {
                try (ResponseBody body = response.body()) {
                    if (!response.isSuccessful()) {
                        s.error = s.url + "/gma/v1/status answered " + response.code();
                        return;
                    }
                    byte[] page = body.byteStream().readNBytes(MAX_STATUS_BYTES + 1);
                    if (page.length > MAX_STATUS_BYTES) {
                        s.error = s.url + "/gma/v1/status answered more than " + MAX_STATUS_BYTES + " bytes, the most"
                                + " a status page may be; not read";
                        return;
                    }
                    s.error = record(domain, s.ring, Json.MAPPER.readTree(page));
                } catch (IOException | RuntimeException e) {
                    s.error = s.url + "/gma/v1/status answered what is not its status: " + e.getMessage();
                }
            }
        });
    }

    /**
     * Adds the sample a status page gives.
     *
     * @return null, or why it is not a sample of {@code domain}'s PC servlet
     */
    static String record(String domain, SampleRing ring, JsonNode status) {
        JsonNode c = status.path("counters");
        if (!domain.equals(status.path("domain").asText()) || !c.isObject()) {
            return "the status answered names domain \"" + status.path("domain").asText() + "\", not " + domain;
        }
        long messages = 0;
        long bytes = 0;
        for (String queues : List.of("clients", "outbound", "relayed")) {
            for (JsonNode q : status.path(queues)) {
                messages += q.path("queuedMessages").asLong();
                bytes += q.path("queuedBytes").asLong();
            }
        }
        ring.add(System.currentTimeMillis(), c.path("messagesReceived").asLong() + c.path("uplinkMessagesIn").asLong(),
                c.path("messagesSent").asLong() + c.path("uplinkMessagesOut").asLong(), messages, bytes);
        return null;
    }

    /**
     * What the dashboard charts for {@code range}: per PC servlet sampled, by domain, its points (times in ms since
     * the epoch; rates per second, null where none; depths), at most {@link #MAX_POINTS} each.
     *
     * @throws ApiException 400 naming a range that is not one of {@link DashboardServlet#RANGES}
     */
    Map<String, Object> answer(String range) {
        Duration period;
        try {
            period = DashboardServlet.range(range);
        } catch (IllegalArgumentException e) {
            throw ApiException.badRequest(e.getMessage());
        }
        long now = System.currentTimeMillis();
        List<Map<String, Object>> pcs = new ArrayList<>();
        for (String domain : new TreeSet<>(sampled.keySet())) {
            Sampled s = sampled.get(domain);
            if (s == null) {
                continue;
            }
            SampleRing.Points p = s.ring.read(now - period.toMillis(), MAX_POINTS);
            Map<String, Object> pc = new LinkedHashMap<>();
            pc.put("domain", domain);
            pc.put("url", s.url);
            pc.put("error", s.error);
            pc.put("at", p.at());
            pc.put("in", p.in());
            pc.put("out", p.out());
            pc.put("queuedMessages", p.queuedMessages());
            pc.put("queuedBytes", p.queuedBytes());
            pcs.add(pc);
        }
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("range", range == null ? "5m" : range);
        out.put("intervalMillis", interval.toMillis());
        out.put("keptSeconds", interval.toSeconds() * capacity);
        out.put("pcs", pcs);
        return out;
    }

    @Override
    public void close() {
        timer.shutdownNow();
        http.dispatcher().executorService().shutdownNow();
        http.connectionPool().evictAll();
    }
}
