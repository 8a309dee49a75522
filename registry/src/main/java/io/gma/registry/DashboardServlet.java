package io.gma.registry;

import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.io.InputStream;
import java.time.Duration;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import org.eclipse.jetty.ee10.servlet.ServletContextHandler;
import org.eclipse.jetty.ee10.servlet.ServletHolder;

/**
 * The dashboard: pages of plain HTML, CSS and JavaScript (no build step), served by the registry and by each PC
 * servlet under {@code /dashboard/} (docs/dashboard.md). The overview reads the registry through {@code queryPath}
 * (the registry's own API, or a PC servlet's relay of it, which is off while that PC servlet's security is on: the
 * page then shows the refusal's sentence) and each reachable PC servlet's {@code /gma/v1/status}, refreshes every
 * second, and draws the domains and their routes. {@code table.html} charts a table's column per key with the rows
 * an archiver's HTTP listener serves (found by the registry's attribute {@code charts}); {@code pcs.html} charts the
 * PC servlets' messages per second and queue depths from the registry's samples ({@code pcsPath}; none on a PC
 * servlet). The charts are uPlot's, served from its webjar on the classpath (under {@code uplot/}), so the pages
 * work offline. Served by a registry that authenticates, the overview has a sign-in form: a person pastes a token,
 * which the registry keeps in a session ({@link DashboardSessions}, at {@code sessionPath}).
 */
public final class DashboardServlet extends HttpServlet {
    /**
     * The periods the dashboard's charts show, by the names its pages give them ({@code range=5m}), shortest first:
     * what the registry's samples of the PC servlets and an archiver's chart data answer.
     */
    public static final Map<String, Duration> RANGES = ranges();
    private static final long serialVersionUID = 1L;
    private static final String OURS = "/io/gma/dashboard/";
    /** uPlot's files in its webjar (org.webjars.npm:uplot), which the registry depends on. */
    private static final String UPLOT = "/META-INF/resources/webjars/uplot/1.6.30/";
    /** Each path under /dashboard to its resource on the classpath. */
    private static final Map<String, String> FILES = Map.ofEntries(Map.entry("/", OURS + "index.html"),
            Map.entry("/index.html", OURS + "index.html"), Map.entry("/table.html", OURS + "table.html"),
            Map.entry("/pcs.html", OURS + "pcs.html"), Map.entry("/common.js", OURS + "common.js"),
            Map.entry("/dashboard.js", OURS + "dashboard.js"), Map.entry("/routes.js", OURS + "routes.js"),
            Map.entry("/table.js", OURS + "table.js"), Map.entry("/pcs.js", OURS + "pcs.js"),
            Map.entry("/dashboard.css", OURS + "dashboard.css"),
            Map.entry("/uplot/uPlot.iife.min.js", UPLOT + "dist/uPlot.iife.min.js"),
            Map.entry("/uplot/uPlot.min.css", UPLOT + "dist/uPlot.min.css"),
            Map.entry("/uplot/LICENSE", UPLOT + "LICENSE"));
    private static final Map<String, String> TYPES = Map.of("html", "text/html; charset=utf-8", "js",
            "text/javascript; charset=utf-8", "css", "text/css; charset=utf-8", "LICENSE",
            "text/plain; charset=utf-8");
    private final String queryPath;
    /** Where the page signs in and out, or null: nothing to sign in to. */
    private final String sessionPath;
    /** Where the PC servlets' samples are ({@code GET}, {@code ?range=}), or null: none kept here. */
    private final String pcsPath;

    /** @param queryPath where the page posts SQL, such as {@code /registry/v1/query} */
    public DashboardServlet(String queryPath) {
        this(queryPath, null, null);
    }

    private DashboardServlet(String queryPath, String sessionPath, String pcsPath) {
        this.queryPath = queryPath;
        this.sessionPath = sessionPath;
        this.pcsPath = pcsPath;
    }

    private static Map<String, Duration> ranges() {
        Map<String, Duration> r = new LinkedHashMap<>();
        r.put("5m", Duration.ofMinutes(5));
        r.put("1h", Duration.ofHours(1));
        r.put("1d", Duration.ofDays(1));
        return Collections.unmodifiableMap(r);
    }

    /**
     * The period of {@link #RANGES} named {@code name}; null is the shortest.
     *
     * @throws IllegalArgumentException naming the value and the three: {@code range "2d" is not one of 5m, 1h, 1d}
     */
    public static Duration range(String name) {
        Duration period = RANGES.get(name == null ? "5m" : name);
        if (period == null) {
            throw new IllegalArgumentException("range \"" + (name.length() <= 64 ? name : name.substring(0, 64)
                    + "...") + "\" is not one of " + String.join(", ", RANGES.keySet()));
        }
        return period;
    }

    /** Serves the dashboard under {@code /dashboard/} in {@code context}, and sends a browser at {@code /} there. */
    public static void mount(ServletContextHandler context, String queryPath) {
        mount(context, queryPath, null, null);
    }

    /**
     * As {@link #mount(ServletContextHandler, String)}, with a sign-in at {@code sessionPath} and the PC servlets'
     * samples at {@code pcsPath}, unless they are null.
     */
    static void mount(ServletContextHandler context, String queryPath, String sessionPath, String pcsPath) {
        context.addServlet(new ServletHolder("dashboard", new DashboardServlet(queryPath, sessionPath, pcsPath)),
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
            config.put("pcs", pcsPath);
            send(resp, "application/json", Json.MAPPER.writeValueAsBytes(config));
            return;
        }
        String file = FILES.get(path);
        if (file == null) {
            resp.sendError(404, path + " is not part of the dashboard");
            return;
        }
        try (InputStream in = DashboardServlet.class.getResourceAsStream(file)) {
            if (in == null) {
                resp.sendError(500, file + " is missing from the class path");
                return;
            }
            send(resp, TYPES.get(file.substring(Math.max(file.lastIndexOf('.'), file.lastIndexOf('/')) + 1)),
                    in.readAllBytes());
        }
    }

    private static void send(HttpServletResponse resp, String type, byte[] body) throws IOException {
        resp.setContentType(type);
        resp.setHeader("Cache-Control", "no-store");
        resp.setContentLength(body.length);
        resp.getOutputStream().write(body);
    }
}
