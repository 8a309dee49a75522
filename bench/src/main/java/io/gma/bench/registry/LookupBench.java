package io.gma.bench.registry;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.gma.registry.Registry;
import io.gma.registry.api.RegistryClient;
import io.gma.security.NoDelaySocketFactory;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Random;
import java.util.UUID;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.Response;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;

/**
 * The registry's look-up ({@code GET /endpoints/{name}}) with many endpoints registered in PostgreSQL, beside a
 * plain Jetty 12 servlet that runs the same SELECT (the registry's: the endpoint by its primary key, its
 * attributes joined, live rows only) by JDBC through a HikariCP pool of the same size on the same database, and
 * writes the same JSON with Jackson. Both answer the same OkHttp client (TCP_NODELAY, one thread, closed loop)
 * in the same run, in passes that take turns so that drift in a shared machine falls on both; the names looked up
 * are drawn at random from all of them. Also {@code RegistryClient.lookup} with one registry URL and with two
 * (the second registry on the same database): a call that succeeds at the first URL costs no more with a list.
 *
 * <p>The endpoints (three attributes each) are written straight into the registry's tables in a schema of the
 * run's own, which is dropped afterwards: registering 100,000 through the API would take a minute and measure
 * registration, not look-up.
 */
public final class LookupBench {
    /** The series, as the figure names them. */
    public static final String REGISTRY = "registry GET /endpoints/{name}";
    public static final String PLAIN = "plain servlet, the same SELECT by JDBC";
    public static final String CLIENT_ONE = "RegistryClient.lookup, one URL";
    public static final String CLIENT_TWO = "RegistryClient.lookup, two URLs";
    /** Passes each series runs, taking turns with the others. */
    private static final int PASSES = 5;
    /** The registry's look-up statement (EndpointStore.lookup). */
    private static final String LOOKUP = "SELECT e.label, e.kind, e.domain, e.host, e.port, e.registered_at,"
            + " e.expires_at, e.owner, a.attr_key, a.attr_value FROM gma_endpoints e LEFT JOIN gma_attributes a"
            + " ON a.name = e.name WHERE e.name = ? AND e.expires_at > CURRENT_TIMESTAMP";
    /** The registry's pool size (Registry.Builder.maxConnections' default), the plain servlet's too. */
    private static final int POOL = 8;

    private LookupBench() {
    }

    /** One series' latencies in nanoseconds, and the wall time the calls took. */
    public record Series(long[] nanos, long wallNanos) {
        public double perSecond() {
            return nanos.length * 1e9 / wallNanos;
        }

        public double percentileMicros(double p) {
            return new RegistryBench.Series("", nanos, wallNanos).percentileMicros(p);
        }
    }

    /** The four series, in the order of the constants above. */
    public record Result(Series registry, Series plain, Series clientOne, Series clientTwo) {
    }

    /** Something to call once per name. */
    @FunctionalInterface
    interface Call {
        void run(String name) throws IOException;
    }

    /**
     * Measures with {@code endpoints} registered in the PostgreSQL at {@code jdbcUrl} (user and password in it),
     * {@code calls} measured look-ups per series after as many as warm-up.
     */
    public static Result run(String jdbcUrl, int endpoints, int calls) throws Exception {
        String schema = "gma_bench_" + UUID.randomUUID().toString().substring(0, 8);
        execute(jdbcUrl, "CREATE SCHEMA " + schema);
        String url = jdbcUrl + (jdbcUrl.contains("?") ? "&" : "?") + "currentSchema=" + schema;
        OkHttpClient http = new OkHttpClient.Builder().socketFactory(NoDelaySocketFactory.INSTANCE)
                .callTimeout(Duration.ofSeconds(30)).build();
        Server plain = null;
        try (Registry registry = Registry.builder().port(0).jdbc(url, "", "").build().start();
                Registry second = Registry.builder().port(0).jdbc(url, "", "").build().start();
                HikariDataSource pool = pool(url)) {
            populate(url, endpoints);
            plain = plainServer(pool);
            String plainUrl = "http://127.0.0.1:" + ((ServerConnector) plain.getConnectors()[0]).getLocalPort()
                    + "/endpoints/";
            String api = registry.url() + Registry.API_PATH + "/endpoints/";
            RegistryClient one = RegistryClient.builder(registry.url()).okHttpClient(http).build();
            RegistryClient two = RegistryClient.builder(registry.url() + "," + second.url()).okHttpClient(http)
                    .build();
            Call[] series = {name -> get(http, api + name), name -> get(http, plainUrl + name),
                name -> one.lookup(name), name -> two.lookup(name)};
            Random random = new Random(1);
            for (Call c : series) {
                measure(c, calls, endpoints, random); // warm-up: JIT, pools, PostgreSQL's caches
            }
            long[][] nanos = new long[series.length][calls];
            long[] wall = new long[series.length];
            int per = calls / PASSES;
            for (int pass = 0; pass < PASSES; pass++) {
                int n = pass == PASSES - 1 ? calls - per * pass : per;
                for (int s = 0; s < series.length; s++) {
                    Series part = measure(series[s], n, endpoints, random);
                    System.arraycopy(part.nanos(), 0, nanos[s], per * pass, n);
                    wall[s] += part.wallNanos();
                }
            }
            return new Result(new Series(nanos[0], wall[0]), new Series(nanos[1], wall[1]),
                    new Series(nanos[2], wall[2]), new Series(nanos[3], wall[3]));
        } finally {
            if (plain != null) {
                plain.stop();
            }
            http.dispatcher().executorService().shutdown();
            http.connectionPool().evictAll();
            execute(jdbcUrl, "DROP SCHEMA " + schema + " CASCADE");
        }
    }

