package io.gma.registry;

import io.gma.wire.PrometheusText;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.nio.charset.StandardCharsets;

/**
 * {@code GET /metrics}: the registry's {@link Metrics} in the Prometheus text format (0.0.4). As a PC servlet's
 * diagnostics: callers on this machine always; callers from other hosts only when authentication is configured,
 * and then authenticated (a token or a client certificate; any identity, the rules are not asked), else 403 or
 * 401 before anything is read.
 */
final class MetricsServlet extends HttpServlet {
    private static final long serialVersionUID = 1L;
    /** Where {@link Registry} serves it. */
    static final String PATH = "/metrics";

    private final transient RegistryCore core;

    MetricsServlet(RegistryCore core) {
        this.core = core;
    }

    @Override
    protected void doGet(HttpServletRequest req, HttpServletResponse resp) throws IOException {
        if (!RegistryServlet.loopback(req.getRemoteAddr())) {
            if (core.open) {
                refuse(resp, 403, "FORBIDDEN", PATH + " answers this machine only, not " + req.getRemoteAddr()
                        + ", while no authentication is configured");
                return;
            }
            try {
                core.authenticator.authenticate(req);
            } catch (AccessDeniedException e) {
                resp.setHeader("WWW-Authenticate", "Bearer");
                refuse(resp, 401, "UNAUTHORIZED", e.getMessage());
                return;
            }
        }
        byte[] body = core.metrics.text(core.store).getBytes(StandardCharsets.UTF_8);
        resp.setStatus(200);
        resp.setContentType(PrometheusText.CONTENT_TYPE);
        resp.setHeader("Cache-Control", "no-store");
        resp.setContentLength(body.length);
        resp.getOutputStream().write(body);
    }

    private void refuse(HttpServletResponse resp, int status, String code, String message) throws IOException {
        core.metrics.answeredError(status, code);
        RegistryServlet.answerError(resp, status, code, message);
    }
}
