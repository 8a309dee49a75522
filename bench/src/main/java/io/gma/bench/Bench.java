package io.gma.bench;

import io.gma.bench.crash.CrashCommand;
import io.gma.bench.tables.LatestBench;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.LocalDate;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.stream.IntStream;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code gma bench}: the jGMA paper's benchmarks re-run beside raw sockets, raw HTTP, NATS and JGroups, on
 * loopback, writing CSV, PNG plots and a Markdown summary. The {@code ./gma} launcher runs it from the shaded
 * bench jar ({@code gma bench ...}); so does {@code mvn -Pbench verify -pl bench -am}. Exit status: 0 ok, 1 a
 * stage failed or the run could not start, 2 a usage error.
 */
@Command(name = "gma bench", mixinStandardHelpOptions = true, version = "gma bench 0.1.0", sortOptions = false,
        subcommands = CrashCommand.class,
        header = "Run the benchmark suite: the jGMA paper's figures, GMA beside raw sockets, raw HTTP, NATS and"
                + " JGroups.",
        description = {"Stages, in order: pingpong (figures 4 and 5), streaming (benchmarks 3 and 4), fanin (figure"
                + " 6), tunnel (figure 7), spool (durable delivery: the PC servlets' spool against memory), tokens"
                + " (Ed25519 against HMAC tokens: the cost of a check, and the secure cross-domain round trip),"
                + " tables (monitoring tables: continuous queries against plain streaming, push-down, and latest"
                + " queries over 1,000 producers), wan (across domains through a delaying, rate-limited proxy),"
                + " latency (64 B round trips back to back and at fixed offered rates, corrected for coordinated"
                + " omission: p50 to p99.99 in one domain and across domains);"
                + " with --only, archive (the archiver's ingest into H2, and PostgreSQL when one is given as for"
                + " registry, against a plain JDBC batch insert; history query latency over an hour of 1,000 hosts),"
                + " compress (batches between PC servlets compressed: zstd, lz4 and Deflater on the agent's rows, text"
                + " and random bytes, then streaming with compression auto and off in turns: bytes on the wire and"
                + " messages/s),"
                + " registry (look-ups with 100,000 endpoints in the PostgreSQL that "
                + RegistryStage.DATABASE + " names, beside a plain servlet), scale (many thin links: 1,000, 5,000"
                + " and 10,000 idle uplinks to one PC servlet, its threads, memory and CPU, then each agent"
                + " publishing 1 msg/s across domains: delivery, order and latency)."
                + " Everything runs on loopback; NATS needs nats-server (Debian: apt-get install nats-server) and is"
                + " skipped, with the reason in the summary, without it.",
            "Writes DIR/<figure>.csv and .png and DIR/summary.md; a full run into the default directory also"
                + " replaces the latest-run section of bench/RESULTS.md. Methodology: bench/README.md."})
public final class Bench implements Callable<Integer> {
    @Option(names = "--quick", description = "Fewer sizes, rounds and seconds: under 3 minutes on 2 cores, for a"
            + " look rather than a record. The full run takes under 30.")
    boolean quick;

    @Option(names = "--out", paramLabel = "DIR", description = "Where to write (default: bench/results/<today>"
            + " under the repository; <today>-quick for --quick; -<stages> added for --only).")
    Path out;

    @Option(names = "--only", paramLabel = "STAGE", split = ",", description = "Run only these stages: pingpong,"
            + " streaming, fanin, tunnel, spool, tokens, tables, wan, latency, archive, compress, registry, scale"
            + " (comma-separated; default all but archive, compress, registry and scale).")
    List<String> only;

    @Option(names = "--scale-agents", paramLabel = "K", split = ",", description = "The scale stage's steps:"
            + " idle uplinks to one PC servlet, each K publishing after (default 1000,5000,10000; --quick 1000).")
    int[] scaleAgents;

    @Option(names = "--scale-seconds", paramLabel = "SECONDS", description = "How long the scale stage's agents"
            + " publish at each step, 1 message a second each (default 30; --quick 10).")
    Integer scaleSeconds;

    @Option(names = "--scale-memory", description = "The scale stage's PC servlets without a spool (gma pc"
            + " --memory), to tell the spool's share of the latency from the links'.")
    boolean scaleMemory;

    @Option(names = "--skip", paramLabel = "PEER", split = ",", description = "Leave out these peers: nats,"
            + " jgroups (comma-separated).")
    List<String> skip;

    @Option(names = "--nats-server", paramLabel = "PATH", description = "The nats-server binary (default: PATH,"
            + " then /usr/sbin/nats-server).")
    Path natsServer;

    @Spec
    CommandLine.Model.CommandSpec spec;

    /** The plan a test substitutes; null means --quick's or the full one. */
    Plan plan;
    /** Where progress is drawn; a test passes null for silence. */
    PrintStream progressTo = System.err;

