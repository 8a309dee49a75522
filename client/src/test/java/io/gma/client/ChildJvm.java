package io.gma.client;

import io.gma.wire.Threads;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A JVM of its own for a test, with this test's class path: its output (stderr merged) is kept line by line,
 * and its standard input takes commands. {@link #close()} ends it, forcibly if it does not end by itself.
 */
public final class ChildJvm implements AutoCloseable {
    private final Process process;
    private final List<String> output = new ArrayList<>();
    private final LinkedBlockingQueue<String> unread = new LinkedBlockingQueue<>();
    private final Writer in;
    /** Counted down when its output ended: everything it wrote is in {@link #output()}. */
    private final CountDownLatch outputEnded = new CountDownLatch(1);

    private ChildJvm(Process process) {
        this.process = process;
        this.in = new OutputStreamWriter(process.getOutputStream(), StandardCharsets.UTF_8);
        Threads.start("child-jvm-output", () -> {
            try (BufferedReader r = new BufferedReader(new InputStreamReader(process.getInputStream(),
                    StandardCharsets.UTF_8))) {
                for (String line; (line = r.readLine()) != null;) {
                    synchronized (output) {
                        output.add(line);
                    }
                    unread.add(line);
                }
            } catch (IOException ended) {
                // the process is gone
            } finally {
                outputEnded.countDown();
            }
        });
    }

    /** Starts {@code mainClass} with {@code jvmOptions} (such as -Xmx64m) and {@code args}. */
    public static ChildJvm start(List<String> jvmOptions, String mainClass, List<String> args) throws IOException {
        return new ChildJvm(new ProcessBuilder(command(jvmOptions, mainClass, args)).redirectErrorStream(true)
                .start());
    }

    /**
     * As {@link #start}, with the process's open-file limit, soft and hard, at {@code openFiles} (through a POSIX
     * shell's {@code ulimit -n}).
     */
    public static ChildJvm startWithOpenFiles(int openFiles, List<String> jvmOptions, String mainClass,
            List<String> args) throws IOException {
        List<String> command = new ArrayList<>(List.of("sh", "-c", "ulimit -n " + openFiles + " && exec \"$@\"",
                "sh"));
        command.addAll(command(jvmOptions, mainClass, args));
        return new ChildJvm(new ProcessBuilder(command).redirectErrorStream(true).start());
    }

    private static List<String> command(List<String> jvmOptions, String mainClass, List<String> args) {
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.addAll(jvmOptions);
        command.add("-cp");
        command.add(System.getProperty("java.class.path"));
        command.add(mainClass);
        command.addAll(args);
        return command;
    }

    /**
     * The first line not read yet that matches {@code pattern} (the lines before it are skipped).
     *
     * @throws AssertionError if none comes within {@code millis}, with the output so far
     */
    public Matcher await(Pattern pattern, long millis) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(millis);
        while (true) {
            String line = unread.poll(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
            if (line == null) {
                throw new AssertionError("no line matching " + pattern + " within " + millis + " ms"
                        + (process.isAlive() ? "" : " (exited with " + process.exitValue() + ")") + "; output:\n"
                        + output());
            }
            Matcher m = pattern.matcher(line);
            if (m.matches()) {
                return m;
            }
        }
    }

    /** Sends one line to its standard input. */
    public void tell(String line) throws IOException {
        in.write(line + "\n");
        in.flush();
    }

    /** Everything it wrote so far. */
    public String output() {
        synchronized (output) {
            return String.join("\n", output);
        }
    }

    public boolean isAlive() {
        return process.isAlive();
    }

    /** Closes its input, which a child that reads it takes as the end, and {@link #stop()}s it after 5 s. */
    @Override
    public void close() throws InterruptedException {
        try {
            in.close();
        } catch (IOException gone) {
            // it exited already
        }
        if (!process.waitFor(5, TimeUnit.SECONDS)) {
            stop();
        }
    }

    /**
     * Ends it as {@code kill -9} would (SIGKILL: no shutdown hook, no close), and waits until it is gone and
     * everything it wrote before is read: {@link #output()} then has its last line.
     */
    public void kill() throws InterruptedException {
        // SIGKILL through its handle: Process.destroyForcibly would also close the pipe of its output, and what it
        // wrote last, still in the pipe, would be lost to output()
        process.toHandle().destroyForcibly();
        if (!process.waitFor(10, TimeUnit.SECONDS) || !outputEnded.await(10, TimeUnit.SECONDS)) {
            throw new AssertionError("a killed JVM (pid " + process.pid() + ") is still there after 10 s");
        }
    }

    /** Its process id. */
    public long pid() {
        return process.pid();
    }

    /** Ends it as Ctrl-C would (its shutdown hooks run), forcibly after 10 s. */
    public void stop() throws InterruptedException {
        process.destroy();
        if (!process.waitFor(10, TimeUnit.SECONDS)) {
            process.destroyForcibly().waitFor(5, TimeUnit.SECONDS);
        }
    }
}
