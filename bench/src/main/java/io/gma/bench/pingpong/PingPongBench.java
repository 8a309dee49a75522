package io.gma.bench.pingpong;

import io.gma.bench.BenchTls;
import io.gma.client.Consumer;
import io.gma.client.Incoming;
import io.gma.client.Producer;
import io.gma.examples.Ping;
import io.gma.examples.Pong;
import io.gma.registry.Registry;
import io.gma.wire.Threads;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.Arrays;
import java.util.Locale;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;

/**
 * The jGMA paper's Benchmarks 1 and 2: ping-pong round trips from 1 B to 1 MiB in powers of 4, blocking
 * (request/reply) and non-blocking (DATA answered by DATA from the handler), next to a raw Java socket
 * ping-pong (a length-prefixed frame echoed by a thread) measured the same way in the same JVM.
 *
 * <pre>java [-Dgma.bench.tls=true] -cp bench/target/gma-benchmarks.jar io.gma.bench.pingpong.PingPongBench \
 *     [rounds]</pre>
 *
 * With {@code -Dgma.bench.tls=true}, the same round trips also between two endpoints over TLS (tokens in
 * HELLO).
 */
public final class PingPongBench {
    private PingPongBench() {
    }

    public static void main(String[] args) throws Exception {
        System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", "warn");
        int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 5_000;
        try (Registry registry = Registry.builder().port(0).build().start();
                Producer pong = Pong.start(registry.url(), "lan", "pong");
                Ping ping = Ping.start(registry.url(), "lan");
                RawEcho raw = new RawEcho();
                SecurePair tls = BenchTls.on() ? new SecurePair() : null) {
            System.out.printf(Locale.ROOT, "ping-pong, %d round trips per size after as many warm-up ones (fewer"
                    + " above 64 KiB); JDK %s, %d cores%n%n", rounds, System.getProperty("java.version"),
                    Runtime.getRuntime().availableProcessors());
            System.out.println("| bytes | raw p50 us | raw p99 us | blocking p50 us | p99 us | p50 ratio"
                    + " | non-blocking p50 us | p99 us | p50 ratio |" + (tls != null ? " TLS blocking p50 us | p99 us"
                    + " | TLS non-blocking p50 us | p99 us |" : ""));
            System.out.println("|---|---|---|---|---|---|---|---|---|" + (tls != null ? "---|---|---|---|" : ""));
            for (int size = 1; size <= 1 << 20; size *= 4) {
                int n = size > 64 * 1024 ? Math.max(200, rounds / 10) : rounds;
                raw.run(size, n);
                long[] r = raw.run(size, n);
                ping.run(pong.name(), n, size, true);
                long[] b = ping.run(pong.name(), n, size, true);
                ping.run(pong.name(), n, size, false);
                long[] nb = ping.run(pong.name(), n, size, false);
                System.out.printf(Locale.ROOT, "| %d | %.1f | %.1f | %.1f | %.1f | %.2fx | %.1f | %.1f | %.2fx |",
                        size, pct(r, 0.5), pct(r, 0.99), pct(b, 0.5), pct(b, 0.99), pct(b, 0.5) / pct(r, 0.5),
                        pct(nb, 0.5), pct(nb, 0.99), pct(nb, 0.5) / pct(r, 0.5));
                if (tls != null) {
                    tls.run(n, size, true);
                    long[] tb = tls.run(n, size, true);
                    tls.run(n, size, false);
                    long[] tnb = tls.run(n, size, false);
                    System.out.printf(Locale.ROOT, " %.1f | %.1f | %.1f | %.1f |", pct(tb, 0.5), pct(tb, 0.99),
                            pct(tnb, 0.5), pct(tnb, 0.99));
                }
                System.out.println();
            }
        }
    }

    /** Nearest-rank percentile in microseconds. */
    public static double pct(long[] nanos, double p) {
        long[] sorted = nanos.clone();
        Arrays.sort(sorted);
        return sorted[Math.max(0, (int) Math.ceil(p * sorted.length) - 1)] / 1000.0;
    }

