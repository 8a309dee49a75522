package io.gma.bench;

import io.nats.client.Connection;
import io.nats.client.Dispatcher;
import io.nats.client.Message;
import io.nats.client.Nats;
import io.nats.client.Options;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * NATS as a peer: a {@code nats-server} process that this class starts on a free loopback port and stops on
 * {@link #close} (or at JVM exit), and two connections of the official Java client, jnats: one requests and
 * publishes, the other replies and subscribes. Every message goes through the server: client, server, client.
 */
final class NatsPeer implements AutoCloseable {
    /** Where Debian's package puts the server, searched after PATH. */
    private static final List<String> KNOWN_PLACES = List.of("/usr/sbin/nats-server", "/usr/bin/nats-server",
            "/usr/local/bin/nats-server");
    private static final String ECHO = "gma.bench.echo";

    private final Process server;
    private final Thread reaper;
    private final Path dir;
    private final Connection requester;
    private final Connection responder;
    private final String version;
    private int streams;

    private NatsPeer(Path binary) throws IOException, InterruptedException {
        version = versionOf(binary);
        dir = Files.createTempDirectory("gma-bench-nats");
        int port;
        try (ServerSocket free = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            port = free.getLocalPort();
        }
        // max_payload above 1 MiB for the largest ping-pong; a slow consumer is one 256 MiB behind
        Path config = dir.resolve("nats.conf");
        Files.writeString(config, "listen: 127.0.0.1:" + port + "\nmax_payload: 2MB\nmax_pending: 256MB\n"
                + "write_deadline: \"30s\"\n", StandardCharsets.UTF_8);
        Path log = dir.resolve("nats-server.log");
        server = new ProcessBuilder(binary.toString(), "-c", config.toString()).redirectErrorStream(true)
                .redirectOutput(log.toFile()).start();
        reaper = new Thread(server::destroyForcibly, "gma-bench-nats-reaper");
        Runtime.getRuntime().addShutdownHook(reaper);
        Connection req = null;
        Connection rsp = null;
        try {
            awaitPort(port, log);
            Options.Builder options = new Options.Builder().server("nats://127.0.0.1:" + port)
                    .connectionTimeout(Duration.ofSeconds(5)).noReconnect();
            req = Nats.connect(options.connectionName("gma-bench-requester").build());
            rsp = Nats.connect(options.connectionName("gma-bench-responder").build());
            Connection replier = rsp;
            replier.createDispatcher(m -> replier.publish(m.getReplyTo(), m.getData())).subscribe(ECHO);
            replier.flush(Duration.ofSeconds(5));
        } catch (Exception e) {
            closeQuietly(req, rsp);
            stopServer();
            if (e instanceof IOException io) {
                throw io;
            } else if (e instanceof InterruptedException interrupted) {
                throw interrupted;
            }
            throw new IOException("nats: " + e.getMessage(), e);
        }
        requester = req;
        responder = rsp;
    }

    /**
     * Starts nats-server and connects, or says why not: null binary means "find it" (PATH, then Debian's places).
     *
     * @throws IOException with a one-line reason when there is no binary, or it did not start
     */
    static NatsPeer start(Path binary) throws IOException, InterruptedException {
        return new NatsPeer(binary != null ? binary : find());
    }

    /** The server's and the client's versions, for the summary. */
    String version() {
        return "nats-server " + version + ", jnats " + jnatsVersion();
    }

    /** The version the build pinned: the client's own constant says "development" in release jars too. */
    private static String jnatsVersion() {
        try (InputStream in = NatsPeer.class.getResourceAsStream("versions.properties")) {
            Properties p = new Properties();
            if (in != null) {
                p.load(in);
            }
            return p.getProperty("jnats", Nats.CLIENT_VERSION);
        } catch (IOException e) {
            return Nats.CLIENT_VERSION;
        }
    }

    Peer requestReply() {
        return new Peer(Peers.NATS_REQUEST, this::roundTrips, null);
    }

    Peer publishSubscribe() {
        return new Peer(Peers.NATS_PUBSUB, null, this::stream);
    }

    private long[] roundTrips(int size, int n) throws Exception {
        byte[] payload = new byte[size];
        long[] rtt = new long[n];
        for (int i = 0; i < n; i++) {
            long start = System.nanoTime();
            Message reply = requester.request(ECHO, payload, Duration.ofSeconds(30));
            if (reply == null || reply.getData().length != size) {
                throw new IOException("nats: no echo of " + size + " bytes within 30 s");
            }
            rtt[i] = System.nanoTime() - start;
        }
        return rtt;
    }

    private double stream(int size, int n) throws Exception {
        String subject = "gma.bench.stream." + (++streams);
        AtomicLong received = new AtomicLong();
        CountDownLatch done = new CountDownLatch(1);
        Dispatcher counter = responder.createDispatcher(m -> {
            if (received.incrementAndGet() == n) {
                done.countDown();
            }
        });
        // no client-side drops: the server's max_pending bounds what waits for this subscriber
        counter.setPendingLimits(-1, -1);
        counter.subscribe(subject);
        try {
            responder.flush(Duration.ofSeconds(5)); // the subscription is at the server before the first publish
            byte[] payload = new byte[size];
            long start = System.nanoTime();
            for (int i = 0; i < n; i++) {
                requester.publish(subject, payload);
            }
            if (!done.await(5, TimeUnit.MINUTES)) {
                throw new IOException("nats: only " + received.get() + " of " + n + " messages of " + size
                        + " bytes arrived in 5 minutes (dropped by the client: " + counter.getDroppedCount() + ")");
            }
            return (System.nanoTime() - start) / 1e9;
        } finally {
            responder.closeDispatcher(counter);
        }
    }

    @Override
    public void close() {
        closeQuietly(requester, responder);
        stopServer();
    }

    private void stopServer() {
        server.destroy();
        try {
            if (!server.waitFor(5, TimeUnit.SECONDS)) {
                server.destroyForcibly().waitFor(5, TimeUnit.SECONDS);
            }
        } catch (InterruptedException e) {
            server.destroyForcibly();
            Thread.currentThread().interrupt();
        }
        try {
            Runtime.getRuntime().removeShutdownHook(reaper);
        } catch (IllegalStateException shuttingDown) {
            // the hook runs anyway
        }
        try (var files = Files.list(dir)) {
            for (Path f : files.toList()) {
                Files.deleteIfExists(f);
            }
            Files.deleteIfExists(dir);
        } catch (IOException e) {
            // a temporary directory left behind is not worth failing the run for
        }
    }

    private static void closeQuietly(Connection... connections) {
        for (Connection c : connections) {
            if (c != null) {
                try {
                    c.close();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        }
    }

    private void awaitPort(int port, Path log) throws IOException, InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (System.nanoTime() < deadline) {
            if (!server.isAlive()) {
                throw new IOException("nats-server exited with status " + server.exitValue() + ": " + tail(log));
            }
            try (Socket probe = new Socket()) {
                probe.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 200);
                return;
            } catch (IOException notYet) {
                Thread.sleep(50);
            }
        }
        throw new IOException("nats-server did not listen on 127.0.0.1:" + port + " within 10 s: " + tail(log));
    }

    private static String tail(Path log) throws IOException {
        List<String> lines = Files.readAllLines(log);
        return lines.isEmpty() ? "(no output)" : lines.get(lines.size() - 1);
    }

    private static String versionOf(Path binary) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(binary.toString(), "--version").redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
        p.waitFor(5, TimeUnit.SECONDS);
        return out.replaceFirst("^nats-server:\\s*", "");
    }

    private static Path find() throws IOException {
        String path = System.getenv("PATH");
        if (path != null) {
            for (String d : path.split(File.pathSeparator)) {
                Path p = Path.of(d, "nats-server");
                if (Files.isExecutable(p)) {
                    return p;
                }
            }
        }
        for (String place : KNOWN_PLACES) {
            if (Files.isExecutable(Path.of(place))) {
                return Path.of(place);
            }
        }
        throw new IOException("no nats-server on PATH nor in " + String.join(", ", KNOWN_PLACES)
                + " (Debian: apt-get install nats-server; or --nats-server PATH)");
    }
}
