package io.gma.bench.crash;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code gma bench crash}: the crash harness's long run. Kills PC servlets with SIGKILL at random moments in the
 * middle of a stream, restarts them with the same command line, and counts what the consumer got, for each
 * topology in turn; writes the counts to {@code DIR/crash.md}. Exit status 0 when nothing acknowledged was lost
 * or duplicated, 1 otherwise.
 */
@Command(name = "crash", mixinStandardHelpOptions = true, sortOptions = false,
        header = "Kill PC servlets in the middle of a stream (kill -9), restart them, count lost and duplicated.",
        description = "Every process is a JVM of its own started with the command line a user types: the registry,"
                + " two PC servlets, a consumer and a producer streaming numbered messages across the domains. One"
                + " PC servlet after the other is killed with SIGKILL at a random moment and restarted on its spool."
                + " The goal: 0 lost and 0 duplicated of everything acknowledged to the producer.")
public final class CrashCommand implements Callable<Integer> {
    @Option(names = "--kills", defaultValue = "50", description = "Kills per topology, the two PC servlets in turn"
            + " (default ${DEFAULT-VALUE}).")
    int kills;

    @Option(names = "--topology", split = ",", defaultValue = "CROSS_DOMAIN,RELAYED", description = "CROSS_DOMAIN"
            + " (east posts to west), RELAYED (fw is outbound-only and polls east); default ${DEFAULT-VALUE}.")
    List<CrashHarness.Topology> topologies;

    @Option(names = "--rate", defaultValue = "20000", description = "Messages per second the producer sends, 0 for"
            + " flat out (default ${DEFAULT-VALUE}).")
    int rate;

    @Option(names = "--size", defaultValue = "256", description = "Bytes of data per message, 8 at least (default"
            + " ${DEFAULT-VALUE}).")
    int size;

    @Option(names = "--up-ms", defaultValue = "1000", description = "A PC servlet runs this long at least, twice"
            + " as long at most, between its start and its kill (default ${DEFAULT-VALUE}).")
    long upMillis;

    @Option(names = "--max-spool-bytes", defaultValue = "16777216", description = "Each PC servlet's spool bound;"
            + " its segments are a sixteenth of it, so a small one rolls often and kills fall in rolls too (default"
            + " ${DEFAULT-VALUE}).")
    long maxSpoolBytes;

    @Option(names = "--pc-option", paramLabel = "OPTION", description = "Added to each gma pc command line, once"
            + " per flag: --pc-option=--fsync --pc-option=always, or --pc-option=--memory to watch the loss without a"
            + " spool.")
    List<String> pcOptions = new ArrayList<>();

    @Option(names = "--seed", description = "The random seed of the kills' moments (default: the clock's).")
    Long seed;

    @Option(names = "--out", paramLabel = "DIR", description = "Where crash.md goes, and under DIR/tmp the"
            + " processes' working directories, spools and logs (default: bench/results/crash-<time> under the"
            + " repository, whose tmp/ git ignores).")
    Path out;

    @Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() throws Exception {
        if (size < 8) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--size " + size + " is under 8 bytes");
        }
        Path home = Path.of(System.getProperty("gma.home", "."));
        Path dir = out != null ? out : home.resolve("bench/results").resolve("crash-"
                + LocalDateTime.now().format(DateTimeFormatter.ofPattern("yyyy-MM-dd-HHmmss")));
        long chosenSeed = seed != null ? seed : System.nanoTime();
        List<String> options = new ArrayList<>(pcOptions);
        if (!options.contains("--memory")) {
            options.addAll(List.of("--max-spool-bytes", Long.toString(maxSpoolBytes)));
        }
        StringBuilder md = new StringBuilder("# Crash harness\n\n`gma bench crash --kills " + kills + " --rate "
                + rate + " --size " + size + " --up-ms " + upMillis + " --seed " + chosenSeed + "`, PC servlets with `"
                + String.join(" ", options) + "`\n\n| topology | kills | sent | acknowledged | failed | received |"
                + " lost | duplicated | late | seconds |\n|---|---|---|---|---|---|---|---|---|---|\n");
        boolean clean = true;
        for (CrashHarness.Topology t : topologies) {
            spec.commandLine().getOut().println("gma bench crash: " + t + ", " + kills + " kills, seed " + chosenSeed);
            CrashHarness.Result r = CrashHarness.run(new CrashHarness.Settings(t, kills, rate, size, upMillis, options,
                    chosenSeed, dir.resolve("tmp").resolve(t.name().toLowerCase(Locale.ROOT))), System.out);
            spec.commandLine().getOut().println(r.line());
            spec.commandLine().getOut().println("  spool at the end: " + r.spool());
            md.append("| ").append(t).append(" | ").append(r.kills()).append(" | ").append(r.sent()).append(" | ")
                    .append(r.acked()).append(" | ").append(r.failed()).append(" | ").append(r.received())
                    .append(" | ").append(r.lost()).append(" | ").append(r.duplicated()).append(" | ")
                    .append(r.late()).append(" | ").append(r.millis() / 1000).append(" |\n");
            clean &= r.lost() == 0 && r.duplicated() == 0;
        }
        Files.createDirectories(dir);
        Files.writeString(dir.resolve("crash.md"), md.toString());
        spec.commandLine().getOut().println("gma bench crash: wrote " + dir.resolve("crash.md"));
        return clean ? 0 : 1;
    }
}