    private static Series measure(Call call, int n, int endpoints, Random random) throws IOException {
        long[] nanos = new long[n];
        long start = System.nanoTime();
        for (int i = 0; i < n; i++) {
            String name = name(random.nextInt(endpoints));
            long t0 = System.nanoTime();
            call.run(name);
            nanos[i] = System.nanoTime() - t0;
        }
        return new Series(nanos, System.nanoTime() - start);
    }

    private static String name(int i) {
        return "e" + i + "@site" + (i % 10);
    }

    /** {@code endpoints} live for an hour, as a registration would store them, three attributes each. */
    private static void populate(String url, int endpoints) throws SQLException {
        try (Connection c = DriverManager.getConnection(url); Statement s = c.createStatement()) {
            s.execute("INSERT INTO gma_endpoints (name, label, kind, domain, host, port, lease_seconds, owner,"
                    + " registered_at, expires_at) SELECT 'e' || i || '@site' || (i % 10), 'e' || i, CASE WHEN"
                    + " i % 2 = 0 THEN 'producer' ELSE 'consumer' END, 'site' || (i % 10), '10.0.0.' || (i % 250),"
                    + " 7000 + i % 1000, 3600, 'anonymous', CURRENT_TIMESTAMP, CURRENT_TIMESTAMP + INTERVAL '1'"
                    + " HOUR FROM generate_series(0, " + (endpoints - 1) + ") AS i");
            for (String[] a : new String[][] {{"rack", "'r' || (port % 200)"}, {"metric", "'load'"},
                {"unit", "'1'"}}) {
                s.execute("INSERT INTO gma_attributes (name, attr_key, attr_value, expires_at) SELECT name, '" + a[0]
                        + "', " + a[1] + ", expires_at FROM gma_endpoints");
            }
            s.execute("ANALYZE gma_endpoints");
            s.execute("ANALYZE gma_attributes");
        }
    }

    private static HikariDataSource pool(String url) {
        HikariConfig config = new HikariConfig();
        config.setPoolName("bench-plain");
        config.setJdbcUrl(url);
        config.setMaximumPoolSize(POOL);
        config.setMinimumIdle(2);
        config.setConnectionTimeout(5_000);
        return new HikariDataSource(config);
    }

    private static void execute(String url, String sql) throws SQLException {
        try (Connection c = DriverManager.getConnection(url); Statement s = c.createStatement()) {
            s.execute(sql);
        }
    }

    private static void get(OkHttpClient http, String url) throws IOException {
        try (Response r = http.newCall(new Request.Builder().url(url).build()).execute()) {
            r.body().bytes();
            if (!r.isSuccessful()) {
                throw new IOException(url + " answered " + r.code());
            }
        }
    }

    /** The baseline: Jetty 12, one servlet, the registry's SELECT and a JSON answer of the same fields. */
    private static Server plainServer(HikariDataSource pool) throws Exception {
        ObjectMapper json = new ObjectMapper();
        return RegistryBench.plainJetty(new HttpServlet() {
            private static final long serialVersionUID = 1L;

            @Override
            protected void doGet(HttpServletRequest req, HttpServletResponse resp) throws IOException {
                String name = req.getPathInfo().substring(1);
                Map<String, Object> e = new LinkedHashMap<>();
                try (Connection c = pool.getConnection(); PreparedStatement q = c.prepareStatement(LOOKUP)) {
                    q.setString(1, name);
                    try (ResultSet rs = q.executeQuery()) {
                        if (!rs.next()) {
                            resp.sendError(404);
                            return;
                        }
                        e.put("name", name);
                        e.put("label", rs.getString(1));
                        e.put("kind", rs.getString(2));
                        e.put("domain", rs.getString(3));
                        e.put("host", rs.getString(4));
                        e.put("port", rs.getInt(5));
                        e.put("owner", rs.getString(8));
                        e.put("registeredAt", rs.getObject(6, OffsetDateTime.class).toInstant().toString());
                        e.put("expiresAt", rs.getObject(7, OffsetDateTime.class).toInstant().toString());
                        Map<String, String> attributes = new LinkedHashMap<>();
                        do {
                            if (rs.getString(9) != null) {
                                attributes.put(rs.getString(9), rs.getString(10));
                            }
                        } while (rs.next());
                        e.put("attributes", attributes);
                    }
                } catch (SQLException failed) {
                    throw new IOException(failed);
                }
                byte[] body = json.writeValueAsBytes(e);
                resp.setContentType("application/json");
                resp.setContentLength(body.length);
                resp.getOutputStream().write(body);
            }
        }, "/endpoints/*");
    }
}
