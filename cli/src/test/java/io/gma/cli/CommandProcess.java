package io.gma.cli;

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
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * A command run as a process of its own and left running, as a user or a service manager runs it, for what only
 * a process shows: its exit status after a signal, a jar run with {@code java -jar} alone. Its two streams are
 * merged and read a line at a time; signals are sent as kill(1) sends them. Shared with the other modules' tests
 * (this module's test jar).
 *
 * <pre>{@code
 * try (CommandProcess registry = CommandProcess.start(new ProcessBuilder(CommandProcess.java(), "-jar", jar))) {
 *     registry.await("GMA registry at ");
 *     registry.signal("TERM");
 *     assertEquals(0, registry.exit().status());
 * }
 * }</pre>
 */
public final class CommandProcess implements AutoCloseable {
    private static final long WAIT_SECONDS = 60;

    /** How a process ended: its exit status and every line it printed, both streams merged. */
    public record Ended(int status, String output) {
    }

    private final Process process;
    private final BlockingQueue<String> lines = new LinkedBlockingQueue<>();
    private final StringBuilder seen = new StringBuilder();
    private final Thread reader;

    private CommandProcess(Process process) {
        this.process = process;
        reader = new Thread(() -> {
            try (BufferedReader in = new BufferedReader(new InputStreamReader(process.getInputStream(),
                    StandardCharsets.UTF_8))) {
                for (String line = in.readLine(); line != null; line = in.readLine()) {
                    lines.add(line);
                }
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }, "gma-test-process-reader");
        reader.setDaemon(true);
        reader.start();
    }

    /** The java command of the JVM that runs the tests. */
    public static String java() {
        return Path.of(System.getProperty("java.home"), "bin", "java").toString();
    }

    /** Starts {@code command}, its standard error merged into its standard output. */
    public static CommandProcess start(ProcessBuilder command) throws IOException {
        return new CommandProcess(command.redirectErrorStream(true).start());
    }

    /** The first line from here on that contains {@code text}, waiting up to 60 s for it. */
    public String await(String text) throws InterruptedException {
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_SECONDS);
        while (System.nanoTime() < end) {
            String line = lines.poll(100, TimeUnit.MILLISECONDS);
            if (line != null) {
                seen.append(line).append('\n');
                if (line.contains(text)) {
                    return line;
                }
            } else if (!process.isAlive() && lines.isEmpty()) {
                break;
            }
        }
        throw new AssertionError("no line with \"" + text + "\"" + (process.isAlive() ? " within " + WAIT_SECONDS
                + " s" : "; it exited " + process.exitValue()) + ":\n" + seen);
    }

    /**
     * Sends SIGINT, as Ctrl-C does, or SIGTERM where this process ignores SIGINT (as a command started in the
     * background by a shell without job control does, and so everything it starts).
     *
     * @return the signal sent: {@code INT} or {@code TERM}
     */
    public String interrupt() throws IOException, InterruptedException {
        String signal = ignores(2) ? "TERM" : "INT";
        signal(signal);
        return signal;
    }

    /** Sends the signal {@code name} ({@code TERM}, {@code INT}) with kill(1). */
    public void signal(String name) throws IOException, InterruptedException {
        if (new ProcessBuilder("kill", "-" + name, Long.toString(process.pid())).start().waitFor() != 0) {
            throw new AssertionError("kill -" + name + " " + process.pid() + " failed");
        }
    }

    /** Whether the process ignores the signal {@code number} (read on Linux; false where it cannot tell). */
    private boolean ignores(int number) throws IOException {
        Path status = Path.of("/proc", Long.toString(process.pid()), "status");
        if (Files.exists(status)) {
            for (String line : Files.readAllLines(status)) {
                if (line.startsWith("SigIgn:")) {
                    return (Long.parseUnsignedLong(line.substring("SigIgn:".length()).trim(), 16) >> (number - 1)
                            & 1) != 0;
                }
            }
        }
        return false;
    }

    /** Waits up to 60 s for the process to end. */
    public Ended exit() throws InterruptedException {
        if (!process.waitFor(WAIT_SECONDS, TimeUnit.SECONDS)) {
            throw new AssertionError("still running " + WAIT_SECONDS + " s later:\n" + seen);
        }
        reader.join(TimeUnit.SECONDS.toMillis(5)); // to the end of its output
        List<String> rest = new ArrayList<>();
        lines.drainTo(rest);
        rest.forEach(l -> seen.append(l).append('\n'));
        return new Ended(process.exitValue(), seen.toString());
    }

    /** Kills the process if it still runs (a test that failed half-way). */
    @Override
    public void close() throws InterruptedException {
        if (process.isAlive()) {
            process.destroyForcibly().waitFor();
        }
    }
}
