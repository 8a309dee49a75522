package io.gma.examples.cli;

import io.gma.cli.Cli;
import io.gma.cli.ClientSecurityOptions;
import io.gma.cli.RegistryOption;
import io.gma.cli.Running;
import io.gma.registry.api.RegistryException;
import io.gma.security.Security;
import java.io.PrintWriter;
import java.math.BigDecimal;
import java.time.LocalTime;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.stream.Collectors;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code gma top}, also {@code gma status}. */
@Command(name = "top", aliases = "status", mixinStandardHelpOptions = true,
        header = "Live rates and queues of PC servlets and endpoints.",
        description = "Asks the registry for every PC servlet (the domains view) and every endpoint that serves"
                + " /metrics (--metrics-port), reads their counters every --delay seconds and shows rates and queues:"
                + " redrawn in place when stdout is a terminal, as top does, else one view after another (as top -b)."
                + " Until Ctrl-C, or --iterations views.")
final class TopCommand implements Callable<Integer> {
    /** Clears a terminal and puts the cursor home (ANSI). */
    private static final String CLEAR = "\033[H\033[2J";

    @Mixin
    RegistryOption registry;

    @Mixin
    ClientSecurityOptions security;

    @Option(names = {"-d", "--delay"}, paramLabel = "SECONDS", defaultValue = "2",
            description = "Seconds between views, over which rates are counted (default ${DEFAULT-VALUE}).")
    BigDecimal delay;

    @Option(names = {"-n", "--iterations"}, paramLabel = "N", defaultValue = "0",
            description = "Views to show before it ends; 0 until Ctrl-C (default ${DEFAULT-VALUE}).")
    int iterations;

    @Option(names = {"-b", "--batch"}, description = "One view after another, never redrawn in place, even on a"
            + " terminal.")
    boolean batch;

    @Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() throws Exception {
        Cli.check(spec, delay.compareTo(new BigDecimal("0.1")) >= 0 && delay.compareTo(new BigDecimal(3600)) <= 0,
                "--delay " + delay.toPlainString() + " is outside 0.1..3600 seconds");
        Cli.check(spec, iterations >= 0, "--iterations " + iterations + " is negative");
        Security secure = security.security(spec);
        Survey survey = new Survey(QueryCommand.client(spec, registry, secure), secure);
        boolean inPlace = !batch && System.console() != null;
        long pause = delay.movePointRight(3).longValue();
        PrintWriter out = spec.commandLine().getOut();
        return Running.until(0, null, () -> {
            Survey.Look before = survey.look(); // a registry that does not answer at the start ends it: exit 1
            for (int view = 1; iterations == 0 || view <= iterations; view++) {
                Thread.sleep(pause);
                String shown;
                try {
                    Survey.Look now = survey.look();
                    shown = draw(before, now);
                    before = now;
                } catch (RegistryException e) {
                    String what = e.status() == 0 ? "does not answer" : e.status() / 100 == 4 ? "refused" : "failed";
                    shown = "gma top - " + LocalTime.now().truncatedTo(ChronoUnit.SECONDS) + "  the registry " + what
                            + " (" + e.getMessage() + "); asking again in " + delay.toPlainString() + " s\n";
                }
                out.print((inPlace ? CLEAR : view > 1 ? "\n" : "") + shown);
                out.flush();
            }
        }, survey);
    }

