package io.gma.bench.tunnel;

import io.gma.bench.pingpong.PingPongBench;
import io.gma.client.Consumer;
import io.gma.client.Producer;
import io.gma.examples.Ping;
import io.gma.examples.Pong;
import io.gma.pcservlet.PcServer;
import io.gma.registry.Registry;
import io.gma.security.NoDelaySocketFactory;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.time.Duration;
import java.util.Locale;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import okhttp3.MediaType;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;
import org.eclipse.jetty.ee10.servlet.ServletContextHandler;
import org.eclipse.jetty.ee10.servlet.ServletHolder;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;

/**
 * Cross-domain traffic through two PC servlets (the jGMA paper's Figure 7: sockets against HTTP POST), next to
 * a raw HTTP baseline measured in the same JVM: Jetty 12 echoing POST bodies to OkHttp, as the PC servlets
 * use them.
 *
 * <pre>
 *   latency:    ping (west) -uplink-&gt; PC west -POST-&gt; PC east -uplink-&gt; pong (east), and the reply back the
 *               same way: two POSTs a round trip; baseline: one POST echoed
 *   throughput: a producer in east streams to a consumer in west; baseline: the same bytes POSTed in
 *               bodies of 1 MiB, back to back
 * </pre>
 *
 * <pre>java -cp bench/target/gma-benchmarks.jar io.gma.bench.tunnel.TunnelBench [rounds] [lingerMillis]</pre>
 */
public final class TunnelBench {
    private static final MediaType BYTES = MediaType.get("application/octet-stream");
    private static final double MB = 1024.0 * 1024.0;

    private TunnelBench() {
    }

    public static void main(String[] args) throws Exception {
        System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", "warn");
        int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 2_000;
        Duration linger = Duration.ofMillis(args.length > 1 ? Long.parseLong(args[1]) : 0);
        OkHttpClient http = new OkHttpClient.Builder().socketFactory(NoDelaySocketFactory.INSTANCE).build();
        try (Registry registry = Registry.builder().port(0).build().start();
                PcServer east = PcServer.builder("east", registry.url()).linger(linger).compression("off")
                        .start();
                PcServer west = PcServer.builder("west", registry.url()).linger(linger).compression("off")
                        .start();
                Producer pong = Pong.start(registry.url(), "east", "pong", east.uplink());
                Ping ping = Ping.start(registry.url(), "west", west.uplink());
                Echo echo = new Echo()) {
            System.out.printf(Locale.ROOT, "cross-domain through two PC servlets (linger %d ms), %d round trips per"
                    + " size after as many warm-up ones; JDK %s, %d cores%n%n", linger.toMillis(), rounds,
                    System.getProperty("java.version"), Runtime.getRuntime().availableProcessors());
            System.out.println("| bytes | raw POST p50 us | p99 us | GMA blocking p50 us | p99 us | p50 ratio |");
            System.out.println("|---|---|---|---|---|---|");
            for (int size : new int[] {64, 1024, 16 * 1024, 64 * 1024}) {
                echo.run(http, size, rounds);
                long[] raw = echo.run(http, size, rounds);
                ping.run(pong.name(), rounds, size, true);
                long[] gma = ping.run(pong.name(), rounds, size, true);
                System.out.printf(Locale.ROOT, "| %d | %.1f | %.1f | %.1f | %.1f | %.2fx |%n", size,
                        PingPongBench.pct(raw, 0.5), PingPongBench.pct(raw, 0.99), PingPongBench.pct(gma, 0.5),
                        PingPongBench.pct(gma, 0.99), PingPongBench.pct(gma, 0.5) / PingPongBench.pct(raw, 0.5));
            }
            System.out.println();
            System.out.println("| bytes | messages | raw POST MB/s | GMA msgs/s | GMA MB/s | MB/s ratio |");
            System.out.println("|---|---|---|---|---|---|");
            for (int[] run : new int[][] {{64, 200_000}, {1024, 100_000}, {32 * 1024, 10_000}}) {
                int size = run[0];
                int n = run[1];
                echo.stream(http, size, n);
                double rawSeconds = echo.stream(http, size, n);
                stream(registry.url(), east, west, size, n);
                double gmaSeconds = stream(registry.url(), east, west, size, n);
                double rawMb = (double) size * n / MB / rawSeconds;
                double gmaMb = (double) size * n / MB / gmaSeconds;
                System.out.printf(Locale.ROOT, "| %d | %,d | %,.0f | %,.0f | %,.1f | %.0f%% |%n", size, n, rawMb,
                        n / gmaSeconds, gmaMb, 100 * gmaMb / rawMb);
            }
        } finally {
            http.dispatcher().executorService().shutdown();
            http.connectionPool().evictAll();
        }
    }

