package io.gma.bench;

import io.gma.bench.registry.LookupBench;
import io.gma.bench.tokens.TokenBench;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalDouble;
import java.util.TreeSet;

/**
 * The Markdown summary of a run: what ran where, the headline ratios (GMA over each peer, per size), the goals,
 * and every figure as its plot, its table and its CSV. Written as {@code summary.md} next to the figures, and, for
 * a full run into the repository's results, between two markers in {@code bench/RESULTS.md}.
 */
final class Summary {
    static final String BEGIN = "<!-- gma bench: the latest full run, written by gma bench; edit outside -->";
    static final String END = "<!-- gma bench: end of the latest full run -->";

    /** What the summary tells of one run. */
    record Run(String plan, String command, ZonedDateTime began, Duration took, List<String> machine,
            Map<String, String> peers, List<Figure> figures, List<String> failures) {
    }

    private Summary() {
    }

    /** The summary; figures' files are linked as {@code linkPrefix + id + ".png"}. */
    static String markdown(Run run, String linkPrefix) {
        StringBuilder md = new StringBuilder();
        md.append("## gma bench, ").append(run.plan()).append(" run of ")
                .append(run.began().format(DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm z", Locale.ROOT)))
                .append("\n\nCommand (from the repository root): `").append(run.command()).append("`; took ")
                .append(run.took().toMinutes()).append(" min ").append(run.took().toSecondsPart()).append(" s.\n\n");
        run.machine().forEach(line -> md.append(line).append('\n'));
        md.append("\nWhat ran, all on loopback:\n\n");
        run.peers().forEach((peer, what) -> md.append("- ").append(peer).append(": ").append(what).append('\n'));
        run.failures().forEach(f -> md.append("- **failed:** ").append(f).append('\n'));
        headline(run.figures(), md);
        goals(run, md);
        for (Figure f : run.figures()) {
            md.append("\n### ").append(f.title).append("\n\n![").append(f.title).append("](").append(linkPrefix)
                    .append(f.id).append(".png)\n\n").append(f.yAxis).append("; CSV: [").append(f.id)
                    .append(".csv](").append(linkPrefix).append(f.id).append(".csv)\n\n").append(f.markdownTable());
            f.notes.forEach(note -> md.append('\n').append(note).append('\n'));
        }
        return md.toString();
    }

    /** Replaces the text between the markers in resultsMd (or adds it after the first paragraph). */
    static void updateResults(Path resultsMd, String summary) throws IOException {
        String text = Files.exists(resultsMd) ? Files.readString(resultsMd, StandardCharsets.UTF_8) : "# Results\n\n";
        String block = BEGIN + "\n" + summary + "\n" + END;
        int begin = text.indexOf(BEGIN);
        int end = text.indexOf(END);
        String updated;
        if (begin >= 0 && end > begin) {
            updated = text.substring(0, begin) + block + text.substring(end + END.length());
        } else {
            int para = text.indexOf("\n\n", text.indexOf("\n\n") + 2);
            int at = para < 0 ? text.length() : para + 2;
            updated = text.substring(0, at) + block + "\n\n" + text.substring(at);
        }
        Files.writeString(resultsMd, updated, StandardCharsets.UTF_8);
    }

    private static void headline(List<Figure> figures, StringBuilder md) {
        Optional<Figure> fig4 = find(figures, "fig4-pingpong-latency");
        Optional<Figure> fig7 = find(figures, "fig7-sockets-vs-http");
        Optional<Figure> stream = find(figures, "bench3-4-streaming");
        Optional<Figure> tunnel = find(figures, "tunnel-streaming");
        md.append("\n### Headline: GMA over each peer, per size\n\nRound trip, median, GMA ÷ peer (below 1: GMA is"
                + " faster). GMA direct is the blocking request/reply; figures 4 and 7.\n\n");
        md.append("| bytes | GMA direct ÷ raw sockets | GMA direct ÷ NATS request/reply | GMA direct ÷ JGroups"
                + " | GMA cross-domain ÷ raw POST |\n|---|---|---|---|---|\n");
        for (double x : xs(fig4, fig7)) {
            String directOverRaw = ratio(fig4, Peers.GMA_BLOCKING, Peers.RAW, x);
            md.append("| ").append(Figure.number(x))
                    .append(" | ").append(directOverRaw.equals("-") ? ratio(fig7, Peers.GMA_DIRECT, Peers.RAW, x)
                            : directOverRaw)
                    .append(" | ").append(ratio(fig4, Peers.GMA_BLOCKING, Peers.NATS_REQUEST, x))
                    .append(" | ").append(ratio(fig4, Peers.GMA_BLOCKING, Peers.JGROUPS, x))
                    .append(" | ").append(ratio(fig7, Peers.GMA_CROSS, Peers.RAW_POST, x)).append(" |\n");
        }
        md.append("\nStreaming, GMA ÷ peer (above 1: GMA is faster): messages/s one producer to one consumer; across"
                + " domains, MiB/s against raw POSTs of 1 MiB bodies.\n\n");
        md.append("| bytes | GMA direct ÷ raw sockets | GMA direct ÷ NATS publish/subscribe | GMA direct ÷ JGroups"
                + " | GMA cross-domain ÷ raw POST |\n|---|---|---|---|---|\n");
        for (double x : xs(stream, tunnel)) {
            md.append("| ").append(Figure.number(x))
                    .append(" | ").append(ratio(stream, Peers.GMA_DIRECT, Peers.RAW, x))
                    .append(" | ").append(ratio(stream, Peers.GMA_DIRECT, Peers.NATS_PUBSUB, x))
                    .append(" | ").append(ratio(stream, Peers.GMA_DIRECT, Peers.JGROUPS, x))
                    .append(" | ").append(ratio(tunnel, Peers.GMA_CROSS, Peers.RAW_POST_BODIES, x)).append(" |\n");
        }
    }

    private static void goals(Run run, StringBuilder md) {
        Optional<Figure> fig4 = find(run.figures(), "fig4-pingpong-latency");
        Optional<Figure> stream = find(run.figures(), "bench3-4-streaming");
        md.append("\n### Goals\n\n");
        for (int size : new int[] {64, 1024}) {
            md.append("- GMA direct request/reply round trip at or below NATS request/reply, ").append(size)
                    .append(" B: ").append(goal(fig4, Peers.GMA_BLOCKING, Peers.NATS_REQUEST, size, false, 1, "µs"))
                    .append('\n');
        }
        md.append("- GMA direct streaming of 1 KB messages at or above JGroups unicast: ")
                .append(goal(stream, Peers.GMA_DIRECT, Peers.JGROUPS, 1024, true, 1, "messages/s")).append('\n');
        Optional<Figure> spool = find(run.figures(), SpoolStage.STREAM);
        md.append("- Cross-domain streaming with the spool (fsync batch) at least 70% of in memory, 1 KB: ")
                .append(goal(spool, SpoolStage.BATCH, SpoolStage.MEMORY, 1024, true, 0.70, "messages/s"))
                .append('\n');
        Optional<Figure> spoolRtt = find(run.figures(), SpoolStage.ROUND_TRIP);
        md.append("- Cross-domain round trip with the spool (fsync batch) at most 1.5x of in memory, 64 B: ")
                .append(goal(spoolRtt, SpoolStage.BATCH, SpoolStage.MEMORY, 64, false, 1.5, "µs")).append('\n');
        issue26(run.figures(), stream, fig4, md);
        Optional<Figure> lookups = find(run.figures(), RegistryStage.FIGURE);
        for (double x : xs(lookups, Optional.empty())) {
            md.append("- Registry look-up at most 1.5x a plain servlet's SELECT by JDBC, ").append(Figure.number(x))
                    .append(" endpoints in PostgreSQL: ").append(goal(lookups, LookupBench.REGISTRY, LookupBench.PLAIN,
                            x, false, RegistryStage.GOAL, "µs")).append('\n');
        }
        ScaleStage.goals(run.figures()).forEach(line -> md.append(line).append('\n'));
        TablesStage.goals(run.figures()).forEach(line -> md.append(line).append('\n'));
        ArchiveStage.goals(run.figures()).forEach(line -> md.append(line).append('\n'));
        Optional<Figure> tokens = find(run.figures(), TokensStage.ROUND_TRIP);
        for (double x : xs(tokens, Optional.empty())) {
            md.append("- Secure cross-domain round trip with Ed25519 gma2 tokens within 10% of HMAC gma1 tokens, ")
                    .append(Figure.number(x)).append(" B: ").append(goal(tokens, TokenBench.SIGNED, TokenBench.HMAC, x,
                            false, TokenBench.GOAL, "µs")).append('\n');
        }
    }

    /**
     * Issue 26's goals on loopback: the cross-domain round trip and stream against their baselines, and large
     * messages against raw sockets (its WAN goals are in the WAN stage's notes).
     */
    private static void issue26(List<Figure> figures, Optional<Figure> stream, Optional<Figure> fig4,
            StringBuilder md) {
        Optional<Figure> fig7 = find(figures, "fig7-sockets-vs-http");
        md.append("- Cross-domain round trip within 2.5x of the raw POST echo, 1 KB: ")
                .append(goal(fig7, Peers.GMA_CROSS, Peers.RAW_POST, 1024, false, 2.5, "µs")).append('\n');
        // the tunnel figure's y is MiB/s; its third column is messages/s, as the direct stream's y
        OptionalDouble cross = find(figures, "tunnel-streaming").map(f -> f.value(Peers.GMA_CROSS, 1024, 2))
                .orElse(OptionalDouble.empty());
        OptionalDouble direct = stream.map(f -> f.y(Peers.GMA_DIRECT, 1024)).orElse(OptionalDouble.empty());
        md.append("- Cross-domain streaming at least half of GMA direct's messages/s, 1 KB: ")
                .append(judged(cross, direct, true, 0.5, "messages/s",
                        cross.isEmpty() ? Peers.GMA_CROSS : Peers.GMA_DIRECT, 1024)).append('\n');
        for (int size : new int[] {256 * 1024, 1024 * 1024}) {
            md.append("- GMA direct request/reply round trip within 1.3x of raw sockets, ").append(Figure.number(size))
                    .append(" B: ").append(goal(fig4, Peers.GMA_BLOCKING, Peers.RAW, size, false, 1.3, "µs"))
                    .append('\n');
        }
        Optional<Figure> fig5 = find(figures, "fig5-pingpong-bandwidth");
        for (String gma : List.of(Peers.GMA_BLOCKING, Peers.GMA_NONBLOCKING)) {
            md.append("- Ping-pong bandwidth at least 70% of raw sockets', ").append(gma).append(", 1,048,576 B: ")
                    .append(goal(fig5, gma, Peers.RAW, 1024 * 1024, true, 0.70, "MiB/s")).append('\n');
        }
    }

    /**
     * Whether {@code gma}'s y at x is at most (or, {@code higher}, at least) {@code factor} times {@code peer}'s,
     * the two values and their ratio.
     */
    private static String goal(Optional<Figure> f, String gma, String peer, double x, boolean higher, double factor,
            String unit) {
        OptionalDouble a = f.map(fig -> fig.y(gma, x)).orElse(OptionalDouble.empty());
        OptionalDouble b = f.map(fig -> fig.y(peer, x)).orElse(OptionalDouble.empty());
        return judged(a, b, higher, factor, unit, a.isEmpty() ? gma : peer, x);
    }

    /**
     * Whether {@code a} is at most (or, {@code higher}, at least) {@code factor} times {@code b}, the two values
     * and their ratio; or that {@code missing} has no point at x.
     */
    private static String judged(OptionalDouble a, OptionalDouble b, boolean higher, double factor, String unit,
            String missing, double x) {
        if (a.isEmpty() || b.isEmpty()) {
            return "not measured in this run (" + missing + " has no point at " + Figure.number(x) + " B)";
        }
        boolean met = higher ? a.getAsDouble() >= factor * b.getAsDouble()
                : a.getAsDouble() <= factor * b.getAsDouble();
        return String.format(Locale.ROOT, "%s %s against %s %s (%.2fx): **%s**", Figure.number(a.getAsDouble()), unit,
                Figure.number(b.getAsDouble()), unit, a.getAsDouble() / b.getAsDouble(), met ? "met" : "not met");
    }

    private static String ratio(Optional<Figure> f, String a, String b, double x) {
        OptionalDouble ya = f.map(fig -> fig.y(a, x)).orElse(OptionalDouble.empty());
        OptionalDouble yb = f.map(fig -> fig.y(b, x)).orElse(OptionalDouble.empty());
        return ya.isPresent() && yb.isPresent() && yb.getAsDouble() > 0
                ? String.format(Locale.ROOT, "%.2fx", ya.getAsDouble() / yb.getAsDouble()) : "-";
    }

    private static TreeSet<Double> xs(Optional<Figure> a, Optional<Figure> b) {
        TreeSet<Double> xs = new TreeSet<>();
        for (Optional<Figure> f : List.of(a, b)) {
            f.ifPresent(fig -> fig.series.values().forEach(points -> points.forEach(p -> xs.add(p[0]))));
        }
        return xs;
    }

    private static Optional<Figure> find(List<Figure> figures, String id) {
        return figures.stream().filter(f -> f.id.equals(id)).findFirst();
    }
}
