package io.gma.bench;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.ZonedDateTime;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Runs the stages in order, each behind its progress bar, then writes every figure as CSV and PNG and the
 * Markdown summary into the output directory. A stage that fails is named in the summary with its error and the
 * others still run; {@link Result#failures} says so to the caller.
 */
final class Suite {
    /** The stages, in the order they run. */
    static final List<String> STAGES = List.of("pingpong", "streaming", "fanin", "tunnel", "spool", "tokens",
            "tables", "wan", "latency", "archive", "compress", "registry", "scale");
    /**
     * The stages a run has unless --only says: all but archive, whose smoke run alone takes half a minute and whose
     * full run loads 3.6 million rows ({@link ArchiveStage}), compress, a measurement of one choice (issue 26's
     * compression of batches: {@link CompressStage}), registry, which needs a PostgreSQL
     * ({@link RegistryStage}), and scale, which takes minutes and gigabytes ({@link ScaleStage}).
     */
    static final List<String> DEFAULT = STAGES.subList(0, STAGES.size() - 4);

    /**
     * @param out the directory for CSV, PNG and summary.md (created)
     * @param stages which of {@link #STAGES} to run
     * @param skip peers left out ({@link Peers#SKIPPABLE})
     * @param natsServer the nats-server binary, or null to look for it
     * @param command the command line, as the summary shows it
     * @param resultsMd the RESULTS.md whose latest-run section to replace, or null for none
     */
    record Settings(Plan plan, Path out, Set<String> stages, Set<String> skip, Path natsServer, String command,
            Path resultsMd) {
    }

    /** The summary's path and the stages that failed, each with its error. */
    record Result(Path summary, List<String> failures) {
    }

    @FunctionalInterface
    private interface Stage {
        List<Figure> run(Plan plan, Peers peers, Progress progress) throws Exception;
    }

    private Suite() {
    }

    static Result run(Settings s, Progress progress) throws Exception {
        ZonedDateTime began = ZonedDateTime.now();
        long start = System.nanoTime();
        List<String> machine = Machine.describe();
        Files.createDirectories(s.out());
        Set<String> skip = new HashSet<>(s.skip());
        if (!s.stages().contains("pingpong") && !s.stages().contains("streaming")) {
            skip.addAll(Peers.SKIPPABLE); // only those two stages measure NATS and JGroups
        }
        List<Figure> figures = new ArrayList<>();
        List<String> failures = new ArrayList<>();
        Map<String, String> peersRan;
        Map<String, Stage> stages = Map.ofEntries(Map.entry("pingpong", PingPongStage::run),
                Map.entry("streaming", StreamingStage::run), Map.entry("fanin", FanInStage::run),
                Map.entry("tunnel", TunnelStage::run), Map.entry("spool", SpoolStage::run),
                Map.entry("tokens", TokensStage::run), Map.entry("tables", TablesStage::run),
                Map.entry("wan", WanStage::run), Map.entry("latency", LatencyStage::run),
                Map.entry("archive", ArchiveStage::run), Map.entry("compress", CompressStage::run),
                Map.entry("registry", RegistryStage::run), Map.entry("scale", ScaleStage::run));
        try (Peers peers = Peers.start(skip, s.natsServer(), progress)) {
            for (String name : STAGES) {
                if (s.stages().contains(name)) {
                    try {
                        figures.addAll(stages.get(name).run(s.plan(), peers, progress));
                    } catch (Exception e) {
                        progress.finish();
                        String failure = name + ": " + (e.getMessage() != null ? e.getMessage() : e.toString());
                        progress.say("stage " + failure);
                        failures.add(failure);
                    }
                }
            }
            peersRan = peers.status();
        }
        progress.stage("writing figures", figures.size());
        for (Figure f : figures) {
            progress.step(f.id);
            f.writeCsv(s.out());
            Plots.writePng(f, s.out());
        }
        Summary.Run run = new Summary.Run(s.plan().name(), s.command(), began,
                Duration.ofNanos(System.nanoTime() - start), machine, peersRan, figures, failures);
        Path summary = s.out().resolve("summary.md");
        Files.writeString(summary, "# Benchmarks\n\n" + Summary.markdown(run, ""), StandardCharsets.UTF_8);
        if (s.resultsMd() != null) {
            Path prefix = s.resultsMd().toAbsolutePath().getParent().relativize(s.out().toAbsolutePath());
            Summary.updateResults(s.resultsMd(), Summary.markdown(run, prefix.toString().replace('\\', '/') + "/"));
        }
        progress.finish();
        return new Result(summary, failures);
    }
}
