package io.gma.bench;

import io.nats.client.Connection;
import io.nats.client.Dispatcher;
import io.nats.client.Message;
import io.nats.client.Nats;
import io.nats.client.Options;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * NATS as a peer: a {@link NatsServer} and two connections of the official Java client, jnats: one requests and
 * publishes, the other replies and subscribes. Every message goes through the server: client, server, client.
 */
final class NatsPeer implements AutoCloseable {
    private static final String ECHO = "gma.bench.echo";

    private final NatsServer server;
    private final Connection requester;
    private final Connection responder;
    private int streams;

    private NatsPeer(NatsServer server) throws IOException, InterruptedException {
        this.server = server;
        Connection req = null;
        Connection rsp = null;
        try {
            Options.Builder options = new Options.Builder().server(server.url())
                    .connectionTimeout(Duration.ofSeconds(5)).noReconnect();
            req = Nats.connect(options.connectionName("gma-bench-requester").build());
            rsp = Nats.connect(options.connectionName("gma-bench-responder").build());
            Connection replier = rsp;
            replier.createDispatcher(m -> replier.publish(m.getReplyTo(), m.getData())).subscribe(ECHO);
            replier.flush(Duration.ofSeconds(5));
        } catch (Exception e) {
            closeQuietly(req, rsp);
            server.close();
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
     * Starts nats-server (a null binary means "find it") and connects.
     *
     * @throws IOException with a one-line reason when there is no binary, it did not start, or would not connect
     */
    static NatsPeer start(Path binary) throws IOException, InterruptedException {
        return new NatsPeer(NatsServer.start(binary));
    }

    /** The server's and the client's versions, for the summary. */
    String version() {
        return "nats-server " + server.version + ", jnats " + jnatsVersion();
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
        server.close();
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
}
