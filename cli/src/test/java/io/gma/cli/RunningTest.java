package io.gma.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.Callable;
import java.util.concurrent.LinkedBlockingQueue;
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

    /** The command as a process, its two streams merged and read a line at a time. */
    private static final class Child {
        final Process process;
        final BlockingQueue<String> lines = new LinkedBlockingQueue<>();
        final StringBuilder all = new StringBuilder();

        Child(String close) throws IOException {
            process = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-cp",
                    System.getProperty("java.class.path"), Wait.class.getName(), "--close", close)
                    .redirectErrorStream(true).start();
            Thread reader = new Thread(() -> {
                try (BufferedReader in = new BufferedReader(new InputStreamReader(process.getInputStream(),
                        StandardCharsets.UTF_8))) {
                    for (String line = in.readLine(); line != null; line = in.readLine()) {
                        lines.add(line);
                    }
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            });
            reader.setDaemon(true);
            reader.start();
        }

        /** Waits for a line that contains {@code text}; fails after 20 s. */
        void await(String text) throws InterruptedException {
            long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            while (System.nanoTime() < end) {
                String line = lines.poll(100, TimeUnit.MILLISECONDS);
                if (line != null) {
                    all.append(line).append('\n');
                    if (line.contains(text)) {
                        return;
                    }
                }
            }
            process.destroyForcibly();
            throw new AssertionError("no line with \"" + text + "\" in:\n" + all);
        }

        /** Sends SIGINT, or SIGTERM where the process ignores SIGINT (started in the background by a shell). */
        String interrupt() throws Exception {
            String signal = ignores(2) ? "TERM" : "INT";
            signal(signal);
            return signal;
        }

        void signal(String name) throws Exception {
            assertEquals(0, new ProcessBuilder("kill", "-" + name, Long.toString(process.pid())).start().waitFor());
        }

        /** Whether the process ignores the signal {@code number}, as inherited from whatever started this test. */
        boolean ignores(int number) throws IOException {
            Path status = Path.of("/proc", Long.toString(process.pid()), "status");
            if (!Files.exists(status)) {
                return false;
            }
            for (String line : Files.readAllLines(status)) {
                if (line.startsWith("SigIgn:")) {
                    return (Long.parseUnsignedLong(line.substring(7).trim(), 16) >> (number - 1) & 1) != 0;
                }
            }
            return false;
        }

        /** The exit status, once the process has ended (within 30 s). */
        int exitStatus() throws InterruptedException {
            assertTrue(process.waitFor(30, TimeUnit.SECONDS), "still running:\n" + all);
            return process.exitValue();
        }

        /** All the lines printed so far, once the process has ended. */
        String output() {
            List<String> rest = new ArrayList<>();
            lines.drainTo(rest);
            rest.forEach(l -> all.append(l).append('\n'));
            return all.toString();
        }
    }

    @Test
    void aSignalStopsCleanlyAndTheProcessExitsZero() throws Exception {
        Child child = new Child("clean");
        child.await("running");
        child.signal("TERM");
        assertEquals(Cli.OK, child.exitStatus(), child.output());
        String out = child.output();
        assertTrue(out.contains("INFO Running - SIGTERM: stopping (another SIGINT or SIGTERM stops at once)"), out);
        assertTrue(out.contains("closing"), out);
    }

    @Test
    void aStopThatFailsExitsOneAndSaysWhy() throws Exception {
        Child child = new Child("fails");
        child.await("running");
        String signal = child.interrupt();
        assertEquals(Cli.FAILED, child.exitStatus(), child.output());
        String out = child.output();
        assertTrue(out.contains("SIG" + signal + ": stopping"), out);
        assertTrue(out.contains("gma: stopping: the part would not close"), out);
    }

    @Test
    void aSecondSignalDuringASlowStopEndsTheProcessAtOnce() throws Exception {
        Child child = new Child("slow");
        child.await("running");
        child.signal("TERM");
        child.await("closing");
        String signal = child.interrupt();
        int status = child.exitStatus();
        String out = child.output();
        assertEquals(signal.equals("INT") ? 130 : 143, status, out);
        assertTrue(out.contains("WARN Running - SIG" + signal + " again: stopping at once, before the stop has"
                + " finished; exit status " + status), out);
    }
}
