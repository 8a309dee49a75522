package io.gma.examples.cli;

import io.gma.archiver.Archiver;
import io.gma.examples.agent.Agent;
import io.gma.examples.agent.Collector;
import io.gma.examples.agent.HostTables;
import io.gma.pcservlet.PcServer;
import io.gma.pcservlet.SpoolOptions;
import io.gma.registry.Registry;
import io.gma.security.KeyFiles;
import io.gma.security.Keys;
import io.gma.security.Security;
import io.gma.security.Tls;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;

/**
 * The all-in-one demo, in one process, on loopback and ephemeral ports:
 *
 * <pre>
 *   registry
 *   cardiff  PC servlet (reachable)     agent, inserting this machine's metrics into host_cpu, host_memory, ...
 *                                       archiver of the agents' tables (H2 in the demo's temporary directory), with
 *                                       the dashboard's chart data and its metrics on an HTTP port
 *   bangor   PC servlet (outbound-only, relayed by cardiff)     agent
 *   swansea  PC servlet (reachable)     collector: continuous queries over the agents' tables, the latest rows
 * </pre>
 *
 * <p>The registry samples the PC servlets every second, so that the dashboard's charts move from the start.
 */
public final class Demo implements AutoCloseable {
    private final List<AutoCloseable> started = new ArrayList<>();
    private final Registry registry;
    private final PcServer cardiff;
    private final PcServer bangor;
    private final PcServer swansea;
    private final Collector collector;
    private final Archiver archiver;

    /** Where the keys are when every hop is secure, else null. */
    private final Path keys;
    /** A temporary directory with each PC servlet's spool and the archive, deleted when the demo stops. */
    private final Path files;

    /** Who a person is, signed in to the secure demo's dashboard with the token it writes. */
    static final String OPERATOR = "operator";
    /** How often the registry samples the PC servlets for the dashboard's charts: a demo moves at once. */
    static final Duration PC_SAMPLING = Duration.ofSeconds(1);
    /** How long that token lives: the longest a verifier takes. */
    static final Duration OPERATOR_TOKEN_LIFETIME = Duration.ofHours(24);
    /** Where, in the keys directory, the secure demo writes that token. */
    static final String DASHBOARD_TOKEN = "dashboard.token";

    /** What the demo's identities may do when it runs secure. */
    static final String RULES = String.join(System.lineSeparator(),
            "# the gma demo's rules: each PC servlet is its domain; agents and the collector are endpoints",
            "register  agent,collector            *",
            "domain    cardiff                    cardiff",
            "domain    swansea                    swansea",
            "domain    bangor                     bangor",
            "register  archiver                   *",
            "send      agent,collector,archiver   *",
            "send      cardiff,swansea,bangor     *",
            "post      cardiff                    cardiff",
            "post      swansea                    swansea",
            "post      bangor                     bangor",
            "table     agent                      host_cpu,host_memory,host_disk,host_net",
            "query     *                          endpoints,producers,consumers,attributes,domains,"
                    + "tables,table_columns,publishers", "");

    private Demo(Duration sampleEvery, Path keys) throws Exception {
        this.keys = keys;
        this.files = Files.createTempDirectory("gma-demo");
        keep(() -> deleteTree(files)); // closed last, after the PC servlets and the archiver
        try {
            registry = keep(Registry.builder().port(0).security(security("registry")).pcSampling(PC_SAMPLING)
                    .build().start());
            cardiff = keep(pc("cardiff").start());
            swansea = keep(pc("swansea").start());
            bangor = keep(pc("bangor").via("cardiff").start());
            // before the agents: it archives their tables as they declare them, following them from its own
            // thread (subscribing to an agent behind the relay can take seconds, which start need not wait for)
            archiver = keep(Archiver.builder().registry(registry.url()).domain("cardiff").pcServlet(cardiff.uplink())
                    .security(security("archiver")).tables(HostTables.CPU, HostTables.MEMORY, HostTables.DISK,
                            HostTables.NET).retention(Duration.ofDays(1)).dataDir(files.resolve("archive"))
                    .http("127.0.0.1", 0).build());
            String host = Agent.localHost();
            keep(Agent.start(registry.url(), "cardiff", cardiff.uplink(), host + "/cardiff", sampleEvery,
                    security("agent")));
            keep(Agent.start(registry.url(), "bangor", bangor.uplink(), host + "/bangor", sampleEvery,
                    security("agent")));
            collector = keep(Collector.start(registry.url(), "swansea", swansea.uplink(), Duration.ofSeconds(1),
                    security("collector")));
        } catch (Exception e) {
            close();
            throw e;
        }
    }

    private Security security(String identity) throws IOException {
        return keys == null ? Security.insecure()
                : Security.fromDirectory(keys, identity, Tls.ClientAuth.NONE).build();
    }

    private PcServer.Builder pc(String domain) throws IOException {
        return PcServer.builder(domain, registry.url()).security(security(domain))
                .spool(SpoolOptions.in(files.resolve("spool").resolve(domain)));
    }

