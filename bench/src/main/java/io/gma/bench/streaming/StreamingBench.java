package io.gma.bench.streaming;

import io.gma.bench.BenchTls;
import io.gma.client.Consumer;
import io.gma.client.Producer;
import io.gma.registry.Registry;
import io.gma.security.Security;
import io.gma.security.Tls;
import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLServerSocket;
import javax.net.ssl.SSLSocket;

/**
 * The jGMA paper's Benchmarks 3 and 4: one producer streaming to one consumer, 64 B, 1 KB and 32 KB
 * messages, messages/s and MB/s, next to raw sockets streaming the same payloads (a 4-byte length and the
 * bytes, buffered streams, a reader thread) in the same JVM. Each run: warm-up passes of each for at least
 * two seconds ({@link #WARM_UP_NANOS}), then {@link #ALTERNATED_PASSES} measured passes of each, raw and GMA
 * in turn (and the two TLS ones, when asked for), so that a change in the machine's speed during the run (the
 * raw baseline swings by half from one minute to the next here) falls on all; the medians count.
 *
 * <pre>java [-Dgma.bench.tls=true] [-Dgma.bench.cpu=true] -cp bench/target/gma-benchmarks.jar \
 *     io.gma.bench.streaming.StreamingBench
 *     [size:count ...]</pre>
 *
 * With {@code -Dgma.bench.tls=true}, each size is also streamed over TLS (tokens in HELLO), and over the JDK's
 * own TLS sockets next to the raw plaintext ones (what TLS costs without GMA), in the same run; with
 * {@code -Dgma.bench.cpu=true}, each GMA pass reports the CPU time each thread spent per message.
 */
public final class StreamingBench {
    private static final double MB = 1024.0 * 1024.0;
    /**
     * Warm-up runs at least this long: one pass of 64 B messages takes well under a second, less than the JIT
     * needs on two cores to compile a whole send and receive path.
     */
    public static final long WARM_UP_NANOS = 2_000_000_000L;

    /** With {@code -Dgma.bench.cpu=true}: each GMA line is followed by the CPU each thread spent a message. */
    private static final boolean CPU = Boolean.getBoolean("gma.bench.cpu");
    /** The last GMA pass's {@link ThreadCpu#perMessage} (the last measured one), when {@link #CPU}. */
    private static volatile String lastCpu = "";

    /** One timed pass: its seconds. */
    public interface Pass {
        double seconds() throws Exception;
    }

    /** Measured passes after the warm-up: their median is the result, so that one slow pass does not decide it. */
    public static final int MEASURED_PASSES = 3;

    /** Measured passes of each when raw and GMA alternate ({@link #alternated}). */
    static final int ALTERNATED_PASSES = 5;

    /**
     * Runs {@code pass} until {@link #WARM_UP_NANOS} have gone by (once at least), then {@link #MEASURED_PASSES}
     * times more: the median of their seconds.
     */
    public static double afterWarmUp(Pass pass) throws Exception {
        return alternated(MEASURED_PASSES, pass)[0];
    }

    /**
     * Warms each pass up as {@link #afterWarmUp} does, then runs them in turn, {@code rounds} times each: the
     * median of each one's seconds, in the order given.
     */
    static double[] alternated(int rounds, Pass... passes) throws Exception {
        for (Pass pass : passes) {
            long start = System.nanoTime();
            do {
                pass.seconds();
            } while (System.nanoTime() - start < WARM_UP_NANOS);
        }
        double[][] measured = new double[passes.length][rounds];
        for (int round = 0; round < rounds; round++) {
            for (int i = 0; i < passes.length; i++) {
                measured[i][round] = passes[i].seconds();
            }
        }
        double[] medians = new double[passes.length];
        for (int i = 0; i < passes.length; i++) {
            Arrays.sort(measured[i]);
            medians[i] = measured[i][rounds / 2];
        }
        return medians;
    }

    private StreamingBench() {
    }

