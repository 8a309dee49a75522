package io.gma.client;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import com.sun.net.httpserver.HttpsConfigurator;
import com.sun.net.httpserver.HttpsExchange;
import com.sun.net.httpserver.HttpsParameters;
import com.sun.net.httpserver.HttpsServer;
import io.gma.security.AuthException;
import io.gma.security.Security;
import io.gma.security.Tls;
import io.gma.wire.ErrorCode;
import io.gma.wire.PrometheusText;
import io.gma.wire.Threads;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.function.Supplier;

/**
 * An endpoint's {@code GET /metrics} ({@link EndpointBuilder#metrics}): its {@link EndpointStats} in the Prometheus
 * text format (0.0.4), each field a {@code gma_endpoint_*} metric labelled {@code endpoint="<name>"}, served by
 * the JDK's HTTP server on one thread of its own, over TLS when the endpoint's security has it. As a PC servlet's
 * diagnostics: callers on this machine always; callers from other hosts only when the endpoint's security
 * authenticates, and then with a token made for the endpoint's name or a client certificate.
 */
final class MetricsServer implements AutoCloseable {
    static final String PATH = "/metrics";
    /** How {@code metrics} is named in a refusal: the builder's option and the commands'. */
    static final String OPTION = "--metrics-port (EndpointBuilder.metrics)";

    private final HttpServer server;
    private final ExecutorService thread;
    private final Security security;
    private final String url;
    private volatile String name;
    private volatile Supplier<EndpointStats> stats;

    private MetricsServer(HttpServer server, ExecutorService thread, Security security, String url) {
        this.server = server;
        this.thread = thread;
        this.security = security;
        this.url = url;
    }

    /**
     * Binds the address; nothing is served until {@link #serve}.
     *
     * @param advertised the host the URL names when the address is a wildcard (the endpoint's own host)
     * @throws EndpointException INTERNAL naming the address and the option when it cannot be bound
     */
    static MetricsServer bind(InetSocketAddress address, String advertised, Security security, String label)
            throws EndpointException {
        InetSocketAddress at = new InetSocketAddress(address.getHostString(), address.getPort());
        HttpServer server;
        try {
            Tls tls = security.tls();
            if (tls == null) {
                server = HttpServer.create(at, 0);
            } else {
                HttpsServer https = HttpsServer.create(at, 0);
                https.setHttpsConfigurator(new HttpsConfigurator(tls.context()) {
                    @Override
                    public void configure(HttpsParameters params) {
                        // the protocols, cipher suites and client certificates of the endpoint's links
                        params.setSSLParameters(tls.serverEngine().getSSLParameters());
                    }
                });
                server = https;
            }
        } catch (IOException e) {
            throw new EndpointException(ErrorCode.INTERNAL, "cannot listen on " + address.getHostString() + ":"
                    + address.getPort() + " for metrics (" + e.getMessage() + "): another process has it; stop that"
                    + " one, or give " + OPTION + " another port (0 takes any free one)", e);
        }
        ExecutorService thread = Executors.newSingleThreadExecutor(Threads.named("gma-" + label + "-metrics"));
        server.setExecutor(thread);
        String host = at.getAddress() != null && at.getAddress().isAnyLocalAddress() ? advertised
                : address.getHostString();
        String url = (security.tls() != null ? "https" : "http") + "://" + (host.contains(":") ? "[" + host + "]"
                : host) + ":" + server.getAddress().getPort() + PATH;
        return new MetricsServer(server, thread, security, url);
    }

    /** Where the page is: {@code http://host:port/metrics}, or https. */
    String url() {
        return url;
    }

