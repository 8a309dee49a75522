package io.gma.bench.registry;

import io.gma.registry.Registry;
import io.gma.registry.api.Kind;
import io.gma.registry.api.Registration;
import io.gma.registry.api.RegistryClient;
import io.gma.security.NoDelaySocketFactory;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Random;
import okhttp3.HttpUrl;
import okhttp3.MediaType;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;
import org.eclipse.jetty.ee10.servlet.ServletContextHandler;
import org.eclipse.jetty.ee10.servlet.ServletHolder;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.util.thread.QueuedThreadPool;

/**
 * The registry with 10,000 live endpoints: registrations, look-ups and a typical query, each next to a
 * plain Jetty servlet answering a fixed JSON body, through the same OkHttp client in the same run. One
 * client thread, closed loop: each call's latency is recorded, throughput is calls over wall time.
 *
 * <pre>java -cp bench/target/gma-benchmarks.jar io.gma.bench.registry.RegistryBench [endpoints] [calls]</pre>
 */
public final class RegistryBench {
    private static final MediaType JSON = MediaType.get("application/json");
    private static final MediaType SQL = MediaType.get("text/plain; charset=utf-8");
    static final String QUERY = "SELECT p.name, p.host, p.port FROM producers p JOIN attributes a ON a.name = p.name"
            + " WHERE p.domain = 'site4' AND a.key = 'rack' AND a.value = 'r24'";

    private RegistryBench() {
    }

    /** Latencies of one measured series, in nanoseconds, and the wall time it took. */
    record Series(String name, long[] nanos, long wallNanos) {
        double perSecond() {
            return nanos.length * 1e9 / wallNanos;
        }

        double percentileMicros(double p) {
            long[] sorted = nanos.clone();
            Arrays.sort(sorted);
            // nearest rank: the smallest value with at least p of the samples at or below it
            int rank = (int) Math.ceil(p * sorted.length);
            return sorted[Math.max(0, rank - 1)] / 1000.0;
        }
    }

    @FunctionalInterface
    interface Call {
        void run(int i) throws IOException;
    }

    public static void main(String[] args) throws Exception {
        System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", "warn");
        int endpoints = args.length > 0 ? Integer.parseInt(args[0]) : 10_000;
        int calls = args.length > 1 ? Integer.parseInt(args[1]) : 20_000;
        OkHttpClient http = new OkHttpClient.Builder().socketFactory(NoDelaySocketFactory.INSTANCE)
                .callTimeout(Duration.ofSeconds(30)).build();
        Server plain = plainServer();
        String plainUrl = "http://127.0.0.1:" + ((ServerConnector) plain.getConnectors()[0]).getLocalPort() + "/plain";
        try (Registry registry = Registry.builder().port(0).defaultLease(Duration.ofMinutes(30)).build().start()) {
            String api = registry.url() + Registry.API_PATH;
            RegistryClient client = RegistryClient.builder(registry.url()).okHttpClient(http).build();
            List<String> names = new ArrayList<>(endpoints);
            String body = "{\"label\":\"cpu\",\"kind\":\"producer\",\"domain\":\"site1\",\"host\":\"10.0.0.1\","
                    + "\"port\":7000,\"attributes\":{\"rack\":\"r1\",\"metric\":\"load\",\"unit\":\"1\"}}";

            Series register = measure("register (POST /endpoints)", endpoints, i -> names.add(client.register(
                    Registration.builder(i % 2 == 0 ? Kind.PRODUCER : Kind.CONSUMER, "e" + i, "site" + (i % 10))
                            .host("10.0.0." + (i % 250)).port(7000 + i % 1000).attribute("rack", "r" + (i % 200))
                            .attribute("metric", "load").attribute("unit", "1").build()).name()));
            Series registerBase = measure("plain servlet POST", endpoints, i -> post(http, plainUrl, body));

            Random random = new Random(1);
            Series warm = measure("warm-up", calls, i -> get(http, api + "/endpoints/"
                    + names.get(random.nextInt(names.size()))));
            measure("warm-up", calls, i -> get(http, plainUrl));
            Series lookup = measure("look-up (GET /endpoints/{name})", calls, i -> get(http, api + "/endpoints/"
                    + names.get(random.nextInt(names.size()))));
            Series lookupBase = measure("plain servlet GET", calls, i -> get(http, plainUrl));

            HttpUrl queryUrl = HttpUrl.get(api + "/query");
            int rows = client.query(QUERY).rows().size();
            measure("warm-up", calls / 5, i -> post(http, queryUrl.toString(), QUERY, SQL));
            Series query = measure("typical query (POST /query, " + rows + " rows)", calls,
                    i -> post(http, queryUrl.toString(), QUERY, SQL));
            Series queryBase = measure("plain servlet GET", calls, i -> get(http, plainUrl));

            System.out.println();
            System.out.printf(Locale.ROOT, "%d live endpoints, %d measured calls per series after %d warm-up calls;"
                    + " JDK %s, %d cores%n%n", endpoints, calls, warm.nanos().length,
                    System.getProperty("java.version"), Runtime.getRuntime().availableProcessors());
            System.out.println("| operation | calls/s | p50 us | p99 us | baseline: plain servlet, calls/s | p50 us"
                    + " | p99 us | p50 ratio |");
            System.out.println("|---|---|---|---|---|---|---|---|");
            row(register, registerBase);
            row(lookup, lookupBase);
            row(query, queryBase);
        } finally {
            plain.stop();
            http.dispatcher().executorService().shutdown();
            http.connectionPool().evictAll();
        }
    }

