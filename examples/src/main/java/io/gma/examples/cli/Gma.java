package io.gma.examples.cli;

import java.io.PrintWriter;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * The {@code gma} command ({@code ./gma} at the repository root). Exit status: 0 ok, 1 a failure at run
 * time, 2 a usage error; errors are one line, with the stack trace only under {@code --verbose}.
 */
@Command(name = "gma", mixinStandardHelpOptions = true, version = "gma 0.1.0",
        description = "GMA: monitoring events between producers and consumers, across domains.",
        subcommands = {DemoCommand.class, RegistryCommand.class, PcCommand.class, QueryCommand.class,
            PingCommand.class, PongCommand.class, AgentCommand.class, TailCommand.class, KeysCommand.class})
public final class Gma implements Callable<Integer> {
    @Spec
    CommandLine.Model.CommandSpec spec;

    @Option(names = "--verbose", description = "Stack traces with errors.", scope = CommandLine.ScopeType.INHERIT)
    boolean verbose;

    @Override
    public Integer call() {
        throw new CommandLine.ParameterException(spec.commandLine(), "give a command");
    }

    public static void main(String[] args) {
        PrintWriter out = new PrintWriter(System.out, true);
        PrintWriter err = new PrintWriter(System.err, true);
        int status = run(args, out, err);
        out.flush(); // print() does not flush by itself, and exit would lose it
        err.flush();
        System.exit(status);
    }

    /** Runs the command line; the exit status. */
    static int run(String[] args, PrintWriter out, PrintWriter err) {
        quietLogging(args);
        Gma gma = new Gma();
        CommandLine cmd = new CommandLine(gma).setOut(out).setErr(err);
        try {
            cmd.setDefaultValueProvider(Defaults.fromEnvironment());
        } catch (IllegalArgumentException badFile) {
            err.println("gma: " + badFile.getMessage()); // and no help either: the file is needed for it
            return 2;
        }
        cmd.getCommandSpec().usageMessage().footer(Defaults.FOOTER);
        cmd.getSubcommands().values().forEach(c -> c.getCommandSpec().usageMessage().footer(Defaults.FOOTER));
        cmd.getHelpSectionMap().put(CommandLine.Model.UsageMessageSpec.SECTION_KEY_COMMAND_LIST,
                help -> withBench(help.commandList()));
        cmd.setParameterExceptionHandler((e, given) -> {
            // a usage error: one line, not the whole usage text
            e.getCommandLine().getErr().println(e.getMessage() + " (see gma " + (e.getCommandLine() == cmd ? ""
                    : e.getCommandLine().getCommandName() + " ") + "--help)");
            return 2;
        });
        cmd.setExecutionExceptionHandler((e, commandLine, parsed) -> {
            commandLine.getErr().println("gma: " + (e.getMessage() != null ? e.getMessage() : e.toString()));
            if (gma.verbose) {
                e.printStackTrace(commandLine.getErr());
            }
            return 1;
        });
        return cmd.execute(args);
    }

    /**
     * One line per event, with the time; Jetty and the connection pool only at WARN. The servers (registry,
     * pc, pong, agent) log at INFO; the commands that draw on the terminal (demo, query, ping, tail) only
     * WARN and up, so that their output stays readable. Properties the user set are left alone.
     */
    static void quietLogging(String[] args) {
        String command = java.util.Arrays.stream(args).filter(a -> !a.startsWith("-")).findFirst().orElse("");
        boolean drawing = java.util.Set.of("demo", "query", "ping", "tail").contains(command);
        String[][] defaults = {{"org.slf4j.simpleLogger.defaultLogLevel", drawing ? "warn" : "info"},
            {"org.slf4j.simpleLogger.log.io.gma.registry.RegistryCore", drawing ? "error" : "info"},
            {"org.slf4j.simpleLogger.log.org.eclipse.jetty", "warn"},
            {"org.slf4j.simpleLogger.log.com.zaxxer.hikari", "warn"},
            {"org.slf4j.simpleLogger.showDateTime", "true"},
            {"org.slf4j.simpleLogger.dateTimeFormat", "HH:mm:ss.SSS"},
            {"org.slf4j.simpleLogger.showThreadName", "false"},
            {"org.slf4j.simpleLogger.showShortLogName", "true"}};
        for (String[] d : defaults) {
            if (System.getProperty(d[0]) == null) {
                System.setProperty(d[0], d[1]);
            }
        }
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

    /** A usage error, naming the value and the limit, unless {@code ok}. */
    static void check(CommandLine.Model.CommandSpec spec, boolean ok, String problem) {
        if (!ok) {
            throw new CommandLine.ParameterException(spec.commandLine(), problem);
        }
    }
}