    public static void main(String[] args) {
        PrintWriter out = new PrintWriter(System.out, true);
        PrintWriter err = new PrintWriter(System.err, true);
        int status = run(args, new Bench(), out, err);
        out.flush();
        err.flush();
        System.exit(status);
    }

    /** Runs the command line; the exit status. */
    static int run(String[] args, Bench bench, PrintWriter out, PrintWriter err) {
        quietLogging();
        CommandLine cmd = new CommandLine(bench).setOut(out).setErr(err);
        cmd.setParameterExceptionHandler((e, given) -> {
            e.getCommandLine().getErr().println("gma bench: " + e.getMessage() + " (see gma bench --help)");
            return 2;
        });
        cmd.setExecutionExceptionHandler((e, commandLine, parsed) -> {
            commandLine.getErr().println("gma bench: " + (e.getMessage() != null ? e.getMessage() : e.toString()));
            return 1;
        });
        return cmd.execute(args);
    }

    @Override
    public Integer call() throws Exception {
        Set<String> stages = new LinkedHashSet<>(only == null ? Suite.DEFAULT : only);
        for (String s : stages) {
            check(Suite.STAGES.contains(s), "--only " + s + " is not a stage: " + String.join(", ", Suite.STAGES));
        }
        check(!stages.contains("registry") || RegistryStage.database() != null, "--only registry needs a"
                + " PostgreSQL: set " + RegistryStage.DATABASE + " to its JDBC URL, user and password in it"
                + " (jdbc:postgresql://HOST:PORT/DB?user=U&password=P)");
        Set<String> skipped = new LinkedHashSet<>(skip == null ? List.of() : skip);
        for (String p : skipped) {
            check(Peers.SKIPPABLE.contains(p), "--skip " + p + " is not a peer one can skip: nats, jgroups");
        }
        check(natsServer == null || Files.isExecutable(natsServer), "--nats-server " + natsServer
                + " is not an executable file");
        Path home = Path.of(System.getProperty("gma.home", "."));
        // a quick run or a part never overwrites the day's full run, which RESULTS.md links to
        String name = LocalDate.now() + (quick ? "-quick" : "") + (only == null ? "" : "-" + String.join("-", stages));
        Path dir = out != null ? out : home.resolve("bench/results").resolve(name);
        Path resultsMd = home.resolve("bench/RESULTS.md");
        boolean record = !quick && plan == null && out == null && only == null && Files.exists(resultsMd);
        check(scaleAgents == null || IntStream.of(scaleAgents).allMatch(k -> k >= 1 && k <= 100_000),
                "--scale-agents takes counts from 1 to 100,000");
        check(scaleSeconds == null || scaleSeconds >= 1, "--scale-seconds " + scaleSeconds + " is under 1");
        Plan chosen = (plan != null ? plan : quick ? Plan.QUICK : Plan.FULL).withScale(scaleAgents, scaleSeconds,
                scaleMemory);
        // how the summary says it was run: ./gma bench ARGS, or the Maven profile with -Dbench.args
        String launcher = System.getProperty("gma.command", "./gma bench");
        List<String> given = spec.commandLine().getParseResult().originalArgs();
        String command = launcher.startsWith("mvn") ? launcher + (given.isEmpty() ? ""
                : " \"-Dbench.args=" + String.join(" ", given) + "\"")
                : launcher + String.join("", given.stream().map(a -> " " + a).toList());
        Progress progress = new Progress(progressTo, System.console() != null);
        Suite.Result result = Suite.run(new Suite.Settings(chosen, dir, stages, skipped, natsServer, command,
                record ? resultsMd : null), progress);
        spec.commandLine().getOut().println("gma bench: wrote " + result.summary().getParent()
                + (record ? " and the latest run in " + resultsMd : ""));
        for (String f : result.failures()) {
            spec.commandLine().getErr().println("gma bench: stage " + f);
        }
        return result.failures().isEmpty() ? 0 : 1;
    }

    private void check(boolean ok, String problem) {
        if (!ok) {
            throw new CommandLine.ParameterException(spec.commandLine(), problem);
        }
    }

    /**
     * The registry, Jetty and JGroups stay quiet under the progress bars; warnings still show, but for the
     * endpoints': each says in a WARN line that it runs plaintext, and the tables stage starts 1,000 (a stage checks
     * what it measured arrived). And the caps on connections not yet authenticated are those of many processes
     * ({@link LatestBench#oneProcessOfMany}).
     */
    private static void quietLogging() {
        String[][] defaults = {{"org.slf4j.simpleLogger.defaultLogLevel", "warn"},
            {"org.slf4j.simpleLogger.log.io.gma.registry.RegistryCore", "error"},
            {"org.slf4j.simpleLogger.log.io.gma.client.Endpoint", "error"}, {"java.awt.headless", "true"}};
        for (String[] d : defaults) {
            if (System.getProperty(d[0]) == null) {
                System.setProperty(d[0], d[1]);
            }
        }
        LatestBench.oneProcessOfMany();
    }
}