    /** Starts serving the stats of the endpoint {@code name}, as {@code stats} gives them at each call. */
    void serve(String name, Supplier<EndpointStats> stats) {
        this.name = name;
        this.stats = stats;
        server.createContext(PATH, this::handle);
        // the JDK's dispatcher thread takes the daemon status of the thread that starts it: a daemon, as every
        // thread of an endpoint is, so that an endpoint never closed does not keep its JVM alive
        Thread starter = Threads.start("gma-" + name + "-metrics-start", server::start);
        try {
            starter.join();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private void handle(HttpExchange exchange) throws IOException {
        try (exchange) {
            if (!exchange.getRequestMethod().equals("GET") && !exchange.getRequestMethod().equals("HEAD")) {
                exchange.getResponseHeaders().set("Allow", "GET, HEAD");
                answer(exchange, 405, "text/plain; charset=utf-8", exchange.getRequestMethod() + " is not allowed"
                        + " here; use GET");
                return;
            }
            if (!exchange.getRequestURI().getPath().equals(PATH)) {
                answer(exchange, 404, "text/plain; charset=utf-8", "no such page: " + exchange.getRequestURI()
                        .getPath() + "; the metrics are at " + PATH);
                return;
            }
            String certificate = exchange instanceof HttpsExchange s ? Tls.identity(s.getSSLSession()) : null;
            try {
                check(exchange.getRemoteAddress().getAddress(), exchange.getRequestHeaders().getFirst(
                        "Authorization"), certificate, security, name);
            } catch (AuthException e) {
                if (e.kind() == AuthException.Kind.UNAUTHORIZED) {
                    exchange.getResponseHeaders().set("WWW-Authenticate", "Bearer");
                }
                answer(exchange, e.kind().status(), "text/plain; charset=utf-8", e.getMessage());
                return;
            }
            answer(exchange, 200, PrometheusText.CONTENT_TYPE, text(name, stats.get()));
        }
    }

    private static void answer(HttpExchange exchange, int status, String type, String body) throws IOException {
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        exchange.getResponseHeaders().set("Content-Type", type);
        exchange.getResponseHeaders().set("Cache-Control", "no-store");
        boolean head = exchange.getRequestMethod().equals("HEAD");
        exchange.sendResponseHeaders(status, head ? -1 : bytes.length);
        if (!head) {
            try (OutputStream out = exchange.getResponseBody()) {
                out.write(bytes);
            }
        }
    }

    /**
     * Whether {@code caller} may read the page: this machine always; another host only when {@code security}
     * authenticates, and then with a token made for {@code audience} (the endpoint's name) or a client
     * certificate.
     *
     * @throws AuthException FORBIDDEN for another host while nothing is authenticated, UNAUTHORIZED for missing
     *     or refused credentials
     */
    static void check(InetAddress caller, String authorization, String certificate, Security security,
            String audience) throws AuthException {
        if (caller.isLoopbackAddress()) {
            return;
        }
        if (!security.authenticates()) {
            throw new AuthException(AuthException.Kind.FORBIDDEN, PATH + " answers this machine only, not "
                    + caller.getHostAddress() + ", while no authentication is configured");
        }
        security.authenticate(authorization, certificate, audience);
    }

    /** The page: every field of {@code s}, labelled with the endpoint's name. */
    static String text(String name, EndpointStats s) {
        String endpoint = PrometheusText.label("endpoint", name);
        StringBuilder out = new StringBuilder(4096);
        counter(out, "messages_out", "Messages written to peers, resends included", endpoint, s.messagesOut());
        counter(out, "bytes_out", "Bytes written to peers", endpoint, s.bytesOut());
        counter(out, "messages_in", "Messages read from peers", endpoint, s.messagesIn());
        counter(out, "bytes_in", "Bytes read from peers", endpoint, s.bytesIn());
        gauge(out, "queued_messages", "Messages in all send queues now, unwritten plus unacknowledged", endpoint,
                s.queuedMessages());
        gauge(out, "queued_bytes", "Bytes in all send queues now", endpoint, s.queuedBytes());
        counter(out, "waits", "Sends that waited for room (BLOCK): in a send queue, among the receipts awaited, or"
                + " in the outbox", endpoint, s.waits());
        counter(out, "drops", "Data messages dropped (DROP_OLDEST)", endpoint, s.drops());
        counter(out, "rejected", "Sends that failed with QUEUE_FULL", endpoint, s.rejected());
        counter(out, "reconnects", "Links reopened after a failure", endpoint, s.reconnects());
        counter(out, "duplicates", "Messages dropped as already delivered, and REPLYs to nothing awaited", endpoint,
                s.duplicates());
        String refused = "gma_endpoint_connections_refused_total";
        PrometheusText.metric(out, refused, "counter", "Accepted connections refused before they authenticated:"
                + " over_cap (closed at once, too many pending in the process or from the address), unauthorized"
                + " (credentials, rules, TLS), too_large (over 4096 bytes of data in the handshake), malformed,"
                + " timeout (handshake not over within 5 s)");
        Map<String, Long> byReason = new LinkedHashMap<>();
        byReason.put("over_cap", s.connectionsOverCap());
        byReason.put("unauthorized", s.handshakesUnauthorized());
        byReason.put("too_large", s.handshakesTooLarge());
        byReason.put("malformed", s.handshakesMalformed());
        byReason.put("timeout", s.handshakesTimedOut());
        byReason.forEach((reason, n) -> PrometheusText.sample(out, refused, endpoint + ","
                + PrometheusText.label("reason", reason), n));
        counter(out, "links_over_limit", "Links refused because maxLinks were open: a peer's, answered ERROR"
                + " QUEUE_FULL at HELLO, or one this endpoint opened, closed as it opened", endpoint,
                s.linksOverLimit());
        counter(out, "refused_answers", "REPLYs, ERRORs and receipts refused because they came from another than"
                + " the endpoint the request went to", endpoint, s.refusedAnswers());
        gauge(out, "receipts_awaited", "Messages whose receipt is awaited now", endpoint, s.receiptsAwaited());
        counter(out, "receipts_timed_out", "Messages whose receipt did not come within the receipts' timeout",
                endpoint, s.receiptsTimedOut());
        counter(out, "receipts_given_up", "Messages whose receipt was no longer awaited under DROP_OLDEST, to make"
                + " room for newer ones", endpoint, s.receiptsGivenUp());
        gauge(out, "outbox_messages", "Messages in the outbox now, not yet acknowledged by the first hop", endpoint,
                s.outboxMessages());
        gauge(out, "outbox_bytes", "The outbox's files on disk now, in bytes", endpoint, s.outboxBytes());
        counter(out, "outbox_recovered", "Messages the outbox held from an earlier run at start, queued again",
                endpoint, s.outboxRecovered());
        counter(out, "outbox_damaged", "Damaged runs of bytes and records that were not messages, skipped when the"
                + " outbox was read at start", endpoint, s.outboxDamaged());
        return out.toString();
    }

    private static void counter(StringBuilder out, String name, String help, String labels, long value) {
        PrometheusText.counter(out, "gma_endpoint_" + name + "_total", help, labels, value);
    }

    private static void gauge(StringBuilder out, String name, String help, String labels, long value) {
        PrometheusText.gauge(out, "gma_endpoint_" + name, help, labels, value);
    }

    /** Stops serving at once; a scrape under way is cut. */
    @Override
    public void close() {
        server.stop(0);
        thread.shutdownNow();
    }
}
