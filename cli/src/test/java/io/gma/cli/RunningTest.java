package io.gma.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * A long-running command stopped by a signal, in a process of its own as a service manager stops it: the
 * first SIGINT or SIGTERM stops it cleanly with exit status 0, a stop that fails exits 1, and a second signal
 * during a slow stop ends the process at once with 128 + its number.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class RunningTest {
    /** Runs until stopped; its part closes as --close says: clean, slow (a minute) or fails. */
    @Command(name = "wait")
    static final class Wait implements Callable<Integer> {
        @Option(names = "--close")
        String close;

        @Spec
        CommandLine.Model.CommandSpec spec;

        @Override
        public Integer call() throws Exception {
            return Running.until(0, () -> spec.commandLine().getOut().println("running"), null, () -> {
                spec.commandLine().getOut().println("closing");
                if (close.equals("slow")) {
                    Thread.sleep(60_000);
                } else if (close.equals("fails")) {
                    throw new IOException("the part would not close");
                }
            });
        }

        public static void main(String[] args) {
            Cli.quietLogging(false, args);
            Cli.exit("gma-wait", Cli.standalone(new Wait(), "wait"), args);
        }
    }

    private static CommandProcess start(String close) throws IOException {
        return CommandProcess.start(new ProcessBuilder(CommandProcess.java(), "-cp",
                System.getProperty("java.class.path"), Wait.class.getName(), "--close", close));
    }

    @Test
    void aSignalStopsCleanlyAndTheProcessExitsZero() throws Exception {
        try (CommandProcess child = start("clean")) {
            child.await("running");
            child.signal("TERM");
            CommandProcess.Ended ended = child.exit();
            assertEquals(Cli.OK, ended.status(), ended.output());
            assertTrue(ended.output().contains("INFO Running - SIGTERM: stopping (another SIGINT or SIGTERM stops at"
                    + " once)\nclosing\n"), ended.output());
        }
    }

    @Test
    void aStopThatFailsExitsOneAndSaysWhy() throws Exception {
        try (CommandProcess child = start("fails")) {
            child.await("running");
            String signal = child.interrupt();
            CommandProcess.Ended ended = child.exit();
            assertEquals(Cli.FAILED, ended.status(), ended.output());
            assertTrue(ended.output().contains("SIG" + signal + ": stopping"), ended.output());
            assertTrue(ended.output().contains("gma: stopping: the part would not close\n"), ended.output());
        }
    }

    @Test
    void aSecondSignalDuringASlowStopEndsTheProcessAtOnce() throws Exception {
        try (CommandProcess child = start("slow")) {
            child.await("running");
            child.signal("TERM");
            child.await("closing");
            String signal = child.interrupt();
            CommandProcess.Ended ended = child.exit();
            assertEquals(signal.equals("INT") ? 130 : 143, ended.status(), ended.output());
            assertTrue(ended.output().contains("WARN Running - SIG" + signal + " again: stopping at once, before the"
                    + " stop has finished; exit status " + ended.status()), ended.output());
        }
    }
}
