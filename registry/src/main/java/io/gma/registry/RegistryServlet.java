package io.gma.registry;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.gma.registry.api.DomainInfo;
import io.gma.registry.api.EndpointInfo;
import io.gma.registry.api.Lease;
import io.gma.registry.api.QueryResult;
import jakarta.servlet.ServletConfig;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;
import java.sql.SQLException;
import java.sql.SQLTransientConnectionException;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The registry's HTTP API (protocol.md section 7), as a plain Jakarta Servlet 6. Map it to
 * {@code /registry/v1/*}.
 *
 * <p>In a servlet container, the no-argument constructor reads init parameters: {@code jdbcUrl} (default: a
 * private in-memory H2), {@code jdbcUser}, {@code jdbcPassword}, {@code maxRows}, {@code queryTimeoutSeconds},
 * {@code defaultLeaseSeconds}, {@code maxLeaseSeconds}, and on PostgreSQL {@code queryUser} and
 * {@code queryPassword} (see {@link Registry.Builder#queryCredentials}). Such a registry is open (no
 * authenticator). Embedded, {@link Registry} builds it with its settings and security hooks.
 */
public class RegistryServlet extends HttpServlet {
    private static final long serialVersionUID = 1L;
    private static final Logger LOG = LoggerFactory.getLogger(RegistryServlet.class);
    private static final Set<String> SQL_TYPES = Set.of("text/plain", "application/sql");
    /** The most of a refused body that is read and dropped before answering 413 (Tomcat's maxSwallowSize). */
    static final long MAX_SWALLOW = 4 << 20;

    private transient RegistryCore core;
    private transient boolean ownsCore;
    private transient TableCalls tables;
    /** The PC servlets' samples for the dashboard's charts; null in a container, which keeps none. */
    private transient PcSampler samples;

    /** For servlet containers: settings come from init parameters. */
    public RegistryServlet() {
    }

    RegistryServlet(RegistryCore core, PcSampler samples) {
        this.core = core;
        this.tables = new TableCalls(core);
        this.samples = samples;
    }

    @Override
    public void init(ServletConfig config) throws ServletException {
        super.init(config);
        if (core != null) {
            return;
        }
        Settings d = Settings.defaults();
        try {
            Settings settings = new Settings(param(config, "jdbcUrl", null), param(config, "jdbcUser", "sa"),
                    param(config, "jdbcPassword", ""), Integer.parseInt(param(config, "maxRows", "" + d.maxRows())),
                    seconds(config, "queryTimeoutSeconds", d.queryTimeout()),
                    seconds(config, "defaultLeaseSeconds", d.defaultLease()),
                    seconds(config, "maxLeaseSeconds", d.maxLease()), d.sweepInterval(), d.maxSqlChars(),
                    d.maxConnections(), param(config, "queryUser", null), param(config, "queryPassword", null));
            core = new RegistryCore(settings, null, null);
            tables = new TableCalls(core);
            ownsCore = true;
        } catch (SQLException | IllegalArgumentException e) {
            throw new ServletException("registry could not start: " + e.getMessage(), e);
        }
    }

    private static String param(ServletConfig config, String name, String otherwise) {
        String value = config.getInitParameter(name);
        return value != null ? value : otherwise;
    }

    private static Duration seconds(ServletConfig config, String name, Duration otherwise) {
        String value = config.getInitParameter(name);
        return value != null ? Duration.ofSeconds(Long.parseLong(value)) : otherwise;
    }

    @Override
    public void destroy() {
        if (ownsCore) {
            core.close();
        }
    }

    @Override
    protected void service(HttpServletRequest req, HttpServletResponse resp) throws IOException {
        String identity = null;
        try {
            // a dashboard's session stands for its token; an open registry has none
            HttpServletRequest seen = core.open ? req : core.sessions.authenticating(req, resp);
            try {
                identity = core.authenticator.authenticate(seen);
            } catch (AccessDeniedException e) {
                if (seen != req) {
                    throw core.sessions.refused(req, resp, e.getMessage());
                }
                throw new ApiException(401, "UNAUTHORIZED", e.getMessage());
            }
            route(req, resp, identity);
        } catch (ApiException e) {
            if (e.status() == 401) {
                resp.setHeader("WWW-Authenticate", "Bearer");
            }
            if (identity != null) {
                swallow(req); // an unauthenticated body is never read; any other refused one is dropped
            }
            error(resp, e.status(), e.code(), e.getMessage());
        } catch (SQLTransientConnectionException | RejectedExecutionException e) {
            resp.setHeader("Retry-After", "1");
            error(resp, 503, "UNAVAILABLE", "the registry is busy; try again in a second");
        } catch (SQLException e) {
            LOG.error("database failure on {} {}", req.getMethod(), req.getRequestURI(), e);
            error(resp, 500, "INTERNAL", "the registry's database failed (SQLSTATE " + e.getSQLState() + ")");
        } catch (RuntimeException | OutOfMemoryError | StackOverflowError e) {
            // the request fails; the registry goes on serving the others
            LOG.error("failure on {} {}", req.getMethod(), req.getRequestURI(), e);
            error(resp, 500, "INTERNAL", "the registry failed on this request (" + e.getClass().getSimpleName() + ")");
        }
    }

    /** Answers an error, counted in {@code gma_registry_refused_total} or {@code _failed_total} by its code. */
    private void error(HttpServletResponse resp, int status, String code, String message) throws IOException {
        core.metrics.answeredError(status, code);
        answerError(resp, status, code, message);
    }

    private void route(HttpServletRequest req, HttpServletResponse resp, String identity)
            throws IOException, SQLException {
        String path = req.getPathInfo() == null ? "/" : req.getPathInfo();
        String method = req.getMethod();
        String[] parts = path.substring(1).split("/", -1);
        switch (parts[0]) {
            case "endpoints":
                if (parts.length == 1) {
                    allow(method, "POST");
                    register(req, resp, identity);
                } else if (parts.length == 2) {
                    allow(method, "GET", "DELETE");
                    endpoint(method, Names.name(parts[1]), resp, identity);
                } else if (parts.length == 3 && parts[2].equals("lease")) {
                    allow(method, "PUT");
                    String name = Names.name(parts[1]);
                    authorizeRegistered(identity, name);
                    Lease lease = core.store.renew(name, identity);
                    core.metrics.count(Metrics.Event.RENEWED, Metrics.Kind.ENDPOINT);
                    json(resp, 200, Json.MAPPER.createObjectNode().put("name", lease.name())
                            .put("expiresAt", lease.expiresAt().toString()));
                } else if (parts.length == 4 && parts[2].equals("tables")) {
                    allow(method, "PUT");
                    tables.publish(req, resp, parts[1], parts[3], identity);
                } else {
                    throw unknown(method, req);
                }
                break;
            case "tables":
                if (parts.length == 1) {
                    allow(method, "POST");
                    tables.declare(req, resp, identity);
                } else if (parts.length == 2) {
                    allow(method, "GET");
                    tables.lookup(parts[1], resp, identity);
                } else {
                    throw unknown(method, req);
                }
                break;
            case "domains":
                if (parts.length == 1) {
                    allow(method, "POST");
                    registerDomain(req, resp, identity);
                } else if (parts.length == 2) {
                    allow(method, "GET", "DELETE");
                    domain(method, Names.domain("domain", parts[1]), resp, identity);
                } else {
                    throw unknown(method, req);
                }
                break;
            case "query":
                if (parts.length != 1) {
                    throw unknown(method, req);
                }
                allow(method, "GET", "POST");
                query(req, resp, identity);
                break;
            case "session":
                if (parts.length != 1 || core.open) {
                    throw core.open ? ApiException.notFound("this registry is open (no authentication is"
                            + " configured): there is nothing to sign in to") : unknown(method, req);
                }
                allow(method, "GET", "POST", "DELETE");
                json(resp, 200, core.sessions.call(req, resp, identity));
                break;
            case "pcs":
                if (parts.length != 1) {
                    throw unknown(method, req);
                }
                allow(method, "GET");
                pcs(req, resp, identity);
                break;
            case "health":
                if (parts.length != 1) {
                    throw unknown(method, req);
                }
                allow(method, "GET");
                health(req, resp);
                break;
            default:
                throw unknown(method, req);
        }
    }

    /**
     * Up, how long it has run and its default lease (which PC servlets read to tell a registry that may have
     * forgotten registrations, having restarted less than a lease ago: docs/registry.md); and the details
     * (database, live endpoints) to authenticated callers, or any on loopback when open.
     */
    private void health(HttpServletRequest req, HttpServletResponse resp) throws IOException, SQLException {
        ObjectNode health = Json.MAPPER.createObjectNode().put("status", "up")
                .put("uptimeSeconds", TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - core.startedNanos))
                .put("defaultLeaseSeconds", core.settings.defaultLease().toSeconds());
        if (!core.open || loopback(req.getRemoteAddr())) {
            health.put("database", core.database.dialect().toString()).put("endpoints", core.store.liveEndpoints());
        }
        json(resp, 200, health);
    }

    /**
     * The PC servlets' samples over {@code range} (5m, 1h, 1d), for the dashboard's charts: to whoever may read the
     * {@code domains} view, which names them.
     */
    private void pcs(HttpServletRequest req, HttpServletResponse resp, String identity) throws IOException {
        if (samples == null) {
            throw ApiException.notFound("this registry keeps no samples of the PC servlets: it runs in a servlet"
                    + " container; the registry started by Registry (gma registry) does");
        }
        authorize(identity, Authorizer.Action.QUERY, "domains");
        json(resp, 200, samples.answer(req.getParameter("range")));
    }

    static boolean loopback(String address) {
        try {
            // an address as the container gives it (a literal): no name look-up happens
            return address != null && InetAddress.getByName(address).isLoopbackAddress();
        } catch (UnknownHostException e) {
            return false;
        }
    }

    private void register(HttpServletRequest req, HttpServletResponse resp, String identity)
            throws IOException, SQLException {
        requireJson(req);
        EndpointStore.NewEndpoint e = core.requests.endpoint(body(req, Settings.MAX_JSON_BYTES));
        authorize(identity, Authorizer.Action.REGISTER, e.label() + "@" + e.domain());
        Lease lease = core.store.register(e, identity);
        core.metrics.count(Metrics.Event.REGISTERED, Metrics.Kind.ENDPOINT);
        resp.setHeader("Location", req.getContextPath() + req.getServletPath() + "/endpoints/" + lease.name());
        json(resp, 201, Json.MAPPER.createObjectNode().put("name", lease.name())
                .put("expiresAt", lease.expiresAt().toString()));
    }

    private void endpoint(String method, String name, HttpServletResponse resp, String identity)
            throws IOException, SQLException {
        if (method.equals("DELETE")) {
            authorizeRegistered(identity, name);
            core.store.unregister(name, identity);
            core.metrics.count(Metrics.Event.REMOVED, Metrics.Kind.ENDPOINT);
            resp.setStatus(204);
            return;
        }
        authorize(identity, Authorizer.Action.LOOKUP, name);
        EndpointInfo e = core.store.lookup(name);
        core.metrics.count(Metrics.Event.LOOKED_UP, Metrics.Kind.ENDPOINT);
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("name", e.name());
        out.put("label", e.label());
        out.put("kind", e.kind().wireName());
        out.put("domain", e.domain());
        out.put("host", e.host());
        out.put("port", e.port());
        out.put("owner", e.owner());
        out.put("registeredAt", e.registeredAt().toString());
        out.put("expiresAt", e.expiresAt().toString());
        // attributes follow the query rules: a send rule to the name must not show what query would refuse
        if (allows(identity, Authorizer.Action.QUERY, "attributes")) {
            out.put("attributes", e.attributes());
        }
        json(resp, 200, out);
    }

    private void registerDomain(HttpServletRequest req, HttpServletResponse resp, String identity)
            throws IOException, SQLException {
        requireJson(req);
        Requests.NewDomain d = core.requests.domain(body(req, Settings.MAX_JSON_BYTES));
        authorize(identity, Authorizer.Action.REGISTER_DOMAIN, d.domain());
        boolean created = core.store.registerDomain(d.domain(), d.url(), d.via(), d.leaseSeconds(), identity);
        core.metrics.count(created ? Metrics.Event.REGISTERED : Metrics.Event.RENEWED, Metrics.Kind.DOMAIN);
        DomainInfo info = core.store.lookupDomain(d.domain());
        // 201 either way, as protocol.md section 7 says; "created" tells a renewal from a new registration
        json(resp, 201, Json.MAPPER.createObjectNode().put("domain", info.domain()).put("created", created)
                .put("expiresAt", info.expiresAt().toString()));
    }

    private void domain(String method, String domain, HttpServletResponse resp, String identity)
            throws IOException, SQLException {
        if (method.equals("DELETE")) {
            authorize(identity, Authorizer.Action.REGISTER_DOMAIN, domain);
            core.store.unregisterDomain(domain, identity);
            core.metrics.count(Metrics.Event.REMOVED, Metrics.Kind.DOMAIN);
            resp.setStatus(204);
            return;
        }
        DomainInfo d = core.store.lookupDomain(domain);
        core.metrics.count(Metrics.Event.LOOKED_UP, Metrics.Kind.DOMAIN);
        json(resp, 200, Json.MAPPER.createObjectNode().put("domain", d.domain()).put("url", d.url()).put("via", d.via())
                .put("registeredAt", d.registeredAt().toString()).put("expiresAt", d.expiresAt().toString()));
    }

    private void query(HttpServletRequest req, HttpServletResponse resp, String identity)
            throws IOException, SQLException {
        String sql;
        if (req.getMethod().equals("GET")) {
            sql = req.getParameter("sql");
            if (sql == null) {
                throw ApiException.badRequest("the sql parameter is missing: GET /query?sql=SELECT...");
            }
        } else {
            String type = mediaType(req);
            if (type == null) {
                type = "text/plain";
            }
            if (!SQL_TYPES.contains(type)) {
                throw new ApiException(415, "UNSUPPORTED_MEDIA_TYPE", "content type " + Json.quote(type)
                        + " is not text/plain or application/sql");
            }
            // UTF-8 is at most 4 bytes a character, so this bound lets every allowed statement through
            byte[] text;
            try {
                text = body(req, core.settings.maxSqlChars() * 4);
            } catch (ApiException tooLarge) {
                if (tooLarge.status() != 413) {
                    throw tooLarge;
                }
                throw new ApiException(413, "TOO_LARGE", "the statement is over the limit of "
                        + core.settings.maxSqlChars() + " characters (maxSqlChars): its " + tooLarge.getMessage()
                        + " (4 bytes a character at most)");
            }
            sql = new String(text, StandardCharsets.UTF_8);
        }
        SqlGuard.Approved approved = core.guard.check(sql);
        for (String table : approved.tables()) {
            authorize(identity, Authorizer.Action.QUERY, table);
        }
        QueryResult result = core.queries.run(approved.sql());
        core.metrics.queryAnswered();
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("columns", result.columns());
        out.put("rows", result.rows());
        out.put("truncated", result.truncated());
        if (result.truncated()) {
            out.put("maxRows", core.settings.maxRows());
        }
        json(resp, 200, out);
    }

    private void authorize(String identity, Authorizer.Action action, String target) {
        try {
            core.authorizer.authorize(identity, action, target);
        } catch (AccessDeniedException e) {
            throw ApiException.forbidden(e.getMessage());
        }
    }

    /** Whether the authorizer allows it, for what an answer shows rather than whether it is given. */
    private boolean allows(String identity, Authorizer.Action action, String target) {
        if (!core.authorizes) {
            return true;
        }
        try {
            core.authorizer.authorize(identity, action, target);
            return true;
        } catch (AccessDeniedException e) {
            return false;
        }
    }

    /**
     * Checks the register rule for renewing or removing a live endpoint, against the label and domain the
     * registry stored for its name: the name alone does not tell them, as {@code x-abc234@east} is label
     * {@code x} with a nonce or label {@code x-abc234} registered exact. 404 when no live endpoint has the name.
     * Without an authorizer everything is allowed, so the look-up (a renewal is the most frequent call) is
     * skipped; the store's owner check applies either way.
     */
    private void authorizeRegistered(String identity, String name) throws SQLException {
        if (core.authorizes) {
            authorize(identity, Authorizer.Action.REGISTER, core.store.registeredAs(name));
        }
    }

    /** The request's media type in lower case, without parameters such as charset; null when none is given. */
    private static String mediaType(HttpServletRequest req) {
        // the header as sent: the container's getContentType() fails on a charset the JVM does not know
        String type = req.getHeader("Content-Type");
        return type == null ? null : type.split(";", 2)[0].trim().toLowerCase(Locale.ROOT);
    }

    /**
     * Refuses a JSON call whose body is declared as anything but application/json (a charset parameter is
     * fine), with 415 before the body is read. A page in a browser may POST text/plain or a form to any
     * origin without asking first; application/json takes a CORS preflight, which the registry never grants,
     * so a page cannot register at a registry on its visitor's machine.
     */
    static void requireJson(HttpServletRequest req) {
        String type = mediaType(req);
        if (!"application/json".equals(type)) {
            throw new ApiException(415, "UNSUPPORTED_MEDIA_TYPE", type == null
                    ? "content type is missing; it must be application/json"
                    : "content type " + Json.quote(type) + " is not application/json");
        }
    }

    private static void allow(String method, String... allowed) {
        for (String a : allowed) {
            if (a.equals(method)) {
                return;
            }
        }
        throw new ApiException(405, "METHOD_NOT_ALLOWED", method + " is not allowed here; use "
                + String.join(" or ", allowed));
    }

    private static ApiException unknown(String method, HttpServletRequest req) {
        return ApiException.notFound("no such call: " + method + " " + req.getRequestURI());
    }

    /**
     * Reads and drops what is left of a refused request's body, up to {@link #MAX_SWALLOW}, so that the answer
     * leaves the connection usable: a server that answers without reading closes it, and a client that had
     * already sent its next request on it sees the connection drop.
     */
    private static void swallow(HttpServletRequest req) {
        long declared = req.getContentLengthLong();
        if (declared == 0 || declared > MAX_SWALLOW) {
            return;
        }
        try {
            InputStream in = req.getInputStream();
            byte[] sink = new byte[8192];
            long left = MAX_SWALLOW;
            for (int n; left > 0 && (n = in.read(sink, 0, (int) Math.min(sink.length, left))) > 0;) {
                left -= n;
            }
        } catch (IOException | IllegalStateException ignored) {
            // the body was read already, or the client went away: nothing to keep usable
        }
    }

    /**
     * Reads a body of at most {@code limit} bytes, refusing a longer one with 413 from Content-Length alone. A
     * refused body of up to {@link #MAX_SWALLOW} bytes is read and dropped so that the client, still sending,
     * can read the answer on a connection that stays usable; past that the connection is simply closed.
     */
    static byte[] body(HttpServletRequest req, int limit) throws IOException {
        long declared = req.getContentLengthLong();
        try (InputStream in = req.getInputStream()) {
            if (declared > limit) {
                if (declared <= MAX_SWALLOW) {
                    try {
                        in.skipNBytes(declared);
                    } catch (EOFException shorter) {
                        // the client sent less than it declared; the answer is the same
                    }
                }
                throw new ApiException(413, "TOO_LARGE", "body is " + declared + " bytes, over the limit of " + limit);
            }
            byte[] bytes = in.readNBytes(limit + 1);
            if (bytes.length > limit) {
                throw new ApiException(413, "TOO_LARGE", "body is over the limit of " + limit + " bytes");
            }
            return bytes;
        }
    }

    /** Writes a JSON answer: a tree, or maps and lists that Jackson serializes without building a tree. */
    static void json(HttpServletResponse resp, int status, Object body) throws IOException {
        byte[] bytes = Json.MAPPER.writeValueAsBytes(body);
        resp.setStatus(status);
        resp.setContentType("application/json");
        resp.setContentLength(bytes.length);
        resp.getOutputStream().write(bytes);
    }

    /** Writes {@code {"error": CODE, "message": sentence}}, unless an answer has begun already. */
    static void answerError(HttpServletResponse resp, int status, String code, String message) throws IOException {
        if (resp.isCommitted()) {
            return;
        }
        json(resp, status, Json.MAPPER.createObjectNode().put("error", code).put("message", message));
    }
}