    /** Seconds from the first send to the last delivery of n messages from east's domain to west's. */
    public static double stream(String registry, PcServer east, PcServer west, int size, int n) throws Exception {
        AtomicLong received = new AtomicLong();
        CountDownLatch done = new CountDownLatch(1);
        try (Consumer sink = Consumer.builder().registry(registry).domain(west.domain()).pcServlet(west.uplink())
                .label("sink").onMessage(m -> {
                    if (received.incrementAndGet() == n) {
                        done.countDown();
                    }
                }).build();
                Producer source = Producer.builder().registry(registry).domain(east.domain()).pcServlet(east.uplink())
                        .label("source").build()) {
            byte[] payload = new byte[size];
            long start = System.nanoTime();
            for (int i = 0; i < n; i++) {
                source.send(sink.name(), payload);
            }
            if (!done.await(5, TimeUnit.MINUTES)) {
                throw new IllegalStateException("only " + received.get() + " of " + n + " arrived");
            }
            return (System.nanoTime() - start) / 1e9;
        }
    }

    /** The baseline: Jetty 12 on loopback echoing each POST body; OkHttp with TCP_NODELAY posting. */
    public static final class Echo implements AutoCloseable {
        private final Server server = new Server();
        private final String url;

        /** Starts Jetty on an ephemeral loopback port. */
        public Echo() throws Exception {
            ServerConnector connector = new ServerConnector(server);
            connector.setHost("127.0.0.1");
            server.addConnector(connector);
            ServletContextHandler context = new ServletContextHandler("/");
            context.addServlet(new ServletHolder(new HttpServlet() {
                private static final long serialVersionUID = 1L;

                @Override
                protected void doPost(HttpServletRequest req, HttpServletResponse resp) throws IOException {
                    byte[] body = req.getInputStream().readAllBytes();
                    boolean echo = req.getHeader("X-Echo") != null;
                    resp.setContentType("application/octet-stream");
                    resp.setContentLength(echo ? body.length : 0);
                    if (echo) {
                        resp.getOutputStream().write(body);
                    }
                }
            }), "/*");
            server.setHandler(context);
            server.start();
            url = "http://127.0.0.1:" + connector.getLocalPort() + "/echo";
        }

        /** The loopback port it listens on. */
        public int port() {
            return Integer.parseInt(url.substring(url.lastIndexOf(':') + 1, url.lastIndexOf('/')));
        }

        /** Round-trip times of n POSTs of size bytes echoed back, in nanoseconds, in the order measured. */
        public long[] run(OkHttpClient http, int size, int n) throws IOException {
            return run(http, url, size, n);
        }

        /** As {@link #run(OkHttpClient, int, int)}, posted to {@code url} (this echo behind a proxy, say). */
        public long[] run(OkHttpClient http, String url, int size, int n) throws IOException {
            byte[] payload = new byte[size];
            long[] rtt = new long[n];
            for (int i = 0; i < n; i++) {
                long start = System.nanoTime();
                try (Response r = http.newCall(new Request.Builder().url(url).header("X-Echo", "1")
                        .post(RequestBody.create(payload, BYTES)).build()).execute()) {
                    if (r.body().bytes().length != size) {
                        throw new IOException("echo of " + size + " bytes came back short");
                    }
                }
                rtt[i] = System.nanoTime() - start;
            }
            return rtt;
        }

        /** Seconds to POST n payloads of size bytes, 1 MiB to a body, one POST after another. */
        public double stream(OkHttpClient http, int size, int n) throws IOException {
            return stream(http, url, size, n);
        }

        /** As {@link #stream(OkHttpClient, int, int)}, posted to {@code url} (this echo behind a proxy, say). */
        public double stream(OkHttpClient http, String url, int size, int n) throws IOException {
            int perBody = Math.max(1, (1 << 20) / size);
            byte[] body = new byte[perBody * size];
            long start = System.nanoTime();
            for (int sent = 0; sent < n; sent += perBody) {
                int count = Math.min(perBody, n - sent);
                try (Response r = http.newCall(new Request.Builder().url(url).post(RequestBody.create(body, BYTES, 0,
                        count * size)).build()).execute()) {
                    r.body().bytes();
                }
            }
            return (System.nanoTime() - start) / 1e9;
        }

        @Override
        public void close() throws Exception {
            server.stop();
        }
    }
}
