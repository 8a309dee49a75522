package io.gma.client;

import io.gma.wire.Command;
import io.gma.wire.Message;
import io.gma.wire.Packed;
import io.gma.wire.StreamDecoder;
import io.gma.wire.Threads;
import io.gma.wire.WireCodec;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.SSLSocketFactory;

/**
 * A flood of peers that never authenticate, for tests of what a listener spends on them: each opens a
 * connection, does the TLS handshake (trusting the test CA; a secured listener refuses plaintext), then sends
 * the 20 bytes of a HELLO header announcing 16 MiB of data and nothing more, and holds the connection until
 * {@link #close()}. All handshakes are done before the first header goes out, so that every connection is
 * pending at once. The connections come from {@link #SOURCES} loopback addresses (127.0.0.2 and on, where the
 * system has them), so that the cap per address does not refuse them before they cost the listener anything.
 */
public final class PreAuthFlood implements AutoCloseable {
    /** Source addresses the connections are spread over. */
    public static final int SOURCES = 4;
    /** The answer a listener gives the header, with its limit before the handshake is over. */
    public static final String TOO_LARGE = "TOO_LARGE dataLength 16777216 exceeds 4096, the limit until the"
            + " handshake is over";

    private final List<Socket> held = Collections.synchronizedList(new ArrayList<>());
    private final ExecutorService pool = Executors.newFixedThreadPool(32, Threads.named("pre-auth-flood"));

    /**
     * How the connections ended, each counted once: what the listener answered (its ERROR's text), or
     * {@code refused before the header} (closed at once or during TLS: over a cap), {@code closed without an
     * answer}, {@code still open} (after the read timeout).
     */
    public record Outcome(Map<String, Integer> byAnswer, long handshakesMillis) {
        public int count(String answer) {
            return byAnswer.getOrDefault(answer, 0);
        }
    }

    /** The 20 bytes of a HELLO header from {@code from} announcing 16 MiB of data. */
    public static byte[] hugeHelloHeader(String from) {
        byte[] header = Packed.make(0, Command.HELLO, from, "", new byte[0]);
        ByteBuffer.wrap(header).putInt(16, 16 << 20);
        return Arrays.copyOf(header, 20);
    }

    /** Loopback addresses to connect from: 127.0.0.2 and on where they can be bound, else the default one. */
    private static List<InetAddress> sources() throws IOException {
        List<InetAddress> sources = new ArrayList<>();
        for (int i = 0; i < SOURCES; i++) {
            InetAddress a = InetAddress.getByAddress(new byte[] {127, 0, 0, (byte) (2 + i)});
            try (Socket probe = new Socket()) {
                probe.bind(new InetSocketAddress(a, 0));
                sources.add(a);
            } catch (IOException notHere) {
                return List.of(InetAddress.getLoopbackAddress());
            }
        }
        return sources;
    }

    /**
     * Floods 127.0.0.1:{@code port} with {@code connections} connections over TLS from {@code tls}, runs
     * {@code whilePending} once all have done their TLS handshake and before any header goes out, and waits up
     * to {@code readMillis} for each answer.
     */
    public Outcome run(SSLSocketFactory tls, int port, int connections, String from, int readMillis,
            java.util.concurrent.Callable<?> whilePending) throws Exception {
        List<InetAddress> sources = sources();
        long started = System.nanoTime();
        List<Future<Socket>> opening = new ArrayList<>();
        for (int i = 0; i < connections; i++) {
            InetAddress source = sources.get(i % sources.size());
            opening.add(pool.submit(() -> {
                SSLSocket s = (SSLSocket) tls.createSocket(InetAddress.getLoopbackAddress(), port, source, 0);
                held.add(s);
                s.startHandshake();
                return s;
            }));
        }
        Map<String, Integer> byAnswer = new TreeMap<>();
        List<Socket> handshaken = new ArrayList<>();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        for (Future<Socket> f : opening) {
            try {
                handshaken.add(f.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS));
            } catch (java.util.concurrent.ExecutionException refused) {
                byAnswer.merge("refused before the header", 1, Integer::sum);
            } catch (java.util.concurrent.TimeoutException stuck) {
                f.cancel(true);
                byAnswer.merge("no TLS handshake within 30 s", 1, Integer::sum);
            }
        }
        long handshakesMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
        whilePending.call();
        byte[] header = hugeHelloHeader(from);
        List<Future<String>> answers = new ArrayList<>();
        for (Socket s : handshaken) {
            answers.add(pool.submit(() -> {
                try {
                    s.getOutputStream().write(header);
                    s.getOutputStream().flush();
                } catch (IOException closed) {
                    return "refused before the header";
                }
                return answer(s, readMillis);
            }));
        }
        deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(readMillis + 10_000L);
        for (Future<String> f : answers) {
            String answer;
            try {
                answer = f.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
            } catch (java.util.concurrent.TimeoutException stuck) {
                f.cancel(true);
                answer = "still open";
            }
            byAnswer.merge(answer, 1, Integer::sum);
        }
        return new Outcome(byAnswer, handshakesMillis);
    }

    /** The text of the first message the listener sent, or how the connection ended without one. */
    private static String answer(Socket s, int readMillis) throws IOException {
        s.setSoTimeout(readMillis);
        StreamDecoder decoder = WireCodec.standard().newStreamDecoder();
        List<Message> got = new ArrayList<>();
        byte[] buf = new byte[4096];
        InputStream in = s.getInputStream();
        try {
            for (int n; got.isEmpty() && (n = in.read(buf)) >= 0;) {
                decoder.feed(buf, 0, n, got::add);
            }
        } catch (SocketTimeoutException stillOpen) {
            return "still open";
        } catch (IOException closed) {
            // a reset, or TLS ended without close_notify: closed (ProtocolException: it sent garbage)
        }
        return got.isEmpty() ? "closed without an answer" : got.get(0).dataAsString();
    }

    /** Closes every connection of the flood. */
    @Override
    public void close() {
        pool.shutdownNow();
        synchronized (held) {
            for (Socket s : held) {
                try {
                    s.close();
                } catch (IOException ignored) {
                    // closing anyway
                }
            }
        }
    }
}
