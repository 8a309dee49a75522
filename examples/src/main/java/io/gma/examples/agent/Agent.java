package io.gma.examples.agent;

import io.gma.client.EndpointBuilder;
import io.gma.client.EndpointException;
import io.gma.client.Producer;
import io.gma.security.Security;
import io.gma.tables.TableSchema;
import io.gma.wire.Name;
import io.gma.wire.Threads;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.LoggerFactory;

/**
 * The grid monitoring agent: a producer, registered with attributes {@code role=agent} and {@code host}, that
 * declares the monitoring tables {@code host_cpu}, {@code host_memory}, {@code host_disk} and {@code host_net}
 * ({@link HostTables}) with the predicate {@code domain = '...' AND host = '...'}, and every interval samples this
 * machine ({@link HostMetrics}) and inserts a row per CPU, file system and interface. Consumers ask for them in
 * SQL: {@code gma select "SELECT host, cpu, busy FROM host_cpu WHERE busy > 50"}, or continuously.
 */
public final class Agent implements AutoCloseable {
    private final Producer producer;
    private final HostMetrics metrics;
    private final String host;
    private final ScheduledExecutorService timer;

    private Agent(Producer producer, HostMetrics metrics, String host, Duration interval) {
        this.producer = producer;
        this.metrics = metrics;
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
     * metrics): this gives it its label and attributes, builds it, and declares its tables before the first round.
     *
     * @throws EndpointException the registry refused the producer or a table (FORBIDDEN: another declaration of
     *     it, with each difference named; or security), or could not be reached
     * @throws io.gma.tables.TableException a host name that does not fit in a predicate
     */
    public static Agent start(EndpointBuilder<Producer> b, String host, Duration interval) throws EndpointException {
        Producer producer = b.label("agent").attribute("role", "agent").attribute("host", host).build();
        try {
            HostMetrics metrics = new HostMetrics(Name.domainOf(producer.name()), host);
            for (TableSchema table : HostTables.schemas(Name.domainOf(producer.name()), host, interval)) {
                producer.declare(table);
            }
            return new Agent(producer, metrics, host, interval);
        } catch (EndpointException | RuntimeException | Error e) {
            producer.close(); // OSHI that cannot start, or a table refused: no agent half started
            throw e;
        }
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
        for (HostMetrics.Sample s : metrics.sample()) {
            producer.insert(s.table(), s.row()); // a consumer whose queue refuses a row misses it alone
        }
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
