package io.gma.pcservlet;

import io.gma.registry.Https;
import io.gma.security.AuthException;
import io.gma.security.Rules;
import io.gma.security.HttpProxy;
import io.gma.security.Security;
import io.gma.wire.ErrorCode;
import io.gma.wire.PrometheusText;
import jakarta.servlet.AsyncContext;
import jakarta.servlet.AsyncEvent;
import jakarta.servlet.AsyncListener;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The PC servlet's HTTP side, a plain Jakarta Servlet 6:
 *
 * <pre>
 *   POST /gma/v1/messages                      a batch from another domain (protocol.md section 6)
 *   GET  /gma/v1/messages?domain=&amp;wait=&amp;ack=    a long poll from an outbound-only domain we relay for
 *   GET  /gma/v1/status                        JSON: domain, clients, queues, counters
 *   GET  /metrics                              Prometheus text format
 *   POST /gma/v1/registry/query                an SQL query, relayed to the registry (for the dashboard; off with
 *                                              security on)
 *   GET  /dashboard/                           the dashboard (embedded PcServer)
 * </pre>
 *
 * Embedded, {@link PcServer} hands it its engine. Deployed in a container (mapped to {@code /*}), it builds
 * one from its init parameters: {@code domain}, {@code registry}, {@code url} (how other domains reach it;
 * absent with {@code via}), {@code via}, {@code uplinkHost}, {@code uplinkPort}, {@code compression} ({@code auto}
 * or {@code off}), and those of the spool and the proxy.
 */
public final class TunnelServlet extends HttpServlet {
    private static final long serialVersionUID = 1L;
    private static final Logger LOG = LoggerFactory.getLogger(TunnelServlet.class);
    /** Where the dashboard served here posts its registry queries: relayed to the registry, same origin. */
    static final String REGISTRY_QUERY = "/gma/v1/registry/query";
    /** Why the relay refuses every call while security is on. */
    static final String RELAY_OFF = "the registry relay is off while security is on: query the registry itself,"
            + " with your own credentials";
    /** The request attribute where {@link #refusal} leaves who the caller proved to be. */
    private static final String IDENTITY = "io.gma.pcservlet.identity";
    private transient PcNode node;
    private transient boolean owned;

    /** For a container: the engine is built from init parameters. */
    public TunnelServlet() {
    }

    TunnelServlet(PcNode node) {
        this.node = node;
    }

    @Override
    public void init() throws ServletException {
        if (node != null) {
            return;
        }
        try {
            PcServer.Builder b = PcServer.builder(param("domain", true), param("registry", true));
            String via = param("via", false);
            if (via != null) {
                b.via(via);
            }
            String uplinkHost = param("uplinkHost", false);
            if (uplinkHost != null) {
                b.host(uplinkHost);
            }
            String uplinkPort = param("uplinkPort", false);
            if (uplinkPort != null) {
                b.uplinkPort(Integer.parseInt(uplinkPort));
            }
            String compression = param("compression", false);
            if (compression != null) {
                b.compression(compression);
            }
            String url = param("url", via == null);
            spool(b);
            String passwordFile = param("proxyPasswordFile", false);
            HttpProxy proxy = PcCommand.proxy(param("proxy", false), param("proxyUser", false),
                    passwordFile == null ? null : Path.of(passwordFile), param("noProxy", false));
            if (proxy != null) {
                b.proxy(proxy);
            }
            node = new PcNode(b.settings());
            node.start(url);
            owned = true;
        } catch (IOException | RuntimeException e) {
            throw new ServletException("the PC servlet cannot start: " + e.getMessage(), e);
        }
    }

    /**
     * The spool, from the init parameters that {@code gma pc} takes as options: {@code dataDir} (default: a
     * directory named after the domain, in the working directory), {@code fsync} ({@code always}, {@code batch},
     * {@code never}; default batch), {@code maxSpoolBytes} (default 1 GiB), {@code maxAge} (as {@code --max-age};
     * default any age); or {@code memory} = {@code true} for none.
     */
    private void spool(PcServer.Builder b) throws ServletException {
        String memory = param("memory", false);
        if (memory != null && !memory.equalsIgnoreCase("false")) {
            if (!memory.equalsIgnoreCase("true")) {
                throw new ServletException("init parameter memory \"" + memory + "\" is not true or false");
            }
            return;
        }
        String dir = param("dataDir", false);
        String fsync = param("fsync", false);
        String maxBytes = param("maxSpoolBytes", false);
        String maxAge = param("maxAge", false);
        try {
            b.spool(new SpoolOptions(Path.of(dir != null ? dir : param("domain", true)),
                    fsync == null ? SpoolOptions.Fsync.BATCH : new PcCommand.FsyncConverter().convert(fsync),
                    maxBytes == null ? SpoolOptions.DEFAULT_MAX_BYTES : Long.parseLong(maxBytes.trim()),
                    maxAge == null ? Duration.ZERO : new io.gma.cli.AgeConverter().convert(maxAge)));
        } catch (RuntimeException e) {
            throw new ServletException("the spool's init parameters (dataDir " + dir + ", fsync " + fsync
                    + ", maxSpoolBytes " + maxBytes + ", maxAge " + maxAge + "): " + e.getMessage(), e);
        }
    }

    private String param(String name, boolean required) throws ServletException {
        String v = getInitParameter(name);
        if (v == null && required) {
            throw new ServletException("init parameter " + name + " is required");
        }
        return v;
    }

    @Override
    public void destroy() {
        if (owned) {
            node.shutdown();
        }
    }

    /**
     * Who may call, decided from the headers and the peer's address alone, before any body is read: null when
     * the call may go on, else the 401 or 403 to answer.
     *
     * <ul>
     *   <li>Messages (POST, and GET polls): with security on, the caller's identity must be allowed to
     *       {@code post} as the domain it names (X-Gma-Domain, or the poll's domain).</li>
     *   <li>Diagnostics (status, metrics): this machine always; other hosts only when authentication is
     *       configured, and then authenticated.</li>
     *   <li>The registry relay: off with security on, since it would run any caller's query under this PC
     *       servlet's identity and credentials; without security, this machine only (the PC servlet's port
     *       faces other domains; the registry may not).</li>
     * </ul>
     */
    private Answer refusal(HttpServletRequest req, String path, String method) throws IOException {
        Security security = node.security();
        boolean local = InetAddress.getByName(req.getRemoteAddr()).isLoopbackAddress();
        try {
            if (path.equals(Tunnel.MESSAGES_PATH)) {
                String identity = Https.caller(req, security, node.domain());
                req.setAttribute(IDENTITY, identity); // kept with each message it posts, in the spool
                String domain = method.equals("GET") ? req.getParameter("domain")
                        : req.getHeader(Tunnel.DOMAIN_HEADER);
                security.authorize(identity, Rules.Verb.POST, domain == null ? "" : domain);
            } else if (path.equals(REGISTRY_QUERY)) {
                if (security.authenticates()) {
                    return Answer.text(403, ErrorCode.FORBIDDEN, RELAY_OFF);
                }
                if (!local) {
                    return Answer.text(403, ErrorCode.FORBIDDEN, "the registry relay answers this machine"
                            + " only, not " + req.getRemoteAddr());
                }
            } else if (!local) {
                if (!security.authenticates()) {
                    return Answer.text(403, ErrorCode.FORBIDDEN, path + " answers this machine only, not "
                            + req.getRemoteAddr() + ", while no authentication is configured");
                }
                Https.caller(req, security, node.domain());
            }
            return null;
        } catch (AuthException e) {
            ErrorCode code = e.kind() == AuthException.Kind.UNAUTHORIZED ? ErrorCode.UNAUTHORIZED
                    : ErrorCode.FORBIDDEN;
            return Answer.text(e.kind().status(), code, e.getMessage());
        }
    }

    /**
     * Which page of another origin may read the status (the dashboard of another server reads it): any without
     * security; with security, only the registry's own dashboard, at the origin of a registry URL this PC
     * servlet was given (a page of any other site must not read what this machine is shown). Null: none.
     */
    private String statusReader(String origin) {
        return Https.allowedOrigin(node.security(), node.settings().registry(), origin);
    }

    @Override
    protected void service(HttpServletRequest req, HttpServletResponse resp) throws IOException {
        String path = req.getRequestURI().substring(req.getContextPath().length());
        String method = req.getMethod();
        Answer answer = refusal(req, path, method);
        if (answer != null) {
            resp.setHeader("Connection", "close"); // the body is not read
            if (answer.status() == 401) {
                resp.setHeader("WWW-Authenticate", "Bearer");
            }
        } else if (path.equals(Tunnel.MESSAGES_PATH) && method.equals("POST")) {
            // the header as sent: the container's getContentType() fails on a charset the JVM does not know
            String stream = req.getHeader(Tunnel.STREAM_HEADER);
            answer = node.inbound().accept(req.getHeader(Tunnel.DOMAIN_HEADER), (String) req.getAttribute(
                    IDENTITY), req.getHeader("Content-Type"), req.getHeader(Compression.CONTENT_ENCODING),
                    req.getContentLengthLong(), req.getInputStream(), stream);
            if (node.settings().compression() == Compression.Mode.AUTO) {
                // protocol.md section 6.2: the sender may compress its next batches (RFC 9110 12.5.3)
                resp.setHeader(Compression.ACCEPT_ENCODING, Compression.ZSTD);
            }
            if (stream != null) {
                resp.setHeader(Tunnel.WINDOW_HEADER, Integer.toString(StreamOrder.MAX_WINDOW));
            }
        } else if (path.equals(Tunnel.MESSAGES_PATH) && method.equals("GET")) {
            poll(req, resp);
            return;
        } else if (path.equals("/gma/v1/status") && method.equals("GET")) {
            answer = new Answer(200, "application/json", StatusPages.status(node), 0, null);
            String reader = statusReader(req.getHeader("Origin"));
            if (reader != null) {
                resp.setHeader("Access-Control-Allow-Origin", reader);
                resp.setHeader("Vary", "Origin");
            }
        } else if (path.equals(REGISTRY_QUERY) && method.equals("POST")) {
            answer = StatusPages.registryQuery(node, req.getInputStream());
        } else if (path.equals("/metrics") && method.equals("GET")) {
            answer = new Answer(200, PrometheusText.CONTENT_TYPE,
                    StatusPages.metrics(node).getBytes(StandardCharsets.UTF_8), 0, null);
        } else {
            answer = Answer.text(404, ErrorCode.NO_ROUTE, method + " " + path
                    + " is not an endpoint of this PC servlet");
        }
        write(resp, method, answer);
    }

    /**
     * A long poll: its answer is written when the relay has it, by a container thread; no thread waits
     * meanwhile, so that polls cannot take the threads that POSTs need. In a container that does not let this
     * servlet go asynchronous (not marked async-supported), the request's thread waits, as a servlet's would.
     */
    private void poll(HttpServletRequest req, HttpServletResponse resp) throws IOException {
        String domain = req.getParameter("domain");
        String wait = req.getParameter("wait");
        String ack = req.getParameter("ack");
        String max = req.getParameter("max");
        String accepts = req.getHeader(Compression.ACCEPT_ENCODING);
        if (!req.isAsyncSupported()) {
            CompletableFuture<Supplier<Answer>> later = new CompletableFuture<>();
            node.inbound().poll(domain, wait, ack, max, accepts, later::complete);
            write(resp, "GET", later.join().get());
            return;
        }
        AsyncContext async = req.startAsync();
        AtomicBoolean answered = new AtomicBoolean();
        // a backstop: the relay answers every poll within its wait (60 s at most) or when it is drained
        async.setTimeout(TimeUnit.SECONDS.toMillis(POLL_BACKSTOP_SECONDS));
        async.addListener(new AsyncListener() {
            @Override
            public void onTimeout(AsyncEvent event) throws IOException {
                if (answered.compareAndSet(false, true)) {
                    LOG.warn("{}: a poll of {} was not answered within {} s; answered 503", node.domain(), domain,
                            POLL_BACKSTOP_SECONDS);
                    write(resp, "GET", Answer.text(503, ErrorCode.INTERNAL, "the poll was not answered within "
                            + POLL_BACKSTOP_SECONDS + " s"));
                    async.complete();
                }
            }

            @Override
            public void onComplete(AsyncEvent event) {
            }

            @Override
            public void onError(AsyncEvent event) {
            }

            @Override
            public void onStartAsync(AsyncEvent event) {
            }
        });
        node.inbound().poll(domain, wait, ack, max, accepts, made -> {
            if (answered.compareAndSet(false, true)) {
                answer(async, resp, made);
            }
        });
    }

    /** How long a poll may go unanswered before the container ends it (the longest wait is 60 s). */
    static final long POLL_BACKSTOP_SECONDS = 90;

    /**
     * Writes a poll's answer on a container thread. A batch it could not give stays unacknowledged, for the next
     * poll; an answer that could not be made (a bug) is a 500, logged.
     */
    private void answer(AsyncContext async, HttpServletResponse resp, Supplier<Answer> made) {
        try {
            async.start(() -> {
                try {
                    Answer a;
                    try {
                        a = made.get();
                    } catch (RuntimeException bug) {
                        LOG.warn("{}: a poll's answer could not be made", node.domain(), bug);
                        a = Answer.text(500, ErrorCode.INTERNAL, "the answer could not be made: " + bug);
                    }
                    write(resp, "GET", a);
                } catch (IOException | RuntimeException gone) {
                    LOG.debug("{}: a poll's answer was not written: {}", node.domain(), gone.toString());
                } finally {
                    async.complete();
                }
            });
        } catch (RuntimeException stopped) { // the container stops
            LOG.debug("{}: a poll was not answered: {}", node.domain(), stopped.toString());
        }
    }

    private static void write(HttpServletResponse resp, String method, Answer answer) throws IOException {
        resp.setStatus(answer.status());
        if (method.equals("POST") && (answer.status() == 400 || answer.status() == 413 || answer.status() == 415)) {
            // the body may be unread: the connection cannot carry another request
            resp.setHeader("Connection", "close");
        }
        if (answer.retryAfterSeconds() > 0) {
            resp.setHeader("Retry-After", Long.toString(answer.retryAfterSeconds()));
        }
        if (answer.batchId() != null) {
            resp.setHeader(Tunnel.BATCH_HEADER, answer.batchId());
        }
        if (answer.full() != null) {
            resp.setHeader(Tunnel.FULL_HEADER, answer.full());
        }
        if (answer.contentType() != null) {
            resp.setContentType(answer.contentType());
        }
        if (answer.encoding() != null) {
            resp.setHeader(Compression.CONTENT_ENCODING, answer.encoding());
            resp.setHeader("Vary", Compression.ACCEPT_ENCODING);
        }
        resp.setContentLength(answer.body().length);
        resp.getOutputStream().write(answer.body());
    }
}
