package io.gma.bench.scale;

import io.gma.client.Consumer;
import io.gma.client.EndpointException;
import io.gma.client.Incoming;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;

/**
 * The consumer the swarm's agents publish to, in another domain: a GMA {@link Consumer} on that domain's PC
 * servlet that reads each DATA's sequence number and send time ({@link UplinkSwarm#PAYLOAD_BYTES}), and keeps,
 * per sender, the highest sequence number it got, counting what came out of order (a number not one above the
 * last from that sender: a duplicate, or one overtaken) and the publish-to-consumer latency of each message but
 * each sender's first (the cold start: east's first POST to west opens its connection and its queue). It
 * runs in the swarm's JVM, so that both ends read one {@link System#nanoTime()} clock. {@link #reset()} starts a
 * new count. Thread-safe.
 */
public final class LatencySink implements AutoCloseable {
    private final Consumer consumer;
    private final Map<String, long[]> last = new HashMap<>();
    private long[] latencies = new long[1 << 16];
    private int count;
    private long received;
    private long outOfOrder;
    private long malformed;

    private LatencySink(String registry, String domain, String pcUplink) throws EndpointException {
        this.consumer = Consumer.builder().registry(registry).domain(domain).pcServlet(pcUplink).label("scale-sink")
                .onMessage(this::got).build();
    }

    /**
     * Registers a consumer in {@code domain}, on the PC servlet whose uplink is {@code pcUplink} (host:port).
     *
     * @throws EndpointException if it cannot register or reach its PC servlet
     */
    public static LatencySink start(String registry, String domain, String pcUplink) throws EndpointException {
        return new LatencySink(registry, domain, pcUplink);
    }

    /** Its registered name: where the agents publish. */
    public String name() {
        return consumer.name();
    }

    private synchronized void got(Incoming m) {
        long now = System.nanoTime();
        if (m.data().length != UplinkSwarm.PAYLOAD_BYTES) {
            malformed++;
            return;
        }
        received++;
        ByteBuffer data = ByteBuffer.wrap(m.data());
        long seq = data.getLong();
        long sentAt = data.getLong();
        long[] highest = last.computeIfAbsent(m.from(), k -> new long[1]);
        if (seq != highest[0] + 1) {
            outOfOrder++;
        }
        highest[0] = Math.max(highest[0], seq);
        if (seq == 1) {
            return; // each sender's first message is the cold start (east's first POST to west), not a sample
        }
        if (count == latencies.length) {
            latencies = Arrays.copyOf(latencies, count * 2);
        }
        latencies[count++] = now - sentAt;
    }

    /** Forgets what it counted. */
    public synchronized void reset() {
        last.clear();
        count = 0;
        received = 0;
        outOfOrder = 0;
        malformed = 0;
    }

    /**
     * What it counted since the last reset.
     *
     * @param received messages received
     * @param senders distinct senders heard from
     * @param outOfOrder messages whose number was not one above the last of their sender's (gaps count once
     *     each, where they show)
     * @param malformed messages without the swarm's payload
     * @param p50Millis median publish-to-consumer latency, milliseconds, of every message but each sender's first
 *     (NaN without any)
     * @param p99Millis its 99th percentile (nearest rank)
     * @param maxMillis the longest
     */
    public record Counts(long received, int senders, long outOfOrder, long malformed, double p50Millis,
            double p99Millis, double maxMillis) {
    }

    /** What it counted since the last reset. */
    public synchronized Counts counts() {
        long[] sorted = Arrays.copyOf(latencies, count);
        Arrays.sort(sorted);
        return new Counts(received, last.size(), outOfOrder, malformed, percentile(sorted, 0.50),
                percentile(sorted, 0.99), count == 0 ? Double.NaN : sorted[count - 1] / 1e6);
    }

    /** Received messages since the last reset. */
    public synchronized long received() {
        return received;
    }

    /** How many messages of {@code sender} arrived, by the highest number it got (0: none). */
    public synchronized long highest(String sender) {
        long[] h = last.get(sender);
        return h == null ? 0 : h[0];
    }

    /** Nearest rank: the value at rank ceil(p x n) of the sorted values, in milliseconds. */
    private static double percentile(long[] sorted, double p) {
        if (sorted.length == 0) {
            return Double.NaN;
        }
        int rank = (int) Math.ceil(p * sorted.length);
        return sorted[Math.max(0, rank - 1)] / 1e6;
    }

    @Override
    public void close() {
        consumer.close();
    }
}
