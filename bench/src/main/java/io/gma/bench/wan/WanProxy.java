package io.gma.bench.wan;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.Arrays;
import java.util.Set;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

/**
 * A TCP proxy on loopback that behaves as a WAN link would: each byte it carries arrives a one-way delay after it
 * left the link, and each direction carries at most a bandwidth, shared by every connection through the proxy (a
 * link's capacity is the link's, not a connection's). {@link #cutAll} closes every connection at once, as a link
 * that drops does. This kernel has no netem; this is its stand-in for the benchmarks (issue 26).
 *
 * <p>The model: a chunk read from one side is serialized onto its direction's link after the chunks before it
 * ({@code bytes * 8 / bitsPerSecond}), and written to the other side a delay after its last byte was serialized.
 * Each direction of a connection buffers at most {@link #MAX_BUFFERED_BYTES}; past that the proxy stops reading,
 * and TCP pushes back on the sender as a full window would.
 */
public final class WanProxy implements AutoCloseable {
    /** Bytes a direction of one connection holds before the proxy stops reading it: above a 100 Mbit/s x 200 ms BDP. */
    static final int MAX_BUFFERED_BYTES = 4 << 20;
    /** Read at most this much at a time: 1.3 ms at 100 Mbit/s, so that a chunk's bytes do not bunch up. */
    private static final int CHUNK = 16 << 10;
    private static final byte[] END = new byte[0];

    /**
     * What the link does: a one-way delay (each direction) and a bandwidth in bits per second (each direction;
     * 0: no limit).
     */
    public record Link(Duration oneWayDelay, long bitsPerSecond) {
        public Link {
            if (oneWayDelay.isNegative()) {
                throw new IllegalArgumentException("oneWayDelay " + oneWayDelay + " is negative");
            }
            if (bitsPerSecond < 0) {
                throw new IllegalArgumentException("bitsPerSecond " + bitsPerSecond + " is negative");
            }
        }

        @Override
        public String toString() {
            return oneWayDelay.toMillis() + " ms one-way, " + (bitsPerSecond == 0 ? "no rate limit"
                    : bitsPerSecond / 1_000_000 + " Mbit/s");
        }
    }

    private final Link link;
    private final ServerSocket server;
    private final ExecutorService threads;
    private final Set<Socket> open = ConcurrentHashMap.newKeySet();
    /** Where the link serializes next, per direction (System.nanoTime): toward the target, and back. */
    private final Wire toTarget = new Wire();
    private final Wire back = new Wire();
    private volatile int targetPort = -1;
    private volatile boolean closed;

    private WanProxy(Link link) throws IOException {
        this.link = link;
        this.server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        AtomicInteger n = new AtomicInteger();
        this.threads = Executors.newCachedThreadPool(r -> {
            Thread t = new Thread(r, "wan-proxy-" + server.getLocalPort() + "-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        });
        threads.execute(this::accept);
    }

    /** A proxy listening on an ephemeral loopback port; it forwards nothing until {@link #target} is set. */
    public static WanProxy start(Link link) throws IOException {
        return new WanProxy(link);
    }

    /** The loopback port it listens on. */
    public int port() {
        return server.getLocalPort();
    }

    /** {@code http://127.0.0.1:<port>}: the URL a PC servlet behind it registers as its public one. */
    public String url() {
        return "http://" + server.getInetAddress().getHostAddress() + ":" + port();
    }

    /** Forwards new connections to {@code port} on loopback. */
    public WanProxy target(int port) {
        this.targetPort = port;
        return this;
    }

    public Link link() {
        return link;
    }

    /** Closes every connection through it, as a link that drops does; new ones are taken as before. */
    public int cutAll() {
        int n = 0;
        for (Socket s : open) {
            closeQuietly(s);
            n++;
        }
        return n;
    }

    private void accept() {
        while (!closed) {
            Socket client;
            try {
                client = server.accept();
            } catch (IOException e) {
                return; // closed
            }
            int port = targetPort;
            if (port < 0) {
                closeQuietly(client);
                continue;
            }
            Socket target = new Socket();
            try {
                target.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 5_000);
                client.setTcpNoDelay(true);
                target.setTcpNoDelay(true);
            } catch (IOException e) {
                closeQuietly(client);
                closeQuietly(target);
                continue;
            }
            open.add(client);
            open.add(target);
            AtomicInteger directions = new AtomicInteger(2);
            Runnable ended = () -> {
                if (directions.decrementAndGet() == 0) {
                    closeQuietly(client);
                    closeQuietly(target);
                    open.remove(client);
                    open.remove(target);
                }
            };
            pipe(client, target, toTarget, ended);
            pipe(target, client, back, ended);
        }
    }

    /**
     * One direction of a connection: a reader that stamps chunks, a writer that lets each out on time; {@code
     * ended} is run once the direction is over (the far side closed it, or either socket failed).
     */
    private void pipe(Socket from, Socket to, Wire wire, Runnable ended) {
        BlockingQueue<Chunk> queue = new ArrayBlockingQueue<>(MAX_BUFFERED_BYTES / CHUNK);
        threads.execute(() -> {
            try (InputStream in = from.getInputStream()) {
                while (true) {
                    byte[] buffer = new byte[CHUNK];
                    int n = in.read(buffer);
                    byte[] bytes = n < 0 ? END : n == buffer.length ? buffer : Arrays.copyOf(buffer, n);
                    queue.put(new Chunk(bytes, wire.deliverAt(Math.max(n, 0), link)));
                    if (n < 0) {
                        return;
                    }
                }
            } catch (IOException | InterruptedException e) {
                queue.offer(new Chunk(END, System.nanoTime()));
            }
        });
        threads.execute(() -> {
            try {
                OutputStream out = to.getOutputStream();
                while (true) {
                    Chunk c = queue.take();
                    for (long wait; (wait = c.at - System.nanoTime()) > 0;) {
                        LockSupport.parkNanos(wait);
                    }
                    if (c.bytes == END) {
                        to.shutdownOutput();
                        break;
                    }
                    out.write(c.bytes);
                }
            } catch (IOException | InterruptedException e) {
                closeQuietly(from);
                closeQuietly(to);
            } finally {
                queue.clear(); // a reader waiting for room goes on to find its socket closed
                ended.run();
            }
        });
    }

    private record Chunk(byte[] bytes, long at) {
    }

    /** One direction of the link: when it is free to serialize the next byte. */
    private static final class Wire {
        private long free;

        /** When {@code bytes} read now come out of the far end (System.nanoTime). */
        synchronized long deliverAt(int bytes, Link link) {
            long now = System.nanoTime();
            long start = Math.max(now, free);
            long serialize = link.bitsPerSecond() == 0 ? 0 : bytes * 8L * 1_000_000_000L / link.bitsPerSecond();
            free = start + serialize;
            return free + link.oneWayDelay().toNanos();
        }
    }

    private static void closeQuietly(Socket s) {
        try {
            s.close();
        } catch (IOException ignored) {
            // closing anyway
        }
    }

    @Override
    public void close() {
        closed = true;
        try {
            server.close();
        } catch (IOException ignored) {
            // closing anyway
        }
        cutAll();
        threads.shutdownNow();
    }
}