    private static void row(Series s, Series base) {
        System.out.printf(Locale.ROOT, "| %s | %,.0f | %.0f | %.0f | %,.0f | %.0f | %.0f | %.2fx |%n", s.name(),
                s.perSecond(), s.percentileMicros(0.50), s.percentileMicros(0.99), base.perSecond(),
                base.percentileMicros(0.50), base.percentileMicros(0.99),
                s.percentileMicros(0.50) / base.percentileMicros(0.50));
    }

    private static Series measure(String name, int n, Call call) throws IOException {
        long[] nanos = new long[n];
        long start = System.nanoTime();
        for (int i = 0; i < n; i++) {
            long t0 = System.nanoTime();
            call.run(i);
            nanos[i] = System.nanoTime() - t0;
        }
        return new Series(name, nanos, System.nanoTime() - start);
    }

    private static void get(OkHttpClient http, String url) throws IOException {
        execute(http, new Request.Builder().url(url).build());
    }

    private static void post(OkHttpClient http, String url, String body) throws IOException {
        post(http, url, body, JSON);
    }

    private static void post(OkHttpClient http, String url, String body, MediaType type) throws IOException {
        execute(http, new Request.Builder().url(url).post(RequestBody.create(body, type)).build());
    }

    private static void execute(OkHttpClient http, Request request) throws IOException {
        try (Response r = http.newCall(request).execute()) {
            r.body().bytes();
            if (!r.isSuccessful()) {
                throw new IOException(request.url() + " answered " + r.code());
            }
        }
    }

    /** The baseline: Jetty 12 and one servlet answering a fixed body like a look-up's. */
    private static Server plainServer() throws Exception {
        byte[] answer = ("{\"name\":\"e1-abcdef@site1\",\"label\":\"e1\",\"kind\":\"consumer\",\"domain\":\"site1\","
                + "\"host\":\"10.0.0.1\",\"port\":7001,\"registeredAt\":\"2026-11-21T08:00:00Z\",\"expiresAt\":"
                + "\"2026-11-21T08:30:00Z\",\"attributes\":{\"rack\":\"r1\",\"metric\":\"load\",\"unit\":\"1\"}}")
                .getBytes(StandardCharsets.UTF_8);
        return plainJetty(new HttpServlet() {
            private static final long serialVersionUID = 1L;

            @Override
            protected void service(HttpServletRequest req, HttpServletResponse resp) throws IOException {
                req.getInputStream().readAllBytes();
                resp.setStatus(req.getMethod().equals("POST") ? 201 : 200);
                resp.setContentType("application/json");
                resp.setContentLength(answer.length);
                resp.getOutputStream().write(answer);
            }
        }, "/plain");
    }

    /**
     * A baseline's server, started: Jetty 12 on an ephemeral loopback port with the registry's pool size (64
     * threads), {@code servlet} at {@code path} and nothing else.
     */
    static Server plainJetty(HttpServlet servlet, String path) throws Exception {
        Server server = new Server(new QueuedThreadPool(64, 4));
        ServerConnector connector = new ServerConnector(server);
        connector.setHost("127.0.0.1");
        server.addConnector(connector);
        ServletContextHandler context = new ServletContextHandler("/");
        context.addServlet(new ServletHolder(servlet), path);
        server.setHandler(context);
        server.start();
        return server;
    }
}
