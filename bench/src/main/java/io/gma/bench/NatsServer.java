package io.gma.bench;

import java.io.File;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A {@code nats-server} process on a free loopback port, with a configuration and a log of its own in a temporary
 * directory; {@link #close} stops it (TERM, then KILL after 5 s) and removes the directory, and a shutdown hook
 * kills it if the JVM ends first (Ctrl-C).
 */
final class NatsServer implements AutoCloseable {
    /** Where Debian's package puts the server, searched after PATH. */
    private static final List<String> KNOWN_PLACES = List.of("/usr/sbin/nats-server", "/usr/bin/nats-server",
            "/usr/local/bin/nats-server");

    final int port;
    final String version;
    private final Path dir;
    private final Process process;
    private final Thread reaper;

    private NatsServer(Path binary) throws IOException, InterruptedException {
        version = versionOf(binary);
        try (ServerSocket free = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            port = free.getLocalPort();
        }
        dir = Files.createTempDirectory("gma-bench-nats");
        // max_payload above 1 MiB for the largest ping-pong; a slow consumer is one 256 MiB behind
        Path config = dir.resolve("nats.conf");
        Files.writeString(config, "listen: 127.0.0.1:" + port + "\nmax_payload: 2MB\nmax_pending: 256MB\n"
                + "write_deadline: \"30s\"\n", StandardCharsets.UTF_8);
        Path log = dir.resolve("nats-server.log");
        process = new ProcessBuilder(binary.toString(), "-c", config.toString()).redirectErrorStream(true)
                .redirectOutput(log.toFile()).start();
        reaper = new Thread(process::destroyForcibly, "gma-bench-nats-reaper");
        Runtime.getRuntime().addShutdownHook(reaper);
        try {
            awaitPort(log);
        } catch (IOException | InterruptedException e) {
            close();
            throw e;
        }
    }

    /**
     * Starts nats-server and waits until it listens; a null binary means "find it" (PATH, then Debian's places).
     *
     * @throws IOException with a one-line reason when there is no binary, or it did not start within 10 s
     */
    static NatsServer start(Path binary) throws IOException, InterruptedException {
        return new NatsServer(binary != null ? binary : find());
    }

    String url() {
        return "nats://127.0.0.1:" + port;
    }

    @Override
    public void close() {
        process.destroy();
        try {
            if (!process.waitFor(5, TimeUnit.SECONDS)) {
                process.destroyForcibly().waitFor(5, TimeUnit.SECONDS);
            }
        } catch (InterruptedException e) {
            process.destroyForcibly();
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

    private void awaitPort(Path log) throws IOException, InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (System.nanoTime() < deadline) {
            if (!process.isAlive()) {
                throw new IOException("nats-server exited with status " + process.exitValue() + ": " + tail(log));
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
