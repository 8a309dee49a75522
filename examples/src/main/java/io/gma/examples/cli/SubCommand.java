package io.gma.examples.cli;

import io.gma.cli.DurationOption;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.stream.Collectors;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/** {@code gma sub NAME...}. */
@Command(name = "sub", mixinStandardHelpOptions = true, header = "Prints what the producers named publish.",
        description = "A consumer that subscribes to the producers named (gma pub NAME makes one), as soon as each"
                + " is registered and again whenever it starts again, and prints each message's data on stdout as it"
                + " is, a line each (or JSON). What it follows is told on stderr. Until Ctrl-C (or --duration).")
final class SubCommand implements Callable<Integer> {
    @Parameters(paramLabel = "NAME", arity = "1..*", description = "A producer's name, such as vmstat@lan; a label"
            + " alone, vmstat, is one in --domain.")
    List<String> names;

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
        // a bare label is one in --domain, as gma pub NAME registers it
        String in = names.stream().map(n -> "'" + endpoint.fullName(spec, "NAME", n.contains("@") ? n : n + "@"
                + endpoint.domain) + "'").collect(Collectors.joining(", "));
        return follow.run(spec, endpoint, "sub", "SELECT name FROM producers WHERE name IN (" + in + ")",
                EventPrinter.Format.RAW, duration);
    }
}
