package io.gma.examples.cli;

import io.gma.cli.DurationOption;
import io.gma.cli.Running;
import io.gma.client.Consumer;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.time.LocalTime;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/** {@code gma tail "<SQL>"}. */
@Command(name = "tail", mixinStandardHelpOptions = true, header = "Prints the events of producers an SQL query names.",
        description = "A consumer that subscribes to the producers an SQL query names (its first column) and"
                + " prints their events as they arrive, a line each. Until Ctrl-C (or --duration).")
final class TailCommand implements Callable<Integer> {
    @Parameters(paramLabel = "SQL", description = "Names the producers, such as \"SELECT name FROM producers\".")
    String sql;

    @Mixin
    EndpointOptions endpoint;

    @Mixin
    DurationOption duration;

    @Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() throws Exception {
        PrintWriter out = spec.commandLine().getOut();
        Consumer tail = endpoint.apply(Consumer.builder(), spec).label("tail").onMessage(m -> {
            String text = new String(m.data(), StandardCharsets.UTF_8).strip();
            synchronized (out) {
                for (String line : text.split("\n")) {
                    out.println(LocalTime.now().truncatedTo(ChronoUnit.MILLIS) + " " + m.from() + ": " + line);
                }
                out.flush();
            }
        }).build();
        int subscribed;
        try {
            List<List<Object>> rows = tail.query(sql).rows();
            for (List<Object> row : rows) {
                tail.subscribe(String.valueOf(row.get(0)), null);
            }
            subscribed = rows.size();
        } catch (Exception e) {
            tail.close();
            throw e;
        }
        return Running.until(duration.seconds(), () -> out.println("tail is " + tail.name() + ", subscribed to "
                + subscribed + " producers"), null, tail);
    }
}
