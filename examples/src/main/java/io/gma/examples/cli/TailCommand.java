package io.gma.examples.cli;

import io.gma.cli.DurationOption;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/** {@code gma tail "<SQL>"}. */
@Command(name = "tail", mixinStandardHelpOptions = true, header = "Prints the events of producers an SQL query names.",
        description = "A consumer that follows an SQL query on the registry: it subscribes to the producers the"
                + " query's first column names, to those that appear later too, drops those that leave, and prints"
                + " their events as they arrive, a line each (or JSON). What it follows is told on stderr. Until"
                + " Ctrl-C (or --duration).")
final class TailCommand implements Callable<Integer> {
    @Parameters(paramLabel = "SQL", description = "Names the producers in its first column, such as"
            + " \"SELECT name FROM producers WHERE domain = 'east'\".")
    String sql;

    @Mixin
    EndpointOptions endpoint;

    @Mixin
    FollowOption follow;

    @Mixin
    DurationOption duration;

    @Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() throws Exception {
        return follow.run(spec, endpoint, "tail", sql, EventPrinter.Format.LINES,
                duration);
    }
}
