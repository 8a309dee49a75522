package io.gma.cli;

import java.io.PrintWriter;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import java.util.Locale;
import picocli.CommandLine;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;

/**
 * Runs a picocli command as a program: {@code gma} with its subcommands, or one command on its own as a jar's
 * main ({@code java -jar gma-registry.jar} runs the command that {@code gma registry} runs). Only picocli parses
 * a GMA command line, and every one of them behaves alike:
 *
 * <ul>
 *   <li>an option not given on the command line comes from the environment or a properties file
 *       ({@link Defaults}), read under the command's own name, however the program is called;
 *   <li>exit status {@value #OK} when the command ran (a long-running one: when it stopped cleanly, at the end
 *       of its duration or on Ctrl-C or SIGTERM, {@link Running}), {@value #FAILED} when it failed at run time (a
 *       port in use, a registry that refuses, a stop that did not finish cleanly), {@value #USAGE} for a usage
 *       error (a bad flag or value, an unreadable properties file); 128 + the signal's number (130, 143) when
 *       Ctrl-C or SIGTERM comes before the command is running, or again while it stops;
 *   <li>a usage error is one line, with a pointer to the help: {@code --interval 5 is outside 100..60000 ms (see
 *       gma demo --help)};
 *   <li>a failure is one line, after the program's name: {@code gma: Failed to bind to /127.0.0.1:8080}, with
 *       the stack trace only under {@code --verbose}, an option every command is given here.
 * </ul>
 *
 * <pre>{@code
 * public static void main(String[] args) {
 *     Cli.quietLogging(false);
 *     Cli.exit("gma-registry", Cli.standalone(new RegistryCommand(), "java -jar gma-registry.jar"), args);
 * }
 * }</pre>
 */
public final class Cli {
    /** The command ran and stopped cleanly. */
    public static final int OK = 0;
    /** The command failed at run time; it said why in one line. */
    public static final int FAILED = 1;
    /** A usage error: a bad flag or value, or a properties file that cannot be read. */
    public static final int USAGE = 2;

    /** The end of every command's help: its exit statuses. */
    static final String EXIT_STATUS = "%nExit status: " + OK + " when it ran (a command that runs until stopped:"
            + " when it stopped cleanly, at the end of --duration or on Ctrl-C or SIGTERM), " + FAILED + " when it"
            + " failed at run time (it could not start, or its stop failed), " + USAGE + " for a usage error; 130"
            + " or 143 (128 + the signal) when Ctrl-C or SIGTERM came before it was running, or came again while it"
            + " was stopping.";

    private Cli() {
    }

    /** {@code --verbose}, added to every command that {@link #run} runs, and inherited by its subcommands. */
    private static final class Verbose {
        @Option(names = "--verbose", description = "Stack traces with errors.",
                scope = CommandLine.ScopeType.INHERIT)
        boolean on;
    }

    /** The levels {@code --log-level} takes, as slf4j-simple names them. */
    static final List<String> LOG_LEVELS = List.of("trace", "debug", "info", "warn", "error",
            "off");

    /**
     * {@code --log-level}, added to every command as {@code --verbose} is. The level itself is set before the
     * first logger is made ({@link #quietLogging(boolean, String[])} reads it from the arguments); here it is
     * declared, so that the parser takes it, and checked.
     */
    private static final class LogLevel {
        @Option(names = "--log-level", paramLabel = "LEVEL", description = "What the log shows: trace, debug, info,"
                + " warn, error or off (default: info for servers, warn for terminal commands).",
                scope = CommandLine.ScopeType.INHERIT)
        String level;
    }

    /**
     * A command line for {@code command} run as a program of its own: its help and its usage errors show it as
     * {@code shownName} ({@code java -jar gma-registry.jar}), while its options' defaults are still read under
     * its own name ({@code GMA_REGISTRY_PORT}, {@code registry.port}), as under {@code gma}. Its help ends with
     * the exit statuses. An option given twice takes the last value, as the jars' own parsers did
     * ({@code java -jar gma-registry.jar $DEFAULTS --port 9000}); under {@code gma} that is a usage error.
     */
    public static CommandLine standalone(Object command, String shownName) {
        CommandLine cmd = new CommandLine(command).setOverwrittenOptionsAllowed(true);
        String name = cmd.getCommandName();
        cmd.setCommandName(shownName);
        cmd.getCommandSpec().usageMessage().footer(Defaults.FOOTER + "%nHere <COMMAND> is " + name + ", as for gma "
                + name + "." + EXIT_STATUS);
        return cmd;
    }

