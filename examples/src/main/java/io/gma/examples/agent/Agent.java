package io.gma.examples.agent;

import io.gma.client.EndpointBuilder;
import io.gma.security.Security;
import io.gma.client.EndpointException;
import io.gma.client.Producer;
import io.gma.wire.Threads;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.LoggerFactory;

/**
 * The grid monitoring agent: a producer, registered with attributes {@code role=agent} and {@code host},
 * that samples this machine every interval and publishes the samples to its subscribers, one message a
 * sample round, one line a metric:
 *
 * <pre>
 * host=cardiff-node1 metric=load1 value=0.42 unit= at=1795180800123
 * host=cardiff-node1 metric=cpu value=12.5 unit=% at=1795180800123
 * </pre>
 */
public final class Agent implements AutoCloseable {
    private final Producer producer;
    private final HostMetrics metrics = new HostMetrics();
    private final String host;
    private final ScheduledExecutorService timer;

    private Agent(Producer producer, String host, Duration interval) {
        this.producer = producer;
        this.host = host;
        this.timer = Executors.newSingleThreadScheduledExecutor(Threads.named("gma-agent-" + host));
        timer.scheduleAtFixedRate(this::publish, 0, interval.toMillis(), TimeUnit.MILLISECONDS);
    }

    /**
     * Starts an agent in {@code domain} (through {@code pcServlet}, null for none) naming itself {@code host}.
     */
    public static Agent start(String registry, String domain, String pcServlet, String host, Duration interval)
            throws EndpointException {
        return start(registry, domain, pcServlet, host, interval, Security.insecure());
    }

    /** As {@link #start(String, String, String, String, Duration)}, with {@code security} on every hop. */
    public static Agent start(String registry, String domain, String pcServlet, String host, Duration interval,
            Security security) throws EndpointException {
        EndpointBuilder<Producer> b = Producer.builder().registry(registry).domain(domain).security(security);
        if (pcServlet != null) {
            b.pcServlet(pcServlet);
        }
        return start(b, host, interval);
    }

    /**
     * Starts an agent from {@code b}, which says its registry, domain and anything else (security, uplink,
     * metrics): this gives it its label and attributes, and builds it.
     */
    public static Agent start(EndpointBuilder<Producer> b, String host, Duration interval) throws EndpointException {
        return new Agent(b.label("agent").attribute("role", "agent").attribute("host", host).build(), host, interval);
    }

    /** This machine's name, or "localhost" when it has none. */
    public static String localHost() {
        try {
            return InetAddress.getLocalHost().getHostName();
        } catch (UnknownHostException e) {
            return "localhost";
        }
    }

    /** One round; a failure is logged and the next round comes all the same (a scheduled task that threw
     * would never run again). */
    private void publish() {
        try {
            publishOnce();
        } catch (RuntimeException e) {
            LoggerFactory.getLogger(Agent.class).warn("{}: a sample round failed: {}", host, e.toString());
        }
    }

    private void publishOnce() {
        long at = System.currentTimeMillis();
        StringBuilder b = new StringBuilder();
        for (HostMetrics.Sample s : metrics.sample()) {
            b.append(String.format(Locale.ROOT, "host=%s metric=%s value=%.3f unit=%s at=%d%n", host, s.metric(),
                    s.value(), s.unit(), at));
        }
        producer.publish(b.toString().getBytes(StandardCharsets.UTF_8)); // a subscriber that fails, fails alone
    }

    public String name() {
        return producer.name();
    }

    /** Where it serves its endpoint's counters ({@link EndpointBuilder#metrics}); empty when nowhere. */
    public Optional<String> metricsUrl() {
        return producer.metricsUrl();
    }

    @Override
    public void close() {
        timer.shutdownNow();
        producer.close();
    }
}