    public static void main(String[] args) throws Exception {
        System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", "warn");
        int[][] runs = args.length == 0 ? new int[][] {{64, 2_000_000}, {1024, 1_000_000}, {32 * 1024, 40_000}}
                : new int[args.length][];
        for (int i = 0; i < args.length; i++) {
            String[] sizeAndCount = args[i].split(":");
            runs[i] = new int[] {Integer.parseInt(sizeAndCount[0]), Integer.parseInt(sizeAndCount[1])};
        }
        System.out.printf(Locale.ROOT, "streaming, one producer, one consumer; JDK %s, %d cores%n%n",
                System.getProperty("java.version"), Runtime.getRuntime().availableProcessors());
        boolean tls = BenchTls.on();
        System.out.println("| bytes | messages | raw msgs/s | raw MB/s | GMA msgs/s | GMA MB/s | msgs/s ratio |"
                + (tls ? " TLS msgs/s | TLS MB/s | TLS/plain | raw TLS msgs/s | raw TLS/raw |" : ""));
        System.out.println("|---|---|---|---|---|---|---|" + (tls ? "---|---|---|---|---|" : ""));
        try (Registry registry = Registry.builder().port(0).build().start();
                Registry secure = tls ? BenchTls.registry() : null) {
            for (int[] run : runs) {
                int size = run[0];
                int n = run[1];
                // the TLS passes, when asked for, take their turns with the others: all four ratios see one machine
                String[] cpu = {"", ""};
                List<Pass> passes = new ArrayList<>(List.of(() -> raw(size, n), () -> {
                    double s = gma(registry.url(), size, n, Security.insecure());
                    cpu[0] = lastCpu;
                    return s;
                }));
                if (tls) {
                    passes.add(() -> {
                        double s = gma(secure.url(), size, n, null);
                        cpu[1] = lastCpu;
                        return s;
                    });
                    passes.add(() -> raw(size, n, BenchTls.security("bob").tls(), BenchTls.security("alice").tls()));
                }
                double[] seconds = alternated(ALTERNATED_PASSES, passes.toArray(new Pass[0]));
                double rawRate = n / seconds[0];
                double gmaRate = n / seconds[1];
                System.out.printf(Locale.ROOT, "| %d | %,d | %,.0f | %,.0f | %,.0f | %,.0f | %.0f%% |", size, n,
                        rawRate, rawRate * size / MB, gmaRate, gmaRate * size / MB, 100 * gmaRate / rawRate);
                if (tls) {
                    double tlsRate = n / seconds[2];
                    double rawTlsRate = n / seconds[3];
                    System.out.printf(Locale.ROOT, " %,.0f | %,.0f | %.0f%% | %,.0f | %.0f%% |", tlsRate,
                            tlsRate * size / MB, 100 * tlsRate / gmaRate, rawTlsRate, 100 * rawTlsRate / rawRate);
                }
                System.out.println();
                if (CPU) {
                    System.out.printf(Locale.ROOT, "%n%d B, GMA CPU ns a message by thread: %s%n%n", size, cpu[0]);
                    if (tls) {
                        System.out.printf(Locale.ROOT, "%d B, TLS CPU ns a message by thread: %s%n%n", size, cpu[1]);
                    }
                }
            }
        }
    }

    /** Seconds to stream n payloads of size bytes over a raw socket, first write to last read. */
    public static double raw(int size, int n) throws Exception {
        return raw(size, n, null, null);
    }