    /**
     * Runs {@code cmd} with {@code args}, printing to its {@link CommandLine#getOut() out} and
     * {@link CommandLine#getErr() err}; never exits the JVM. It sets up {@code cmd} (defaults, handlers,
     * {@code --verbose}) as it goes, so a {@code CommandLine} is run once.
     *
     * @param program the name failures are printed after, {@code gma} or {@code gma-registry}
     * @return the exit status: {@link #OK}, {@link #FAILED} or {@link #USAGE}
     */
    public static int run(String program, CommandLine cmd, String[] args) {
        PrintWriter err = cmd.getErr();
        Defaults defaults;
        try {
            defaults = Defaults.fromEnvironment();
        } catch (IllegalArgumentException badFile) {
            err.println(program + ": " + badFile.getMessage()); // and no help either: the file is needed for it
            return USAGE;
        }
        cmd.setDefaultValueProvider(defaults);
        for (CommandLine c : withSubcommands(cmd)) {
            if (c.getCommandSpec().usageMessage().footer().length == 0) {
                c.getCommandSpec().usageMessage().footer(Defaults.FOOTER + EXIT_STATUS);
            }
        }
        Verbose verbose = new Verbose();
        cmd.addMixin("verbose", verbose);
        LogLevel logLevel = new LogLevel();
        cmd.addMixin("logLevel", logLevel);
        if (!cmd.getSubcommands().isEmpty()) {
            for (String unknown : defaults.unknown(withSubcommands(cmd))) {
                err.println(program + ": warning: " + unknown);
            }
        }
        cmd.setParameterExceptionHandler((e, given) -> {
            // a usage error: one line, not the whole usage text; a value that came from the environment or the
            // properties file, not from its flag, is named by where it came from
            String source = e.getArgSpec() instanceof CommandLine.Model.OptionSpec o && !typed(o, given)
                    ? defaults.sourceOf(o) : null;
            e.getCommandLine().getErr().println(e.getMessage() + (source == null ? "" : source.startsWith("GMA_")
                    ? ", from the environment variable " + source : ", from the " + source + " in the properties"
                    + " file") + " (see " + e.getCommandLine().getCommandSpec().qualifiedName() + " --help)");
            return USAGE;
        });
        cmd.setExecutionExceptionHandler((e, commandLine, parsed) -> {
            commandLine.getErr().println(program + ": " + (e.getMessage() != null ? e.getMessage() : e.toString()));
            if (verbose.on) {
                e.printStackTrace(commandLine.getErr());
            }
            return FAILED;
        });
        CommandLine.IExecutionStrategy run = cmd.getExecutionStrategy();
        cmd.setExecutionStrategy(parsed -> {
            if (logLevel.level != null && !LOG_LEVELS.contains(logLevel.level.toLowerCase(Locale.ROOT))) {
                throw new CommandLine.ParameterException(parsed.commandSpec().commandLine(), "--log-level "
                        + logLevel.level + " is not one of " + String.join(", ", LOG_LEVELS));
            }
            return run.execute(parsed);
        });
        return cmd.execute(args);
    }

    /**
     * {@link #run} on this process's standard output and error, then exits the JVM with the status: a
     * program's {@code main}, which calls {@link #quietLogging} first.
     */
    public static void exit(String program, CommandLine cmd, String[] args) {
        PrintWriter out = new PrintWriter(System.out, true);
        PrintWriter err = new PrintWriter(System.err, true);
        int status = run(program, cmd.setOut(out).setErr(err), args);
        out.flush(); // print() does not flush by itself, and exit would lose it
        err.flush();
        System.exit(status);
    }

    /**
     * One log line per event, with the time; Jetty and the connection pool only at WARN. A server logs at INFO;
     * a command that draws on the terminal ({@code terminal}: demo, query, ping, tail) only WARN and up, so that
     * its output stays readable. Properties the user set are left alone. To take effect, it must run before the
     * first logger is made: in {@code main}, before a class with a static logger is used.
     */
    public static void quietLogging(boolean terminal, String[] args) {
        String level = logLevel(args);
        if (level == null) {
            level = System.getenv("GMA_LOG_LEVEL");
        }
        if (level != null && LOG_LEVELS.contains(level.toLowerCase(Locale.ROOT))
                && System.getProperty("org.slf4j.simpleLogger.defaultLogLevel") == null) {
            System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", level.toLowerCase(Locale.ROOT));
            System.setProperty("org.slf4j.simpleLogger.log.io.gma.registry.RegistryCore",
                    level.toLowerCase(Locale.ROOT));
        }
        quietLogging(terminal);
    }

    /** Whether {@code option} is among {@code args} ({@code --count 5} or {@code --count=5}). */
    private static boolean typed(CommandLine.Model.OptionSpec option, String[] args) {
        for (String a : args) {
            for (String name : option.names()) {
                if (a.equals(name) || a.startsWith(name + "=") || !name.startsWith("--") && a.startsWith(name)) {
                    return true;
                }
            }
        }
        return false;
    }

    /** The value of {@code --log-level} among {@code args} (the last, as the parser takes it), or null. */
    static String logLevel(String[] args) {
        String level = null;
        for (int i = 0; i < args.length; i++) {
            if (args[i].equals("--log-level") && i + 1 < args.length) {
                level = args[++i];
            } else if (args[i].startsWith("--log-level=")) {
                level = args[i].substring("--log-level=".length());
            }
        }
        return level;
    }

    /** As {@link #quietLogging(boolean, String[])}, without a {@code --log-level} to read. */
    public static void quietLogging(boolean terminal) {
        String[][] defaults = {{"org.slf4j.simpleLogger.defaultLogLevel", terminal ? "warn" : "info"},
            {"org.slf4j.simpleLogger.log.io.gma.registry.RegistryCore", terminal ? "error" : "info"},
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
     * A usage error, naming the value and the limit, unless {@code ok}.
     *
     * @throws CommandLine.ParameterException {@code problem}, when not {@code ok}
     */
    public static void check(CommandSpec spec, boolean ok, String problem) {
        if (!ok) {
            throw new CommandLine.ParameterException(spec.commandLine(), problem);
        }
    }

    /** {@code cmd} and its subcommands, at every depth. */
    private static Iterable<CommandLine> withSubcommands(CommandLine cmd) {
        Deque<CommandLine> all = new ArrayDeque<>();
        Deque<CommandLine> todo = new ArrayDeque<>();
        todo.add(cmd);
        while (!todo.isEmpty()) {
            CommandLine c = todo.poll();
            all.add(c);
            todo.addAll(c.getSubcommands().values());
        }
        return all;
    }
}