    /** Ping and pong as the examples do it, over TLS: request/reply, or DATA answered by DATA. */
    static final class SecurePair implements AutoCloseable {
        private final BlockingQueue<Incoming> echoes = new ArrayBlockingQueue<>(1024);
        private final Registry secure;
        private final Producer pong;
        private final Consumer ping;

        /** On a registry over TLS of its own: endpoints show their credentials over TLS only. */
        SecurePair() throws Exception {
            secure = BenchTls.registry();
            String registry = secure.url();
            Producer[] self = new Producer[1];
            pong = Producer.builder().registry(registry).domain("lan").label("tls-pong")
                    .security(BenchTls.security("alice")).onMessage(m -> {
                        if (m.replyExpected()) {
                            m.reply(m.data());
                        } else {
                            self[0].send(m.from(), m.data());
                        }
                    }).build();
            self[0] = pong;
            ping = Consumer.builder().registry(registry).domain("lan").label("tls-ping")
                    .security(BenchTls.security("bob")).onMessage(echoes::add).build();
        }

        long[] run(int count, int bytes, boolean blocking) throws IOException, InterruptedException {
            byte[] payload = new byte[bytes];
            long[] rtt = new long[count];
            for (int i = 0; i < count; i++) {
                long start = System.nanoTime();
                if (blocking) {
                    ping.request(pong.name(), payload, Duration.ofSeconds(30));
                } else {
                    ping.send(pong.name(), payload);
                    if (echoes.poll(30, java.util.concurrent.TimeUnit.SECONDS) == null) {
                        throw new IOException("no echo within 30 s");
                    }
                }
                rtt[i] = System.nanoTime() - start;
            }
            return rtt;
        }

        @Override
        public void close() throws Exception {
            ping.close();
            pong.close();
            secure.close();
        }
    }

    /** The baseline: a blocking socket, TCP_NODELAY, a 4-byte length and the payload, echoed by one thread. */
    public static final class RawEcho implements AutoCloseable {
        private final ServerSocket server = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
        private final Socket client;
        private final DataOutputStream out;
        private final DataInputStream in;

        /** Starts the echo thread on an ephemeral loopback port and connects to it. */
        public RawEcho() throws IOException {
            Threads.start("raw-echo", () -> {
                try (Socket s = server.accept()) {
                    s.setTcpNoDelay(true);
                    DataInputStream sin = new DataInputStream(s.getInputStream());
                    OutputStream sout = s.getOutputStream();
                    byte[] buf = new byte[4 + (1 << 20)];
                    while (true) {
                        int len = sin.readInt();
                        sin.readFully(buf, 4, len);
                        buf[0] = (byte) (len >>> 24);
                        buf[1] = (byte) (len >>> 16);
                        buf[2] = (byte) (len >>> 8);
                        buf[3] = (byte) len;
                        sout.write(buf, 0, 4 + len);
                    }
                } catch (IOException closed) {
                    // the benchmark is over
                }
            });
            client = new Socket(server.getInetAddress(), server.getLocalPort());
            client.setTcpNoDelay(true);
            out = new DataOutputStream(client.getOutputStream());
            in = new DataInputStream(client.getInputStream());
        }

        /** Round-trip times of n frames of size bytes (at most 1 MiB), in nanoseconds, in the order measured. */
        public long[] run(int size, int n) throws IOException {
            byte[] frame = new byte[4 + size];
            frame[0] = (byte) (size >>> 24);
            frame[1] = (byte) (size >>> 16);
            frame[2] = (byte) (size >>> 8);
            frame[3] = (byte) size;
            byte[] back = new byte[size];
            long[] rtt = new long[n];
            for (int i = 0; i < n; i++) {
                long start = System.nanoTime();
                out.write(frame);
                int len = in.readInt();
                in.readFully(back, 0, len);
                rtt[i] = System.nanoTime() - start;
            }
            return rtt;
        }

        @Override
        public void close() throws IOException {
            client.close();
            server.close();
        }
    }

}
