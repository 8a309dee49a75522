package io.gma.examples;

import io.gma.client.Consumer;
import io.gma.client.EndpointBuilder;
import io.gma.security.Security;
import io.gma.client.EndpointException;
import io.gma.client.Incoming;
import io.gma.wire.ErrorCode;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * The initiator of the ping-pong latency test: sends N messages of a given size to a pong and prints the
 * round-trip percentiles. Blocking mode waits for each REPLY (request/reply); non-blocking mode sends DATA
 * and waits for the pong's DATA back.
 *
 * <pre>
 * java -cp examples/target/gma-examples.jar io.gma.examples.Ping REGISTRY_URL DOMAIN NAME \
 *     [COUNT] [BYTES] [blocking|nonblocking] [--pc HOST:PORT]
 * </pre>
 *
 * With {@code --pc}, the uplink address of its domain's PC servlet, it pings endpoints of other domains too.
 */
public final class Ping implements AutoCloseable {
    private final BlockingQueue<Incoming> echoes = new ArrayBlockingQueue<>(1024);
    private final Consumer consumer;

    private Ping(String registry, String domain, String pcServlet, Security security) throws EndpointException {
        EndpointBuilder<Consumer> b = Consumer.builder().registry(registry).domain(domain).label("ping")
                .security(security).onMessage(echoes::add);
        if (pcServlet != null) {
            b.pcServlet(pcServlet);
        }
        consumer = b.build();
    }

    /** Starts and registers a ping endpoint. */
    public static Ping start(String registry, String domain) throws EndpointException {
        return new Ping(registry, domain, null, Security.insecure());
    }

    /** As {@link #start(String, String)}, reaching other domains through {@code pcServlet} (may be null). */
    public static Ping start(String registry, String domain, String pcServlet) throws EndpointException {
        return new Ping(registry, domain, pcServlet, Security.insecure());
    }

    /** As {@link #start(String, String, String)}, with {@code security} on every hop. */
    public static Ping start(String registry, String domain, String pcServlet, Security security)
            throws EndpointException {
        return new Ping(registry, domain, pcServlet, security);
    }

    /** Round-trip times of one run, in nanoseconds, in the order measured. */
    public long[] run(String target, int count, int bytes, boolean blocking)
            throws EndpointException, InterruptedException {
        byte[] payload = new byte[bytes];
        long[] rtt = new long[count];
        for (int i = 0; i < count; i++) {
            rtt[i] = roundTrip(target, payload, blocking, Duration.ofSeconds(30));
            if (rtt[i] < 0) {
                throw new EndpointException(ErrorCode.TIMEOUT, "no echo from " + target + " in 30 s");
            }
        }
        return rtt;
    }

    /**
     * One round trip, as ping(8) makes it: the time it took in nanoseconds, or -1 when no answer came within
     * {@code timeout} (a late echo of an earlier one is not taken for this one's).
     *
     * @throws EndpointException what failed other than the wait (NO_ROUTE, FORBIDDEN, QUEUE_FULL, ...)
     */
    public long once(String target, int bytes, boolean blocking, Duration timeout)
            throws EndpointException, InterruptedException {
        echoes.clear(); // the echoes of round trips given up on
        try {
            return roundTrip(target, new byte[bytes], blocking, timeout);
        } catch (EndpointException e) {
            if (e.code() == ErrorCode.TIMEOUT) {
                return -1;
            }
            throw e;
        }
    }

    /**
     * A REQUEST answered by its REPLY, or a DATA by the pong's DATA: nanoseconds; -1 when no echo came within
     * {@code timeout} (a request's own TIMEOUT is thrown).
     */
    private long roundTrip(String target, byte[] payload, boolean blocking, Duration timeout)
            throws EndpointException, InterruptedException {
        long start = System.nanoTime();
        if (blocking) {
            consumer.request(target, payload, timeout);
        } else {
            consumer.send(target, payload);
            if (echoes.poll(timeout.toNanos(), TimeUnit.NANOSECONDS) == null) {
                return -1;
            }
        }
        return System.nanoTime() - start;
    }

    /** p50, p90, p99 and max of round-trip times, in microseconds (nearest rank). */
    public static String summary(long[] rtt) {
        long[] sorted = rtt.clone();
        Arrays.sort(sorted);
        return String.format(Locale.ROOT, "%d round trips: p50 %.1f us, p90 %.1f us, p99 %.1f us, max %.1f us",
                sorted.length, pct(sorted, 0.50), pct(sorted, 0.90), pct(sorted, 0.99),
                sorted[sorted.length - 1] / 1000.0);
    }

    private static double pct(long[] sorted, double p) {
        return sorted[Math.max(0, (int) Math.ceil(p * sorted.length) - 1)] / 1000.0;
    }

    @Override
    public void close() {
        consumer.close();
    }

    /** Removes {@code --name VALUE} from the arguments and returns VALUE (null when absent). */
    static String option(List<String> args, String name) {
        int i = args.indexOf(name);
        if (i < 0) {
            return null;
        }
        if (i + 1 >= args.size()) {
            System.err.println(name + " needs a value");
            System.exit(2);
        }
        String value = args.get(i + 1);
        args.subList(i, i + 2).clear();
        return value;
    }

    public static void main(String[] args) throws Exception {
        List<String> rest = new ArrayList<>(List.of(args));
        String pc = option(rest, "--pc");
        if (rest.size() < 3 || rest.size() > 6 || rest.get(0).startsWith("-")) {
            System.err.println("usage: Ping REGISTRY_URL DOMAIN NAME [COUNT=10000] [BYTES=64] [blocking|nonblocking]"
                    + " [--pc HOST:PORT]");
            System.exit(2);
        }
        int count = rest.size() > 3 ? Integer.parseInt(rest.get(3)) : 10_000;
        int bytes = rest.size() > 4 ? Integer.parseInt(rest.get(4)) : 64;
        boolean blocking = rest.size() <= 5 || rest.get(5).equals("blocking");
        try (Ping ping = start(rest.get(0), rest.get(1), pc)) {
            ping.run(rest.get(2), Math.min(count, 1000), bytes, blocking); // warm-up
            System.out.println(summary(ping.run(rest.get(2), count, bytes, blocking)));
        } catch (EndpointException | IllegalArgumentException e) {
            System.err.println("ping: " + e.getMessage());
            System.exit(1);
        }
    }
}