    /** One view: the rates of the counters between two looks, the queues as the second found them. */
    String draw(Survey.Look before, Survey.Look now) {
        double seconds = Math.max(1e-3, (now.nanos() - before.nanos()) / 1e9);
        StringBuilder b = new StringBuilder();
        b.append("gma top - ").append(LocalTime.now().truncatedTo(ChronoUnit.SECONDS)).append("  registry ")
                .append(registry.url()).append("  every ").append(delay.toPlainString()).append(" s\n");
        b.append("endpoints by domain: ").append(now.endpointsByDomain().isEmpty() ? "none" : now.endpointsByDomain()
                .entrySet().stream().map(e -> e.getKey() + " " + e.getValue()).collect(Collectors.joining(", ")))
                .append("\n\n");
        List<String[]> pcs = new ArrayList<>();
        pcs.add(new String[] {"PC SERVLET", "RECEIVED/s", "SENT/s", "DELIVERED/s", "RELAYED/s", "QUEUED", "QUEUED KiB",
            "CLIENTS", "RETRIES", "REFUSED", "UNSENDABLE", "URL"});
        List<String> failures = new ArrayList<>();
        for (Survey.Part p : now.pcServlets()) {
            if (p.failure() != null) {
                failures.add(p.name() + ": " + p.failure());
                continue;
            }
            Map<String, Double> was = previous(before.pcServlets(), p);
            pcs.add(new String[] {p.name(), rate(p, was, "messagesReceived", seconds),
                rate(p, was, "messagesSent", seconds), rate(p, was, "delivered", seconds),
                rate(p, was, "relayed", seconds), count(p, "queuedMessages"), kib(p, "queuedBytes"),
                count(p, "clients"), count(p, "retries"), count(p, "refused"), count(p, "unsendable"),
                p.url()});
        }
        table(b, pcs);
        b.append('\n');
        List<String[]> endpoints = new ArrayList<>();
        endpoints.add(new String[] {"ENDPOINT", "OUT/s", "IN/s", "QUEUED", "QUEUED KiB", "RECONNECTS", "DROPS",
            "REJECTED", "DUPLICATES"});
        for (Survey.Part p : now.endpoints()) {
            if (p.failure() != null) {
                failures.add(p.name() + ": " + p.failure());
                continue;
            }
            Map<String, Double> was = previous(before.endpoints(), p);
            endpoints.add(new String[] {p.name(), rate(p, was, "gma_endpoint_messages_out_total", seconds),
                rate(p, was, "gma_endpoint_messages_in_total", seconds), count(p, "gma_endpoint_queued_messages"),
                kib(p, "gma_endpoint_queued_bytes"), count(p, "gma_endpoint_reconnects_total"),
                count(p, "gma_endpoint_drops_total"), count(p, "gma_endpoint_rejected_total"),
                count(p, "gma_endpoint_duplicates_total")});
        }
        if (endpoints.size() == 1) {
            b.append("no endpoint serves /metrics: start them with --metrics-port to see them here\n");
        } else {
            table(b, endpoints);
        }
        if (!failures.isEmpty()) {
            b.append("\nnot answering:\n");
            failures.forEach(f -> b.append("  ").append(f).append('\n'));
        }
        return b.toString();
    }

    private static Map<String, Double> previous(List<Survey.Part> before, Survey.Part part) {
        for (Survey.Part p : before) {
            if (p.name().equals(part.name()) && p.failure() == null) {
                return p.values();
            }
        }
        return null;
    }

    /** The counter's rate a second; "-" when there is nothing to compare with, or it went back (a restart). */
    private static String rate(Survey.Part p, Map<String, Double> was, String counter, double seconds) {
        Double now = p.values().get(counter);
        Double then = was == null ? null : was.get(counter);
        if (now == null || then == null || now < then) {
            return "-";
        }
        return String.format(Locale.ROOT, "%,.0f", (now - then) / seconds);
    }

    private static String count(Survey.Part p, String value) {
        Double v = p.values().get(value);
        return v == null ? "-" : String.format(Locale.ROOT, "%,.0f", v);
    }

    private static String kib(Survey.Part p, String bytes) {
        Double v = p.values().get(bytes);
        return v == null ? "-" : String.format(Locale.ROOT, "%,.0f", v / 1024);
    }

    /** Rows aligned: the first column and a URL to the left, the numbers (and their headers) to the right. */
    private static void table(StringBuilder b, List<String[]> rows) {
        int[] width = new int[rows.get(0).length];
        for (String[] row : rows) {
            for (int i = 0; i < row.length; i++) {
                width[i] = Math.max(width[i], row[i].length());
            }
        }
        for (String[] row : rows) {
            StringBuilder line = new StringBuilder();
            for (int i = 0; i < row.length; i++) {
                boolean left = i == 0 || "URL".equals(rows.get(0)[i]);
                String cell = left ? row[i] + " ".repeat(width[i] - row[i].length())
                        : " ".repeat(width[i] - row[i].length()) + row[i];
                line.append(i == 0 ? "" : "  ").append(cell);
            }
            b.append(line.toString().stripTrailing()).append('\n');
        }
    }
}
