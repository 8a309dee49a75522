package io.gma.client;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import io.gma.wire.Threads;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.awaitility.core.ConditionTimeoutException;

/**
 * A plain TCP listener on 127.0.0.1 and an ephemeral port that stands where a registry or a PC servlet would be,
 * behind an {@code http://} URL, and records every byte anyone sends it: what an eavesdropper on the path would
 * see. It never answers; a connection silent for {@link #SILENCE} is hung up, so that a caller that did send
 * fails at once instead of waiting out its own timeout.
 *
 * <p>Threads: one accepts ({@code sniffer-accept}), one per connection reads ({@code sniffer-read-N}); all are
 * daemons and end with {@link #close}.
 */
public final class SniffingListener implements AutoCloseable {
    /** How long a connection may stay silent before the listener hangs up. */
    public static final Duration SILENCE = Duration.ofMillis(300);

    private final ServerSocket server;
    private final AtomicInteger connections = new AtomicInteger();
    /** Everything received on every connection, in the order read; guarded by itself. */
    private final ByteArrayOutputStream received = new ByteArrayOutputStream();
    private final List<Socket> sockets = new CopyOnWriteArrayList<>();
    private final List<Thread> readers = new CopyOnWriteArrayList<>();
    private Thread acceptor;
    private volatile boolean closed;

    private SniffingListener() throws IOException {
        server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
    }

    /** Listens on 127.0.0.1 and a port of the system's choosing, accepting on a thread of its own. */
    public static SniffingListener start() throws IOException {
        SniffingListener s = new SniffingListener();
        s.acceptor = daemon("sniffer-accept", s::accept);
        return s;
    }

    /** {@code http://127.0.0.1:<port>}: a URL that invites plaintext. */
    public String url() {
        return "http://127.0.0.1:" + server.getLocalPort();
    }

    /** How many connections were accepted so far. */
    public int connections() {
        return connections.get();
    }

    /** Every byte received so far, on every connection, as ISO-8859-1 text (one char a byte). */
    public String received() {
        synchronized (received) {
            return received.toString(StandardCharsets.ISO_8859_1);
        }
    }

    /**
     * Waits until {@code text} has been received, for up to {@code timeout}.
     *
     * @return whether it arrived in time
     */
    public boolean awaitReceived(String text, Duration timeout) throws InterruptedException {
        try {
            await().atMost(timeout).pollDelay(Duration.ZERO).pollInterval(Duration.ofMillis(20))
                    .until(() -> received().contains(text));
            return true;
        } catch (ConditionTimeoutException e) {
            return false;
        }
    }

    /**
     * Asserts that no credential, no byte at all and no connection reached this listener, all through
     * {@code period} (a window: what is checked is that nothing comes, so there is no event to wait for).
     */
    public void assertNothingReceived(Duration period) throws InterruptedException {
        await().pollDelay(Duration.ZERO).during(period).atMost(period.plusSeconds(1)).untilAsserted(() -> {
            String seen = received();
            assertFalse(seen.toLowerCase(Locale.ROOT).contains("authorization"),
                    "an Authorization header in plaintext: " + seen);
            assertFalse(seen.contains("gma2."), "a token in plaintext: " + seen);
            assertEquals("", seen, "bytes reached the listener");
            assertEquals(0, connections(), "a connection reached the listener");
        });
    }

    private void accept() {
        while (!closed) {
            Socket s;
            try {
                s = server.accept();
            } catch (IOException e) {
                return; // closed
            }
            sockets.add(s);
            readers.add(daemon("sniffer-read-" + connections.incrementAndGet(), () -> read(s)));
        }
    }

    private void read(Socket s) {
        byte[] buffer = new byte[8192];
        try (s; InputStream in = s.getInputStream()) {
            s.setSoTimeout((int) SILENCE.toMillis());
            for (int n; (n = in.read(buffer)) >= 0;) {
                synchronized (received) {
                    received.write(buffer, 0, n);
                }
            }
        } catch (SocketTimeoutException silent) {
            // hung up (the try closes it): the caller has had its say
        } catch (IOException gone) {
            // reset by the caller, or closed by close()
        }
    }

    private static Thread daemon(String name, Runnable r) {
        return Threads.start(name, r);
    }

    /** Stops listening, closes every connection, and waits for the threads to end. */
    @Override
    public void close() throws IOException, InterruptedException {
        closed = true;
        server.close();
        acceptor.join(5_000); // then no connection is added behind the loop below
        for (Socket s : sockets) {
            s.close();
        }
        for (Thread t : readers) {
            t.join(5_000);
        }
    }
}
