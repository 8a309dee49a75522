package io.gma.examples.cli;

import java.io.PrintWriter;
import java.time.Duration;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
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
        subcommands = {Gma.DemoCommand.class})
public final class Gma implements Callable<Integer> {
    @Spec
    CommandLine.Model.CommandSpec spec;

    @Option(names = "--verbose", description = "Stack traces with errors.", scope = CommandLine.ScopeType.INHERIT)
    boolean verbose;

    @Override
    public Integer call() {
        throw new CommandLine.ParameterException(spec.commandLine(), "give a command: demo (see gma --help)");
    }

    public static void main(String[] args) {
        System.exit(run(args, new PrintWriter(System.out, true), new PrintWriter(System.err, true)));
    }

    /** Runs the command line; the exit status. */
    static int run(String[] args, PrintWriter out, PrintWriter err) {
        quietLogging();
        Gma gma = new Gma();
        CommandLine cmd = new CommandLine(gma).setOut(out).setErr(err);
        cmd.setExecutionExceptionHandler((e, commandLine, parsed) -> {
            commandLine.getErr().println("gma: " + (e.getMessage() != null ? e.getMessage() : e.toString()));
            if (gma.verbose) {
                e.printStackTrace(commandLine.getErr());
            }
            return 1;
        });
        return cmd.execute(args);
    }

    /** One line per event, no Jetty or connection-pool chatter, unless the user set these properties. */
    static void quietLogging() {
        String[][] defaults = {{"org.slf4j.simpleLogger.defaultLogLevel", "warn"},
            {"org.slf4j.simpleLogger.log.io.gma.registry.RegistryCore", "error"}, // "open": the demo knows
            {"org.slf4j.simpleLogger.showThreadName", "false"},
            {"org.slf4j.simpleLogger.showShortLogName", "true"}};
        for (String[] d : defaults) {
            if (System.getProperty(d[0]) == null) {
                System.setProperty(d[0], d[1]);
            }
        }
    }

    /** {@code gma demo}. */
    @Command(name = "demo", mixinStandardHelpOptions = true,
            description = "Runs the all-in-one demo in this process, on loopback and ephemeral ports: a registry;"
                    + " three domains with their PC servlets (cardiff, swansea, and bangor, which is outbound-only"
                    + " and relayed by cardiff); grid monitoring agents in cardiff and bangor publishing this"
                    + " machine's load, CPU, memory, disk and network counters; and a collector in swansea that"
                    + " finds the agents with an SQL query, subscribes, and shows the latest values with their age"
                    + " and route. Until Ctrl-C, or --duration.")
    static final class DemoCommand implements Callable<Integer> {
        @Option(names = "--duration", paramLabel = "SECONDS", defaultValue = "${env:GMA_DEMO_DURATION:-0}",
                description = "Stop after this many seconds; 0 runs until Ctrl-C (env GMA_DEMO_DURATION;"
                        + " default ${DEFAULT-VALUE}).")
        long duration;

        @Option(names = "--interval", paramLabel = "MILLIS", defaultValue = "${env:GMA_DEMO_INTERVAL:-1000}",
                description = "How often agents sample (env GMA_DEMO_INTERVAL; default ${DEFAULT-VALUE}).")
        long interval;

        @Spec
        CommandLine.Model.CommandSpec spec;

        @Override
        public Integer call() throws Exception {
            if (duration < 0) {
                throw new CommandLine.ParameterException(spec.commandLine(), "--duration " + duration
                        + " is negative");
            }
            if (interval < 100 || interval > 60_000) {
                throw new CommandLine.ParameterException(spec.commandLine(), "--interval " + interval
                        + " is outside 100..60000 ms");
            }
            PrintWriter out = spec.commandLine().getOut();
            CountDownLatch closed = new CountDownLatch(1);
            Thread main = Thread.currentThread();
            // Ctrl-C: stop the table, and let the JVM exit only once everything is closed
            Thread hook = new Thread(() -> {
                main.interrupt();
                try {
                    closed.await(10, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }, "gma-demo-stop");
            Runtime.getRuntime().addShutdownHook(hook);
            try (Demo demo = Demo.start(Duration.ofMillis(interval))) {
                boolean ansi = System.console() != null;
                if (!ansi) {
                    out.println(demo.describe());
                }
                demo.show(out, duration == 0 ? null : Duration.ofSeconds(duration), Duration.ofSeconds(1), ansi);
            } catch (InterruptedException stopped) {
                out.println("gma demo: stopped");
            } finally {
                closed.countDown();
                try {
                    Runtime.getRuntime().removeShutdownHook(hook);
                } catch (IllegalStateException shuttingDown) {
                    // Ctrl-C: the JVM is on its way out, and the hook sees everything closed
                }
            }
            return 0;
        }
    }
}
