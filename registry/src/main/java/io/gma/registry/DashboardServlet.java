package io.gma.registry;

import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.io.InputStream;
import java.util.LinkedHashMap;
import java.util.Map;
import org.eclipse.jetty.ee10.servlet.ServletContextHandler;
import org.eclipse.jetty.ee10.servlet.ServletHolder;

/**
 * The dashboard: one page of plain HTML, CSS and JavaScript (no build step), served by the registry and by
 * each PC servlet under {@code /dashboard/}. The page reads the registry through {@code queryPath} (the
 * registry's own API, or a PC servlet's relay of it, which is off while that PC servlet's security is on: the
 * page then shows the refusal's sentence) and each reachable PC servlet's {@code /gma/v1/status}, and refreshes
 * every second. Served by a registry that authenticates, it has a sign-in form: a person pastes a token, which
 * the registry keeps in a session ({@link DashboardSessions}, at {@code sessionPath}).
 */
public final class DashboardServlet extends HttpServlet {
    private static final long serialVersionUID = 1L;
    private static final Map<String, String> FILES = Map.of("", "index.html", "/", "index.html",
            "/index.html", "index.html", "/dashboard.js", "dashboard.js", "/dashboard.css", "dashboard.css");
    private static final Map<String, String> TYPES = Map.of("html", "text/html; charset=utf-8", "js",
            "text/javascript; charset=utf-8", "css", "text/css; charset=utf-8");
    private final String queryPath;
    /** Where the page signs in and out, or null: nothing to sign in to. */
    private final String sessionPath;

    /** @param queryPath where the page posts SQL, such as {@code /registry/v1/query} */
    public DashboardServlet(String queryPath) {
        this(queryPath, null);
    }

    private DashboardServlet(String queryPath, String sessionPath) {
        this.queryPath = queryPath;
        this.sessionPath = sessionPath;
    }

    /** Serves the dashboard under {@code /dashboard/} in {@code context}, and sends a browser at {@code /} there. */
    public static void mount(ServletContextHandler context, String queryPath) {
        mount(context, queryPath, null);
    }

    /** As {@link #mount(ServletContextHandler, String)}, with a sign-in at {@code sessionPath} unless it is null. */
    static void mount(ServletContextHandler context, String queryPath, String sessionPath) {
        context.addServlet(new ServletHolder("dashboard", new DashboardServlet(queryPath, sessionPath)),
                "/dashboard/*");
        context.addServlet(new ServletHolder("root", new ToDashboard()), ""); // "": the context's root alone
    }

    /** {@code GET /}: to the dashboard, rather than a 404 page of the container's. */
    private static final class ToDashboard extends HttpServlet {
        private static final long serialVersionUID = 1L;

        @Override
        protected void doGet(HttpServletRequest req, HttpServletResponse resp) throws IOException {
            resp.sendRedirect("/dashboard/");
        }
    }

    @Override
    protected void doGet(HttpServletRequest req, HttpServletResponse resp) throws IOException {
        String path = req.getPathInfo() == null ? "" : req.getPathInfo();
        if (path.isEmpty()) {
            resp.sendRedirect(req.getRequestURI() + "/"); // relative links resolve under /dashboard/
            return;
        }
        if (path.equals("/config.json")) {
            Map<String, String> config = new LinkedHashMap<>();
            config.put("query", queryPath);
            config.put("session", sessionPath);
            send(resp, "application/json", Json.MAPPER.writeValueAsBytes(config));
            return;
        }
        String file = FILES.get(path);
        if (file == null) {
            resp.sendError(404, path + " is not part of the dashboard");
            return;
        }
        try (InputStream in = DashboardServlet.class.getResourceAsStream("/io/gma/dashboard/" + file)) {
            if (in == null) {
                resp.sendError(500, file + " is missing from the jar");
                return;
            }
            send(resp, TYPES.get(file.substring(file.lastIndexOf('.') + 1)), in.readAllBytes());
        }
    }

    private static void send(HttpServletResponse resp, String type, byte[] body) throws IOException {
        resp.setContentType(type);
        resp.setHeader("Cache-Control", "no-store");
        resp.setContentLength(body.length);
        resp.getOutputStream().write(body);
    }
}
