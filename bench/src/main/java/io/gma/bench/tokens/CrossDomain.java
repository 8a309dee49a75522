package io.gma.bench.tokens;

import io.gma.client.Consumer;
import io.gma.client.Producer;
import io.gma.examples.Ping;
import io.gma.examples.Pong;
import io.gma.pcservlet.PcServer;
import io.gma.registry.Registry;
import io.gma.security.HttpClients;
import io.gma.security.Security;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.Response;

/**
 * Two domains joined by their PC servlets, as the jGMA paper's Figure 7 has them, with one security on every hop:
 * a registry, PC servlets east and west, {@code Pong} in east and {@code Ping} in west (the examples), every one of
 * them with the Security its identity gets from {@link Identities} (registry, east, west, alice for east's
 * endpoints, bob for west's). A round trip is two POSTs (west to east, east to west), each carrying one message,
 * and four uplink hops; with security, each POST shows the sending PC servlet's token and the receiving one
 * authenticates it before it reads the body.
 */
public final class CrossDomain implements AutoCloseable {
    private final Identities identities;
    private final List<AutoCloseable> started = new ArrayList<>();
    private final Registry registry;
    private final PcServer east;
    private final PcServer west;
    private final Producer pong;
    private final Ping ping;
    private final OkHttpClient http;

    /** The Security of each identity. */
    @FunctionalInterface
    public interface Identities {
        Security of(String identity) throws IOException;
    }

    /** A stream's seconds, and the POSTs that carried its messages from east to west. */
    public record Streamed(double seconds, long messages, long posts) {
        /** Messages a POST carried, on average. */
        public double messagesPerPost() {
            return posts == 0 ? 0 : (double) messages / posts;
        }
    }

    private CrossDomain(Identities identities) throws Exception {
        this.identities = identities;
        try {
            registry = keep(Registry.builder().port(0).security(identities.of("registry")).build().start());
            east = keep(PcServer.builder("east", registry.url()).security(identities.of("east"))
                    .compression("off").start());
            west = keep(PcServer.builder("west", registry.url()).security(identities.of("west"))
                    .compression("off").start());
            pong = keep(Pong.start(registry.url(), "east", "pong", east.uplink(), identities.of("alice")));
            ping = keep(Ping.start(registry.url(), "west", west.uplink(), identities.of("bob")));
            http = HttpClients.configure(new OkHttpClient.Builder(), identities.of("bob")).build();
        } catch (Exception e) {
            close();
            throw e;
        }
    }

    /** Starts everything; {@code identities} gives each part its Security ({@code Security::insecure} for none). */
    public static CrossDomain start(Identities identities) throws Exception {
        return new CrossDomain(identities);
    }

    private <T extends AutoCloseable> T keep(T part) {
        started.add(part);
        return part;
    }

    /** Round-trip times of n requests of size bytes from west to east and their replies, nanoseconds. */
    public long[] roundTrips(int size, int n) throws Exception {
        return ping.run(pong.name(), n, size, true);
    }

    /**
     * A producer in east streams n messages of size bytes to a consumer in west, each a new endpoint on a new
     * uplink connection (one HELLO each): the seconds from the first send to the last delivery, and the POSTs
     * east's PC servlet made meanwhile (its {@code gma_pc_batches_sent_total}).
     */
    public Streamed stream(int size, int n) throws Exception {
        AtomicLong received = new AtomicLong();
        CountDownLatch done = new CountDownLatch(1);
        try (Consumer sink = Consumer.builder().registry(registry.url()).domain("west").pcServlet(west.uplink())
                .security(identities.of("bob")).label("sink").onMessage(m -> {
                    if (received.incrementAndGet() == n + 1L) {
                        done.countDown();
                    }
                }).build();
                Producer source = Producer.builder().registry(registry.url()).domain("east")
                        .pcServlet(east.uplink()).security(identities.of("alice")).label("source").build()) {
            byte[] payload = new byte[size];
            source.send(sink.name(), payload); // the look-up and the connections: not the stream's business
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (received.get() < 1) {
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("the first message did not arrive within 30 s");
                }
                Thread.sleep(1);
            }
            long[] before = counters();
            long start = System.nanoTime();
            for (int i = 0; i < n; i++) {
                source.send(sink.name(), payload);
            }
            if (!done.await(5, TimeUnit.MINUTES)) {
                throw new IllegalStateException("only " + (received.get() - 1) + " of " + n + " messages arrived");
            }
            double seconds = (System.nanoTime() - start) / 1e9;
            // east counts a POST once it is answered, which may be a moment after west delivered its messages
            long[] after = counters();
            for (long wait = System.nanoTime() + TimeUnit.SECONDS.toNanos(5); after[1] - before[1] < n
                    && System.nanoTime() < wait; after = counters()) {
                Thread.sleep(10);
            }
            return new Streamed(seconds, after[1] - before[1], after[0] - before[0]);
        }
    }

    /** East's batches and messages posted so far, from its metrics page (this machine may read it). */
    private long[] counters() throws IOException {
        try (Response r = http.newCall(new Request.Builder().url(east.url() + "/metrics").build()).execute()) {
            String text = r.body().string();
            if (r.code() != 200) {
                throw new IOException("GET " + east.url() + "/metrics answered " + r.code() + ": " + text);
            }
            return new long[] {counter(text, "gma_pc_batches_sent_total"), counter(text, "gma_pc_messages_sent_total")};
        }
    }

    private static long counter(String metrics, String name) throws IOException {
        for (String line : metrics.split("\n")) {
            if (line.startsWith(name + " ")) {
                return (long) Double.parseDouble(line.substring(name.length() + 1).trim());
            }
        }
        throw new IOException("the metrics page has no " + name);
    }

    @Override
    public void close() throws Exception {
        if (http != null) {
            http.dispatcher().executorService().shutdown();
            http.connectionPool().evictAll();
        }
        Exception first = null;
        for (int i = started.size() - 1; i >= 0; i--) {
            try {
                started.get(i).close();
            } catch (Exception e) {
                first = first == null ? e : first;
            }
        }
        if (first != null) {
            throw first;
        }
    }
}
