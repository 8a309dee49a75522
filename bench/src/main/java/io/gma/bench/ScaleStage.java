package io.gma.bench;

import io.gma.bench.crash.Proc;
import io.gma.bench.scale.AgentRegistrations;
import io.gma.bench.scale.LatencySink;
import io.gma.bench.scale.ProcSample;
import io.gma.bench.scale.UplinkSwarm;
import io.gma.registry.api.RegistryClient;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * Many thin links (issue 22): K idle uplinks to one PC servlet, then K agents each publishing one message a
 * second across domains, for each K of {@link Plan#scaleAgents}. Every server is a process of its own, started as
 * a user starts it ({@code java -jar gma-registry.jar}, {@code java -jar gma-pcservlet.jar}, JVM defaults, the
 * spool on by default): a registry, the PC servlets of east and west; the consumer ({@link LatencySink}, in
 * west) and the agents ({@link UplinkSwarm}, one thread, in east) run in this JVM, so that the latency is read
 * on one clock. East's PC servlet is started afresh for each K, so that each step starts from an empty process.
 *
 * <p>For each K: east's threads and resident memory ({@code /proc/PID/status}) before and after the uplinks
 * opened, the memory per idle uplink, and east's CPU ({@code /proc/PID/stat}) over {@link Plan#scaleIdleSeconds}
 * of idleness; then publishing for {@link Plan#scaleSeconds}: delivered of sent, order per sender, and the
 * publish-to-consumer latency. Goals: {@link #GOAL_KIB_PER_UPLINK} KiB per idle uplink, at most 4 + 2 x cores
 * I/O threads (the threads the uplinks added), p99 under {@link #GOAL_P99_MILLIS} ms at 10,000 x 1 msg/s.
 *
 * <p>A K the machine cannot take stops the stage there, with the reason in the notes (the uplinks that did not
 * open and why, east's state and the last lines of its log), rather than crashing or hanging; so does a K whose
 * memory, projected from the step before, would not fit in what the machine has available, or whose connections
 * the file descriptor limit would not allow. Not among the stages a run has by default: {@code gma bench --only
 * scale}.
 */
final class ScaleStage {
    static final String IDLE = "scale-idle";
    static final String PUBLISH = "scale-publish";
    static final String SERIES = "PC servlet east";
    static final double GOAL_KIB_PER_UPLINK = 64;
    static final double GOAL_P99_MILLIS = 10;
    static final int GOAL_P99_AGENTS = 10_000;
    private static final Pattern UP = Pattern.compile("GMA (registry|PC servlet of) .*");
    private static final long START_MILLIS = 60_000;
    /** Opening K uplinks is given up when none opened (nor failed for good) for this long. */
    private static final Duration QUIET = Duration.ofSeconds(30);
    /** Calls to the registry at once while the agents register. */
    private static final int REGISTER_CONCURRENCY = 8;
    /** A K is not tried when its projected memory is over this share of the machine's available memory. */
    private static final double MEMORY_SHARE = 0.75;

    private ScaleStage() {
    }

    /** What the stage measured of one K, for the table in the notes. */
    private record Step(int agents, int opened, ProcSample before, ProcSample after, double cpuPercent,
            LatencySink.Counts counts, UplinkSwarm.Stats published, Posts posts) {
        double kibPerUplink() {
            return (after.rssKib() - before.rssKib()) / (double) agents;
        }

        int ioThreads() {
            return after.threads() - before.threads();
        }
    }

    /**
     * What east's /metrics said of its POSTs to west by the end of a step (east is fresh for each).
     *
     * @param batches batches west answered 200
     * @param retries POSTs east retried
     * @param throttled 429s and 503s east received
     */
    private record Posts(long batches, long retries, long throttled) {
        static Posts of(int httpPort) throws IOException, InterruptedException {
            String page = MetricsPage.fetch("http://127.0.0.1:" + httpPort);
            return new Posts(MetricsPage.sample(page, "gma_pc_batches_sent_total"),
                    MetricsPage.sample(page, "gma_pc_retries_total"),
                    MetricsPage.sample(page, "gma_pc_throttled_received_total"));
        }
    }

    static List<Figure> run(Plan plan, Peers peers, Progress progress) throws Exception {
        if (!ProcSample.available()) {
            throw new IllegalStateException("the scale stage reads /proc (Linux only)");
        }
        Path home = Path.of(System.getProperty("gma.home", "."));
        Path registryJar = jar(home, "registry/target/gma-registry.jar");
        Path pcJar = jar(home, "pcservlet/target/gma-pcservlet.jar");
        int cores = Runtime.getRuntime().availableProcessors();
        Figure idle = new Figure(IDLE, "Many thin links: memory per idle uplink of one PC servlet", "idle uplinks",
                "RSS per idle uplink (KiB)", true, false, "agents", "kib_per_uplink", "io_threads",
                "threads_before", "threads_after", "rss_before_mib", "rss_after_mib", "idle_cpu_percent", "opened",
                "fds_before", "fds_after");
        Figure publish = new Figure(PUBLISH, "Many thin links: publish-to-consumer latency, every agent 1 msg/s"
                + " across domains", "agents publishing", "latency p99 (ms)", true, false, "agents", "p99_ms",
                "p50_ms", "max_ms", "sent", "delivered", "unacknowledged", "out_of_order", "max_lag_ms");
        int[] ks = plan.scaleAgents();
        progress.stage("scale: many thin links", ks.length);
        Path dir = Files.createTempDirectory("gma-bench-scale");
        List<Proc> procs = new ArrayList<>();
        List<Step> steps = new ArrayList<>();
        String stopped = null;
        try {
            int registryPort = freePort();
            String registry = "http://127.0.0.1:" + registryPort;
            start(procs, Proc.jar("registry", List.of(), registryJar, List.of("--port",
                    Integer.toString(registryPort)), dir.resolve("registry"), null));
            int westUplink = freePort();
            start(procs, Proc.jar("pc-west", List.of(), pcJar, pcArgs("west", registry, freePort(), westUplink,
                    plan.scaleMemory()), dir.resolve("pc-west"), null));
            AgentRegistrations registrations = new AgentRegistrations(RegistryClient.create(registry), "east",
                    REGISTER_CONCURRENCY, true);
            try (LatencySink sink = LatencySink.start(registry, "west", "127.0.0.1:" + westUplink)) {
                for (int k : ks) {
                    progress.step(String.format(Locale.ROOT, "%,d uplinks", k));
                    stopped = cannotTry(k, steps);
                    if (stopped != null) {
                        break;
                    }
                    List<String> names = registrations.upTo(k);
                    Step step;
                    try {
                        step = step(plan, k, names, pcJar, registry, dir, sink);
                    } catch (StepFailed e) {
                        stopped = e.getMessage();
                        break;
                    }
                    steps.add(step);
                    idle.add(SERIES, k, step.kibPerUplink(), step.ioThreads(), step.before().threads(),
                            step.after().threads(), step.before().rssKib() / 1024.0, step.after().rssKib() / 1024.0,
                            step.cpuPercent(), step.opened(), step.before().fds(), step.after().fds());
                    LatencySink.Counts c = step.counts();
                    UplinkSwarm.Stats p = step.published();
                    publish.add(SERIES, k, c.p99Millis(), c.p50Millis(), c.maxMillis(), p.sent(), c.received(),
                            p.unacknowledged(), c.outOfOrder(), p.maxLagMillis());
                    progress.say(line(step));
                }
            } finally {
                registrations.close();
            }
        } finally {
            for (int i = procs.size() - 1; i >= 0; i--) {
                procs.get(i).close();
            }
            deleteTree(dir);
        }
        notes(idle, publish, steps, stopped, cores, plan);
        if (stopped != null) {
            progress.say("scale: stopped: " + stopped);
        }
        progress.finish();
        return List.of(idle, publish);
    }

    /** Why a K cannot be tried on this machine (file descriptors, memory projected from the step before), or null. */
    private static String cannotTry(int k, List<Step> steps) throws IOException {
        if (ManagementFactory.getOperatingSystemMXBean() instanceof com.sun.management.UnixOperatingSystemMXBean os
                && os.getMaxFileDescriptorCount() < k + 1000L) {
            return String.format(Locale.ROOT, "%,d uplinks not tried: they need %,d file descriptors or more in this"
                    + " JVM and in the PC servlet's, and the limit (ulimit -n) is %,d; raise it (./gma bench raises"
                    + " it to the hard limit, ulimit -Hn)", k, k + 1000L, os.getMaxFileDescriptorCount());
        }
        if (!steps.isEmpty()) {
            Step last = steps.get(steps.size() - 1);
            double projectedKib = last.before().rssKib() + Math.max(0, last.kibPerUplink()) * k;
            long availableKib = memAvailableKib();
            if (availableKib > 0 && projectedKib > MEMORY_SHARE * availableKib) {
                return String.format(Locale.ROOT, "%,d uplinks not tried: at %.0f KiB per idle uplink (measured at"
                        + " %,d) east's PC servlet would need about %.1f GiB resident, over %.0f%% of the %.1f GiB"
                        + " this machine has available (MemAvailable)", k, last.kibPerUplink(), last.agents(),
                        projectedKib / 1024 / 1024, MEMORY_SHARE * 100, availableKib / 1024.0 / 1024);
            }
        }
        return null;
    }

    /** A K that could not be measured: the stage stops there, and says why. */
    private static final class StepFailed extends Exception {
        private static final long serialVersionUID = 1L;

        StepFailed(String why) {
            super(why);
        }
    }

    private static Step step(Plan plan, int k, List<String> names, Path pcJar, String registry, Path dir,
            LatencySink sink) throws Exception {
        int uplinkPort = freePort();
        int httpPort = freePort();
        List<String> args = new ArrayList<>(pcArgs("east", registry, httpPort, uplinkPort, plan.scaleMemory()));
        if (k > 10_000) {
            args.addAll(List.of("--max-links", Integer.toString(k))); // the default cap is 10,000
        }
        try (Proc east = Proc.jar("pc-east", List.of(), pcJar, args, dir.resolve("pc-east-" + k), null)) {
            east.start().await(UP, START_MILLIS);
            Thread.sleep(2000); // past its start: JIT and Jetty settle
            ProcSample before = ProcSample.of(east.pid());
            Duration openTime = Duration.ofSeconds(Math.max(60, k / 50));
            try (UplinkSwarm swarm = UplinkSwarm.start(new InetSocketAddress("127.0.0.1", uplinkPort), names,
                    UplinkSwarm.DEFAULT_MAX_PENDING)) {
                UplinkSwarm.Stats opened = swarm.awaitSettled(openTime, QUIET);
                if (opened.open() < k || !east.isAlive()) {
                    throw new StepFailed(failure(k, opened, east, before, openTime));
                }
                Thread.sleep(2000);
                ProcSample after = ProcSample.of(east.pid());
                Thread.sleep(plan.scaleIdleSeconds() * 1000L);
                ProcSample idleEnd = ProcSample.of(east.pid());
                double cpu = 100.0 * (idleEnd.cpuTicks() - after.cpuTicks()) / ProcSample.TICKS_PER_SECOND
                        / plan.scaleIdleSeconds();
                UplinkSwarm.Stats idled = swarm.stats();
                if (idled.open() < k) {
                    throw new StepFailed(failure(k, idled, east, before, openTime));
                }
                sink.reset();
                swarm.publish(sink.name(), k, Duration.ofSeconds(1));
                Thread.sleep(plan.scaleSeconds() * 1000L);
                swarm.stopPublishing();
                UplinkSwarm.Stats published = swarm.stats();
                awaitDelivery(sink, published.sent());
                Thread.sleep(500); // the last ACKs
                published = swarm.stats();
                return new Step(k, opened.open(), before, after, cpu, sink.counts(), published,
                        Posts.of(httpPort));
            }
        }
    }

    /** Waits until {@code sent} messages arrived, or none came for 10 s (60 s at most). */
    private static void awaitDelivery(LatencySink sink, long sent) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        long seen = -1;
        long quietSince = System.nanoTime();
        while (sink.received() < sent && System.nanoTime() - deadline < 0
                && System.nanoTime() - quietSince < Duration.ofSeconds(10).toNanos()) {
            long now = sink.received();
            if (now != seen) {
                seen = now;
                quietSince = System.nanoTime();
            }
            Thread.sleep(100);
        }
    }

    /** Why K uplinks did not all open, or did not stay open: the swarm's reasons, east's state and log. */
    private static String failure(int k, UplinkSwarm.Stats s, Proc east, ProcSample before, Duration openTime)
            throws IOException {
        StringBuilder why = new StringBuilder(String.format(Locale.ROOT, "%,d uplinks: %,d open, %,d never opened,"
                + " %,d dropped after opening, %,d still pending (none opened for %d s, or %d s in all); reasons: %s",
                k, s.open(), s.gaveUp(), s.dropped(), s.pending(), QUIET.toSeconds(), openTime.toSeconds(),
                s.reasonsLine()));
        if (!east.isAlive()) {
            why.append("; east's PC servlet exited");
        } else {
            ProcSample now = ProcSample.of(east.pid());
            why.append(String.format(Locale.ROOT, "; east's PC servlet runs with %,d threads, %,.0f MiB resident and"
                    + " %,d open file descriptors (limit %s)", now.threads(), now.rssKib() / 1024.0, now.fds(),
                    fdLimit()));
            if (ManagementFactory.getOperatingSystemMXBean() instanceof com.sun.management.UnixOperatingSystemMXBean os
                    && now.fds() >= os.getMaxFileDescriptorCount() - 64 && s.open() > 0) {
                why.append(String.format(Locale.ROOT, ": it ran out of file descriptors, at %.1f per open uplink",
                        (now.fds() - before.fds()) / (double) s.open()));
            }
        }
        List<String> telling = new ArrayList<>();
        for (String line : Files.readAllLines(east.log())) {
            if (line.contains("OutOfMemoryError") || line.contains("native thread") || line.contains("Too many open")
                    || line.contains("ERROR") || line.contains("WARN")) {
                telling.add(line.length() > 200 ? line.substring(0, 200) + "..." : line);
            }
        }
        if (!telling.isEmpty()) {
            why.append("; its log (").append(telling.size()).append(" lines of warnings and errors) ends with: ")
                    .append(String.join(" / ", telling.subList(Math.max(0, telling.size() - 3), telling.size())));
        }
        return why.toString();
    }

    private static String line(Step s) {
        LatencySink.Counts c = s.counts();
        return String.format(Locale.ROOT, "scale: %,d uplinks: east %,d -> %,d threads (%+,d), %,.0f -> %,.0f MiB"
                + " (%,.0f KiB per idle uplink), %,d -> %,d fds, idle CPU %.1f%% of a core; publishing: %,d sent,"
                + " %,d delivered, %,d unacknowledged, %,d out of order, p50 %.2f ms, p99 %.2f ms; east's POSTs:"
                + " %,d, retried %,d, throttled %,d", s.agents(),
                s.before().threads(), s.after().threads(), s.ioThreads(), s.before().rssKib() / 1024.0,
                s.after().rssKib() / 1024.0, s.kibPerUplink(), s.before().fds(), s.after().fds(), s.cpuPercent(),
                s.published().sent(), c.received(), s.published().unacknowledged(), c.outOfOrder(), c.p50Millis(),
                c.p99Millis(), s.posts().batches(), s.posts().retries(), s.posts().throttled());
    }

    /** The full table, the goals and why the stage stopped, under the figures. */
    private static void notes(Figure idle, Figure publish, List<Step> steps, String stopped, int cores, Plan plan) {
        idle.notes.add("Each step: east's PC servlet started afresh (`java -jar gma-pcservlet.jar`, JVM defaults,"
                + (plan.scaleMemory() ? " in memory: --memory" : " spool on") + "), K agents registered (exact names"
                + " `agent-00001@east`, ...) and their uplinks opened by"
                + " one NIO thread in the bench's JVM (HELLO, WELCOME, a PONG to each PING); Threads and VmRSS from"
                + " /proc/PID/status before and 2 s after they opened; CPU (utime + stime) over " + plan
                .scaleIdleSeconds() + " s of idleness. I/O threads: the threads the uplinks added.");
        StringBuilder table = new StringBuilder("| idle uplinks | threads before | after | added | RSS before (MiB)"
                + " | after (MiB) | KiB per idle uplink | fds before | after | idle CPU (% of a core) |\n"
                + "|---|---|---|---|---|---|---|---|---|---|\n");
        for (Step s : steps) {
            table.append(String.format(Locale.ROOT, "| %,d | %,d | %,d | %,d | %,.0f | %,.0f | %,.0f | %,d | %,d | %.1f"
                    + " |\n", s.agents(), s.before().threads(), s.after().threads(), s.ioThreads(),
                    s.before().rssKib() / 1024.0, s.after().rssKib() / 1024.0, s.kibPerUplink(), s.before().fds(),
                    s.after().fds(), s.cpuPercent()));
        }
        idle.notes.add(table.toString());
        publish.notes.add("Each agent publishes one DATA a second (16 bytes: its sequence number and the nanoTime it"
                + " was written) to one consumer in west, through east's and west's PC servlets, for "
                + plan.scaleSeconds() + " s, the sends spread evenly over each second; latency from the write on the"
                + " agent's socket to the consumer's handler, one clock (both in this JVM), of every message but each"
                + " agent's first (the cold start: east's first POST to west opens its connection). Out of order: a"
                + " number not one above the last from its sender. Unacknowledged: sent and not ACKed by east"
                + " (nothing is sent again). Max lag: how late the swarm's thread wrote a send after its time in the"
                + " schedule.");
        StringBuilder pub = new StringBuilder("| agents | sent | delivered | unacknowledged | out of order | p50 (ms)"
                + " | p99 (ms) | max (ms) | swarm's max lag (ms) | east's POSTs | retried | 429/503 |\n"
                + "|---|---|---|---|---|---|---|---|---|---|---|---|\n");
        for (Step s : steps) {
            LatencySink.Counts c = s.counts();
            pub.append(String.format(Locale.ROOT, "| %,d | %,d | %,d | %,d | %,d | %.2f | %.2f | %.1f | %.1f | %,d |"
                    + " %,d | %,d |\n", s.agents(), s.published().sent(), c.received(),
                    s.published().unacknowledged(), c.outOfOrder(), c.p50Millis(), c.p99Millis(), c.maxMillis(),
                    s.published().maxLagMillis(), s.posts().batches(), s.posts().retries(), s.posts().throttled()));
        }
        publish.notes.add(pub.toString());
        int maxIo = 4 + 2 * cores;
        for (Step s : steps) {
            idle.notes.add(String.format(Locale.ROOT, "- Goal, %,d idle uplinks: at most %.0f KiB RSS per idle uplink:"
                    + " %,.0f KiB: **%s**; at most 4 + 2 x %d cores = %d I/O threads: %,d: **%s**", s.agents(),
                    GOAL_KIB_PER_UPLINK, s.kibPerUplink(), s.kibPerUplink() <= GOAL_KIB_PER_UPLINK ? "met" : "not met",
                    cores, maxIo, s.ioThreads(), s.ioThreads() <= maxIo ? "met" : "not met"));
        }
        Step at = steps.stream().filter(s -> s.agents() == GOAL_P99_AGENTS).findFirst().orElse(null);
        publish.notes.add(at == null ? String.format(Locale.ROOT, "- Goal: p99 under %.0f ms at %,d agents x 1 msg/s:"
                + " **not measured** (no step of %,d agents completed)", GOAL_P99_MILLIS, GOAL_P99_AGENTS,
                GOAL_P99_AGENTS) : String.format(Locale.ROOT, "- Goal: p99 under %.0f ms at %,d agents x 1 msg/s: %.2f"
                + " ms, %,d of %,d delivered: **%s**", GOAL_P99_MILLIS, GOAL_P99_AGENTS, at.counts().p99Millis(),
                at.counts().received(), at.published().sent(), at.counts().p99Millis() < GOAL_P99_MILLIS
                && at.counts().received() == at.published().sent() ? "met" : "not met"));
        if (stopped != null) {
            String line = "- **Stopped:** " + stopped;
            idle.notes.add(line);
            publish.notes.add(line);
        }
    }

    /** The goals' lines of the scale figures, for the summary's goals. */
    static List<String> goals(List<Figure> figures) {
        List<String> lines = new ArrayList<>();
        for (Figure f : figures) {
            if (f.id.equals(IDLE) || f.id.equals(PUBLISH)) {
                f.notes.stream().filter(n -> n.startsWith("- Goal") || n.startsWith("- **Stopped"))
                        .map(n -> "- Many thin links: " + n.substring(2)).forEach(lines::add);
            }
        }
        return lines.stream().distinct().toList();
    }

    private static List<String> pcArgs(String domain, String registry, int httpPort, int uplinkPort, boolean memory) {
        List<String> args = new ArrayList<>(List.of("--domain", domain, "--registry", registry, "--http-port",
                Integer.toString(httpPort), "--uplink-port", Integer.toString(uplinkPort)));
        if (memory) {
            args.add("--memory");
        }
        return args;
    }

    private static Proc start(List<Proc> procs, Proc p) throws IOException, InterruptedException {
        procs.add(p);
        p.start().await(UP, START_MILLIS);
        return p;
    }

    private static Path jar(Path home, String path) {
        Path jar = home.resolve(path);
        if (!Files.isRegularFile(jar)) {
            throw new IllegalStateException(jar + " is missing: the scale stage runs the self-contained jars; build"
                    + " them with mvn -B -q install -DskipTests");
        }
        return jar;
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }

    /** The limit on open files of this JVM, which the processes it starts inherit, or "unknown". */
    private static String fdLimit() {
        return ManagementFactory.getOperatingSystemMXBean() instanceof com.sun.management.UnixOperatingSystemMXBean os
                ? String.format(Locale.ROOT, "%,d", os.getMaxFileDescriptorCount()) : "unknown";
    }

    /** MemAvailable from /proc/meminfo, KiB; 0 when it cannot be read. */
    private static long memAvailableKib() throws IOException {
        for (String line : Files.readAllLines(Path.of("/proc/meminfo"))) {
            if (line.startsWith("MemAvailable:")) {
                return Long.parseLong(line.substring("MemAvailable:".length()).replace("kB", "").trim());
            }
        }
        return 0;
    }

    private static void deleteTree(Path dir) throws IOException {
        try (Stream<Path> all = Files.walk(dir)) {
            for (Path p : all.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        }
    }
}
