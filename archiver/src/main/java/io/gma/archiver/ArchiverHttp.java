package io.gma.archiver;

import io.gma.registry.Https;
import io.gma.security.AuthException;
import io.gma.security.Security;
import io.gma.wire.PrometheusText;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.util.function.Supplier;
import org.eclipse.jetty.ee10.servlet.ServletContextHandler;
import org.eclipse.jetty.ee10.servlet.ServletHolder;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;

/**
 * The archiver's HTTP listener ({@link Archiver.Builder#http}), on Jetty 12, over TLS when its security has it:
 *
 * <pre>
 *   GET /metrics           its counts per table, in the Prometheus text format ({@link ArchiverMetrics})
 *   GET /data/v1/series    a table's column over a period, per key, for the dashboard's charts ({@link TableData})
 *   GET /data/v1/live      the rows that come after, as Server-Sent Events
 * </pre>
 *
 * <p>Who is answered. {@code /metrics}, as a PC servlet's: this machine always; other hosts only when the security
 * authenticates, and then authenticated callers (a token for the archiver's name, or a client certificate). The
 * data: without security, whoever reaches the address (the rows are what any consumer of an open grid reads; the
 * default address is 127.0.0.1); with security, this machine or authenticated callers. Pages of other origins (the
 * registry's dashboard) may read the data: any without security; with security only the registry's own, at the
 * origin of a registry URL the archiver was given.
 *
 * <p>It binds at once and serves 503 until {@link #serve} hands it what to serve: the archiver's endpoints, which
 * register its URL as their attribute {@code charts}, are made after it.
 */
final class ArchiverHttp implements AutoCloseable {
    /**
     * Jetty's threads, as the registry's and a PC servlet's: each live chart holds one ({@link TableData#MAX_LIVE}),
     * the other calls a few, and Jetty's acceptor and selectors (a selector per two cores) take theirs.
     */
    private static final int THREADS = 64;

    private final Server server;
    private final Security security;
    private final String registry;
    private final String url;
    private volatile String name;
    private volatile TableData data;
    private volatile Supplier<String> metrics;

    private ArchiverHttp(Server server, Security security, String registry, String url) {
        this.server = server;
        this.security = security;
        this.registry = registry;
        this.url = url;
    }

    /**
     * Listens at {@code host:port} (port 0: any free one).
     *
     * @param registry the registry URLs the archiver was given: their origins' pages may read the data with
     *     security on
     * @throws ArchiveException naming the address when it cannot listen there
     */
    static ArchiverHttp start(String host, int port, Security security, String registry) throws ArchiveException {
        ServerConnector connector = Https.listener("gma-archiver-http", THREADS, host, port, security);
        Server s = connector.getServer();
        ServletContextHandler context = new ServletContextHandler("/");
        s.setHandler(context);
        try {
            Https.start(s, connector, "--http (Archiver.Builder.http)");
        } catch (Exception e) {
            stopQuietly(s);
            throw new ArchiveException("the archiver cannot serve HTTP: " + e.getMessage(), e);
        }
        ArchiverHttp http = new ArchiverHttp(s, security, registry, Https.url(security, connector));
        context.addServlet(new ServletHolder("archiver", http.new Pages()), "/");
        return http;
    }

    /** Its base URL, such as {@code http://127.0.0.1:41234}. */
    String url() {
        return url;
    }

    /** Starts serving: the archiver's name (the audience of tokens shown to it), its data and its metrics page. */
    void serve(String archiver, TableData tableData, Supplier<String> metricsPage) {
        this.name = archiver;
        this.metrics = metricsPage;
        this.data = tableData;
    }

    /** Stops: live charts end, their queries with them. */
    @Override
    public void close() {
        TableData d = data;
        if (d != null) {
            d.close();
        }
        stopQuietly(server);
    }

    private static void stopQuietly(Server s) {
        try {
            s.stop();
        } catch (Exception ignored) {
            // stopping: nothing to do about a listener that would not stop
        }
    }

    /** Every path: who may call, then the page. */
    private final class Pages extends HttpServlet {
        private static final long serialVersionUID = 1L;

        @Override
        protected void doGet(HttpServletRequest req, HttpServletResponse resp) throws IOException {
            String path = req.getRequestURI().substring(req.getContextPath().length());
            TableData tableData = data;
            if (tableData == null) {
                TableData.plain(resp, 503, "the archiver is starting; ask again in a second");
                return;
            }
            boolean dataPath = path.startsWith(TableData.PATH);
            String refused = refusal(req, path, dataPath);
            if (refused != null) {
                TableData.plain(resp, refused.startsWith("not authenticated") ? 401 : 403, refused);
                return;
            }
            if (path.equals("/metrics")) {
                byte[] page = metrics.get().getBytes(StandardCharsets.UTF_8);
                resp.setContentType(PrometheusText.CONTENT_TYPE);
                resp.setContentLength(page.length);
                resp.getOutputStream().write(page);
            } else if (dataPath) {
                String reader = Https.allowedOrigin(security, registry, req.getHeader("Origin"));
                if (reader != null) {
                    resp.setHeader("Access-Control-Allow-Origin", reader);
                    resp.setHeader("Vary", "Origin");
                }
                tableData.serve(path.substring(TableData.PATH.length()), req, resp);
            } else {
                TableData.plain(resp, 404, "GET " + path + " is not a page of this archiver: it serves /metrics, "
                        + TableData.PATH + "series and " + TableData.PATH + "live");
            }
        }

        /** Why the caller is not answered, or null. */
        private String refusal(HttpServletRequest req, String path, boolean dataPath) throws IOException {
            if (InetAddress.getByName(req.getRemoteAddr()).isLoopbackAddress()) {
                return null;
            }
            if (!security.authenticates()) {
                return dataPath ? null : path + " answers this machine only, not " + req.getRemoteAddr()
                        + ", while no authentication is configured";
            }
            try {
                Https.caller(req, security, name);
                return null;
            } catch (AuthException e) {
                return (e.kind() == AuthException.Kind.UNAUTHORIZED ? "not authenticated: " : "") + e.getMessage();
            }
        }
    }
}
