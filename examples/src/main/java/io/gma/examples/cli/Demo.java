package io.gma.examples.cli;

import io.gma.examples.agent.Agent;
import io.gma.examples.agent.Collector;
import io.gma.pcservlet.PcServlet;
import io.gma.registry.Registry;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * The all-in-one demo, in one process, on loopback and ephemeral ports:
 *
 * <pre>
 *   registry
 *   cardiff  PC servlet (reachable)     agent, publishing this machine's metrics
 *   bangor   PC servlet (outbound-only, relayed by cardiff)     agent
 *   swansea  PC servlet (reachable)     collector: finds the agents by SQL, subscribes, shows the latest values
 * </pre>
 */
public final class Demo implements AutoCloseable {
    private final List<AutoCloseable> started = new ArrayList<>();
    private final Registry registry;
    private final PcServlet cardiff;
    private final PcServlet bangor;
    private final PcServlet swansea;
    private final Collector collector;

    private Demo(Duration sampleEvery) throws Exception {
        try {
            registry = keep(Registry.builder().port(0).build().start());
            cardiff = keep(PcServlet.builder("cardiff", registry.url()).start());
            swansea = keep(PcServlet.builder("swansea", registry.url()).start());
            bangor = keep(PcServlet.builder("bangor", registry.url()).via("cardiff").start());
            String host = Agent.localHost();
            keep(Agent.start(registry.url(), "cardiff", cardiff.uplink(), host + "/cardiff", sampleEvery));
            keep(Agent.start(registry.url(), "bangor", bangor.uplink(), host + "/bangor", sampleEvery));
            collector = keep(Collector.start(registry.url(), "swansea", swansea.uplink(), Duration.ofSeconds(1)));
        } catch (Exception e) {
            close();
            throw e;
        }
    }

    /** Starts everything; agents sample every {@code sampleEvery}. */
    public static Demo start(Duration sampleEvery) throws Exception {
        return new Demo(sampleEvery);
    }

    private <T extends AutoCloseable> T keep(T part) {
        started.add(part);
        return part;
    }

    /** What runs, and where. */
    public String describe() {
        return String.join(System.lineSeparator(),
                "GMA demo, all in this process on loopback. Dashboard: " + dashboard(),
                "  registry   " + registry.url() + Registry.API_PATH,
                "  cardiff    PC servlet " + cardiff.url() + ", an agent publishing this machine's metrics",
                "  bangor     PC servlet, outbound-only (relayed by cardiff), an agent",
                "  swansea    PC servlet " + swansea.url() + ", the collector below",
                "Query the registry meanwhile: curl -s -H 'Content-Type: text/plain'"
                        + " --data \"SELECT name, domain FROM producers\" " + registry.url() + Registry.API_PATH
                        + "/query");
    }

    /** The registry's base URL. */
    public String registryUrl() {
        return registry.url();
    }

    /** The dashboard's address (the registry serves it; each PC servlet too). */
    public String dashboard() {
        return registry.url() + "/dashboard/";
    }

    /** The same dashboard, served by swansea's PC servlet (which relays its queries to the registry). */
    public String pcDashboard() {
        return swansea.url() + "/dashboard/";
    }

    public Collector collector() {
        return collector;
    }

    /**
     * Shows the collector's table every {@code refresh} until {@code duration} has passed (null: until
     * interrupted); with {@code ansi}, in place.
     */
    public void show(PrintWriter out, Duration duration, Duration refresh, boolean ansi) throws InterruptedException {
        long end = duration == null ? Long.MAX_VALUE : System.nanoTime() + duration.toNanos();
        while (System.nanoTime() < end) {
            String table = Collector.table(collector.readings(), System.currentTimeMillis());
            out.print(ansi ? "\033[H\033[2J" + describe() + System.lineSeparator() + System.lineSeparator() + table
                    : table + System.lineSeparator());
            out.flush();
            Thread.sleep(Math.min(refresh.toMillis(), Math.max(1, (end - System.nanoTime()) / 1_000_000)));
        }
    }

    /** Stops everything, the last started first. */
    @Override
    public void close() {
        for (int i = started.size() - 1; i >= 0; i--) {
            try {
                started.get(i).close();
            } catch (Exception e) {
                System.err.println("gma demo: stopping: " + e.getMessage());
            }
        }
        started.clear();
    }
}
