package io.gma.pcservlet;

import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.nio.charset.StandardCharsets;

/**
 * The PC servlet's HTTP side, a plain Jakarta Servlet 6:
 *
 * <pre>
 *   POST /gma/v1/messages                      a batch from another domain (PROTOCOL.md section 6)
 *   GET  /gma/v1/messages?domain=&amp;wait=&amp;ack=    a long poll from an outbound-only domain we relay for
 *   GET  /gma/v1/status                        JSON: domain, clients, queues, counters
 *   GET  /metrics                              Prometheus text format
 *   POST /gma/v1/registry/query                an SQL query, relayed to the registry (for the dashboard)
 *   GET  /dashboard/                           the dashboard (embedded PcServlet)
 * </pre>
 *
 * Embedded, {@link PcServlet} hands it its engine. Deployed in a container (mapped to {@code /*}), it builds
 * one from its init parameters: {@code domain}, {@code registry}, {@code url} (how other domains reach it;
 * absent with {@code via}), {@code via}, {@code uplinkHost}, {@code uplinkPort}.
 */
public final class TunnelServlet extends HttpServlet {
    private static final long serialVersionUID = 1L;
    /** Where the dashboard served here posts its registry queries: relayed to the registry, same origin. */
    static final String REGISTRY_QUERY = "/gma/v1/registry/query";
    private transient PcCore core;
    private transient boolean owned;

    /** For a container: the engine is built from init parameters. */
    public TunnelServlet() {
    }

    TunnelServlet(PcCore core) {
        this.core = core;
    }

    @Override
    public void init() throws ServletException {
        if (core != null) {
            return;
        }
        try {
            PcServlet.Builder b = PcServlet.builder(param("domain", true), param("registry", true));
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
            String url = param("url", via == null);
            core = new PcCore(b.settings());
            core.start(url);
            owned = true;
        } catch (IOException | RuntimeException e) {
            throw new ServletException("the PC servlet cannot start: " + e.getMessage(), e);
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
            core.shutdown();
        }
    }

    @Override
    protected void service(HttpServletRequest req, HttpServletResponse resp) throws IOException {
        String path = req.getRequestURI().substring(req.getContextPath().length());
        String method = req.getMethod();
        PcCore.Answer answer;
        try {
            if (path.equals(PcCore.MESSAGES_PATH) && method.equals("POST")) {
                answer = core.accept(req.getHeader(PcCore.DOMAIN_HEADER), req.getContentLengthLong(),
                        req.getInputStream());
            } else if (path.equals(PcCore.MESSAGES_PATH) && method.equals("GET")) {
                answer = core.poll(req.getParameter("domain"), req.getParameter("wait"), req.getParameter("ack"));
            } else if (path.equals("/gma/v1/status") && method.equals("GET")) {
                answer = new PcCore.Answer(200, "application/json", StatusPages.status(core), 0, null);
                resp.setHeader("Access-Control-Allow-Origin", "*"); // the dashboard of another server reads it
            } else if (path.equals(REGISTRY_QUERY) && method.equals("POST")) {
                // the PC servlet's port faces other domains; the registry may not: relay for this machine only
                answer = java.net.InetAddress.getByName(req.getRemoteAddr()).isLoopbackAddress()
                        ? StatusPages.registryQuery(core, req.getInputStream())
                        : PcCore.Answer.text(403, io.gma.wire.ErrorCode.FORBIDDEN, "the registry relay answers"
                                + " this machine only, not " + req.getRemoteAddr());
            } else if (path.equals("/metrics") && method.equals("GET")) {
                answer = new PcCore.Answer(200, "text/plain; version=0.0.4; charset=utf-8",
                        StatusPages.metrics(core).getBytes(StandardCharsets.UTF_8), 0, null);
            } else {
                answer = PcCore.Answer.text(404, io.gma.wire.ErrorCode.NO_ROUTE, method + " " + path
                        + " is not an endpoint of this PC servlet");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            answer = PcCore.Answer.text(503, io.gma.wire.ErrorCode.SHUTTING_DOWN, "interrupted");
        }
        resp.setStatus(answer.status());
        if (method.equals("POST") && (answer.status() == 400 || answer.status() == 413)) {
            // the body may be unread: the connection cannot carry another request
            resp.setHeader("Connection", "close");
        }
        if (answer.retryAfterSeconds() > 0) {
            resp.setHeader("Retry-After", Long.toString(answer.retryAfterSeconds()));
        }
        if (answer.batchId() != null) {
            resp.setHeader(PcCore.BATCH_HEADER, answer.batchId());
        }
        if (answer.full() != null) {
            resp.setHeader(PcCore.FULL_HEADER, answer.full());
        }
        if (answer.contentType() != null) {
            resp.setContentType(answer.contentType());
        }
        resp.setContentLength(answer.body().length);
        resp.getOutputStream().write(answer.body());
    }
}