    /**
     * As {@link #raw(int, int)}, over the JDK's own TLS sockets (the protocols and cipher suites GMA allows) when
     * both {@code serverTls} and {@code clientTls} are given: what the platform's TLS costs, without GMA. Each
     * side is TLS when its own is given, so that a test can show that the TLS side refuses a plaintext one.
     */
    static double raw(int size, int n, Tls serverTls, Tls clientTls) throws Exception {
        InetAddress loopback = InetAddress.getLoopbackAddress();
        try (ServerSocket server = serverTls == null ? new ServerSocket(0, 1, loopback)
                : tls((SSLServerSocket) serverTls.context().getServerSocketFactory().createServerSocket(0, 1,
                        loopback))) {
            CountDownLatch done = new CountDownLatch(1);
            IOException[] failed = {null};
            Thread reader = new Thread(() -> {
                try (Socket s = server.accept();
                        DataInputStream in = new DataInputStream(new BufferedInputStream(s.getInputStream(), 65536))) {
                    byte[] buf = new byte[size];
                    for (int i = 0; i < n; i++) {
                        in.readFully(buf, 0, in.readInt());
                    }
                } catch (IOException e) {
                    failed[0] = e; // the writer reports it, rather than wait out its five minutes
                } finally {
                    done.countDown();
                }
            });
            reader.start();
            byte[] payload = new byte[size];
            try (Socket s = clientTls == null ? new Socket(server.getInetAddress(), server.getLocalPort())
                    : tls((SSLSocket) clientTls.socketFactory().createSocket("localhost", server.getLocalPort()))) {
                s.setTcpNoDelay(true);
                DataOutputStream out = new DataOutputStream(new BufferedOutputStream(s.getOutputStream(), 65536));
                long start = System.nanoTime(); // connected: as for GMA, NATS and JGroups, setup is not timed
                for (int i = 0; i < n; i++) {
                    out.writeInt(size);
                    out.write(payload);
                }
                out.flush();
                if (!done.await(5, TimeUnit.MINUTES)) {
                    throw new IllegalStateException("raw stream of " + n + " messages of " + size
                            + " bytes did not finish in 5 minutes");
                }
                if (failed[0] != null) {
                    throw new IOException("the raw stream's reader failed: " + failed[0].getMessage(), failed[0]);
                }
                return (System.nanoTime() - start) / 1e9;
            }
        }
    }

    private static SSLServerSocket tls(SSLServerSocket socket) {
        SSLParameters p = socket.getSSLParameters();
        p.setProtocols(Tls.protocols());
        p.setCipherSuites(Tls.cipherSuites());
        p.setUseCipherSuitesOrder(true);
        socket.setSSLParameters(p);
        return socket;
    }

    /** The client's socket, handshaken, so that as for plaintext the clock starts on a connected socket. */
    private static SSLSocket tls(SSLSocket socket) throws IOException {
        SSLParameters p = socket.getSSLParameters();
        p.setProtocols(Tls.protocols());
        p.setCipherSuites(Tls.cipherSuites());
        p.setEndpointIdentificationAlgorithm("HTTPS");
        socket.setSSLParameters(p);
        socket.startHandshake();
        return socket;
    }

    /**
     * Seconds to stream n messages from a producer to a consumer, first send to last delivery, on a link that
     * is up: one message goes first, untimed, so that the registry lookup, the connection and HELLO/WELCOME
     * are not counted (the raw baseline connects before its clock starts too, and the NATS and JGroups peers
     * are connected throughout).
     */
    public static double gma(String registry, int size, int n) throws Exception {
        return gma(registry, size, n, Security.insecure());
    }

    /**
     * As {@link #gma(String, int, int)}, with {@code security} on both endpoints; null for TLS and tokens
     * ({@link BenchTls}).
     */
    static double gma(String registry, int size, int n, Security security) throws Exception {
        // the handler runs on the sink's one link thread, as the raw reader's loop runs on one: a plain count
        long[] received = {0};
        CountDownLatch linked = new CountDownLatch(1);
        CountDownLatch done = new CountDownLatch(1);
        try (Consumer sink = Consumer.builder().registry(registry).domain("lan").label("sink").onMessage(m -> {
            long got = ++received[0];
            if (got == 1) {
                linked.countDown();
            } else if (got == n + 1) {
                done.countDown();
            }
        }).security(security != null ? security : BenchTls.security("bob")).build();
                Producer source = Producer.builder().registry(registry).domain("lan").label("source")
                        .security(security != null ? security : BenchTls.security("alice")).build()) {
            byte[] payload = new byte[size];
            source.send(sink.name(), payload);
            if (!linked.await(30, TimeUnit.SECONDS)) {
                throw new IllegalStateException(source.name() + " could not reach " + sink.name() + " in 30 s");
            }
            ThreadCpu cpu = CPU ? new ThreadCpu() : null;
            long start = System.nanoTime();
            for (int i = 0; i < n; i++) {
                source.send(sink.name(), payload);
            }
            if (!done.await(5, TimeUnit.MINUTES)) {
                throw new IllegalStateException("only " + (received[0] - 1) + " of " + n + " messages of " + size
                        + " bytes arrived in 5 minutes");
            }
            double seconds = (System.nanoTime() - start) / 1e9;
            if (cpu != null) {
                lastCpu = cpu.perMessage(n);
            }
            return seconds;
        }
    }
}