    private static void deleteTree(Path dir) throws IOException {
        try (Stream<Path> all = Files.walk(dir)) {
            for (Path p : all.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        }
    }

    /** Starts everything, insecure (plaintext on loopback, logged); agents sample every {@code sampleEvery}. */
    public static Demo start(Duration sampleEvery) throws Exception {
        return new Demo(sampleEvery, null);
    }

    /**
     * Starts everything with TLS and signed tokens on every hop and {@link #RULES}, with a signing key per
     * identity, the trust file, a CA and certificates made into {@code keys} (an empty directory) first.
     */
    public static Demo startSecure(Duration sampleEvery, Path keys) throws Exception {
        Keys.make(keys, List.of("localhost", "127.0.0.1"), List.of("agent", "collector", "archiver"));
        // each PC servlet signs its own tokens; the operator is a person, at the dashboard
        Keys.addIdentities(keys, List.of("cardiff", "swansea", "bangor", OPERATOR));
        Files.writeString(keys.resolve("rules"), RULES);
        KeyFiles.writeNew(keys.resolve(DASHBOARD_TOKEN), KeysCommand.token(keys, OPERATOR,
                Security.REGISTRY_AUDIENCE, OPERATOR_TOKEN_LIFETIME) + System.lineSeparator());
        return new Demo(sampleEvery, keys);
    }

    private <T extends AutoCloseable> T keep(T part) {
        started.add(part);
        return part;
    }

    /** What runs, and where. */
    public String describe() {
        return String.join(System.lineSeparator(),
                "GMA demo, all in this process on loopback. Dashboard: " + dashboard(),
                "  charts     " + charts() + " (each table's columns per host, live), " + dashboard()
                        + "pcs.html (the PC servlets' messages per second and queues)",
                "  registry   " + registry.url() + Registry.API_PATH,
                "  cardiff    PC servlet " + cardiff.url() + ", an agent inserting this machine's metrics into"
                        + " the tables host_cpu, host_memory, host_disk, host_net",
                "  bangor     PC servlet, outbound-only (relayed by cardiff), an agent",
                "  swansea    PC servlet " + swansea.url() + ", the collector below: a continuous query over each"
                        + " table",
                "  archiver   " + archiver.name() + " keeps the agents' rows for a day, for history queries and the"
                        + " charts (data and metrics at " + archiver.httpUrl().orElseThrow() + ")",
                "  files      each PC servlet's spool (what it acknowledged, until the next hop has it) and the"
                        + " archive's H2 database, in " + files + " (deleted when the demo stops)",
                keys == null ? "  security   none (--secure for TLS and tokens on every hop)"
                        : "  security   TLS and tokens on every hop, keys and rules in " + keys
                        + System.lineSeparator() + "  dashboard  sign in with the token in " + dashboardToken()
                        + " (" + OPERATOR + "'s, for 24 h; another: ./gma keys --dir " + keys + " --token " + OPERATOR
                        + ")" + System.lineSeparator() + "             your browser does not know the demo's CA:"
                        + " accept its warning, or import " + keys.resolve("ca.pem"),
                keys == null ? "Query the registry meanwhile: curl -s -H 'Content-Type: text/plain'"
                        + " --data \"SELECT name, domain FROM producers\" " + registry.url() + Registry.API_PATH
                        + "/query"
                        : "Query the registry meanwhile: ./gma query --registry " + registry.url() + " --security "
                        + keys + " --identity collector \"SELECT name, domain FROM producers\"",
                "Ask the agents' tables (--continuous follows new rows, --json prints JSON lines): " + select(
                        "SELECT host, cpu, busy, load1 FROM host_cpu"));
    }

    /**
     * A {@code gma select} command line that runs {@code sql} against this demo, from swansea (a consumer in
     * another domain reaches the agents through its PC servlet), with the keys when it is secure.
     */
    public String select(String sql) {
        return "./gma select --registry " + registry.url() + " --domain swansea --pc " + swansea.uplink()
                + (keys == null ? "" : " --security " + keys + " --identity collector") + " \"" + sql + "\"";
    }

    /** The registry's base URL. */
    public String registryUrl() {
        return registry.url();
    }

    /** The dashboard's address (the registry serves it; each PC servlet too). */
    public String dashboard() {
        return registry.url() + "/dashboard/";
    }

    /** The dashboard's page of host_cpu's charts, the busy share of each CPU of each agent's host. */
    public String charts() {
        return dashboard() + "table.html?table=" + HostTables.CPU;
    }

    /** The archiver of the agents' tables, which serves the dashboard's chart data. */
    public Archiver archiver() {
        return archiver;
    }

    /** The file holding a token to sign in to the dashboard with, when the demo is secure; else null. */
    public Path dashboardToken() {
        return keys == null ? null : keys.resolve(DASHBOARD_TOKEN);
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
