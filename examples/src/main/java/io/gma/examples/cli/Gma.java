package io.gma.examples.cli;

import io.gma.cli.Cli;
import io.gma.pcservlet.PcCommand;
import io.gma.registry.RegistryCommand;
import java.io.PrintWriter;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Spec;

/**
 * The {@code gma} command ({@code ./gma} at the repository root). It runs through {@link Cli}, as the registry
 * and PC servlet jars run their commands: exit status 0 ok, 1 a failure at run time, 2 a usage error; errors
 * are one line, with the stack trace only under {@code --verbose}.
 */
@Command(name = "gma", mixinStandardHelpOptions = true, version = "gma 0.1.0",
        description = "GMA: monitoring events between producers and consumers, across domains.",
        subcommands = {CommandLine.HelpCommand.class, DemoCommand.class, RegistryCommand.class, PcCommand.class,
            QueryCommand.class, SelectCommand.class, PingCommand.class, PongCommand.class, AgentCommand.class,
            TailCommand.class, io.gma.archiver.ArchiveCommand.class, PubCommand.class, SubCommand.class,
            RequestCommand.class, TopCommand.class, KeysCommand.class})
public final class Gma implements Callable<Integer> {
    @Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() {
        throw new CommandLine.ParameterException(spec.commandLine(), "give a command");
    }

    public static void main(String[] args) {
        Cli.quietLogging(drawing(args), args);
        Cli.exit("gma", commandLine(), args);
    }

    /** Runs the command line; the exit status. */
    static int run(String[] args, PrintWriter out, PrintWriter err) {
        Cli.quietLogging(drawing(args), args);
        return Cli.run("gma", commandLine().setOut(out).setErr(err), args);
    }

    /** gma and its commands, with bench in the list. */
    private static CommandLine commandLine() {
        CommandLine cmd = new CommandLine(new Gma());
        cmd.getHelpSectionMap().put(CommandLine.Model.UsageMessageSpec.SECTION_KEY_COMMAND_LIST,
                help -> withBench(help.commandList()));
        return cmd;
    }

    /**
     * Whether the command draws on the terminal (demo, query, select, ping, tail, pub, sub, request, top), and so
     * logs only WARN and up, so that its output stays readable; the servers (registry, pc, pong, agent) log at INFO.
     */
    static boolean drawing(String[] args) {
        String command = java.util.Arrays.stream(args).filter(a -> !a.startsWith("-")).findFirst().orElse("");
        return java.util.Set.of("demo", "query", "select", "ping", "tail", "pub", "sub", "request", "top", "status")
                .contains(command);
    }

    /**
     * The command list with {@code bench} added, aligned with the others. The benchmark suite is no subcommand
     * here (bench/ depends on this module): the {@code ./gma} launcher runs it from bench/'s own jar.
     */
    static String withBench(String commandList) {
        String first = commandList.lines().findFirst().orElse("  demo  ");
        int column = first.indexOf(' ', first.indexOf(first.strip()));
        while (column < first.length() && first.charAt(column) == ' ') {
            column++;
        }
        return commandList + String.format("  %-" + Math.max(1, column - 2) + "s%s%n", "bench",
                "Runs the benchmark suite (from the ./gma launcher; gma bench --help).");
    }
}
