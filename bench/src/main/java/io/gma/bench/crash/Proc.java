package io.gma.bench.crash;

import io.gma.wire.Threads;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.PrintWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * One process of a crash run: a JVM with this JVM's class path, a main class and arguments, in a working
 * directory of its own, that can be killed with SIGKILL ({@link Process#destroyForcibly}, a {@code kill -9}) and
 * started again with the same command line. Its output (stderr merged) goes to a log file, every run appended,
 * and line by line to whoever awaits a line or listens.
 */
public final class Proc implements AutoCloseable {
    private final String name;
    private final List<String> command;
    /** The main class and its arguments, as the log shows them. */
    private final String shown;
    private final Path workDir;
    private final Path log;
    private final Consumer<String> listener;
    private final LinkedBlockingQueue<String> unread = new LinkedBlockingQueue<>();
    private Process process;
    private Writer in;
    private int runs;

    /**
     * @param listener told each line of output, on the thread that reads it (may be null)
     */
    Proc(String name, List<String> jvmOptions, String mainClass, List<String> args, Path workDir,
            Consumer<String> listener) throws IOException {
        this(name, java(jvmOptions, List.of("-cp", System.getProperty("java.class.path"), mainClass), args),
                mainClass + " " + String.join(" ", args), workDir, listener);
    }

    private Proc(String name, List<String> command, String shown, Path workDir, Consumer<String> listener)
            throws IOException {
        this.name = name;
        this.workDir = Files.createDirectories(workDir);
        this.log = workDir.resolve(name + ".log");
        this.listener = listener;
        this.command = List.copyOf(command);
        this.shown = shown;
    }

    /**
     * A self-contained jar run as a user runs it, {@code java [jvmOptions] -jar JAR [args]}, in {@code workDir}
     * (created), its output in {@code workDir/NAME.log}.
     *
     * @param listener told each line of output, on the thread that reads it (may be null)
     */
    public static Proc jar(String name, List<String> jvmOptions, Path jar, List<String> args, Path workDir,
            Consumer<String> listener) throws IOException {
        return new Proc(name, java(jvmOptions, List.of("-jar", jar.toString()), args),
                "-jar " + jar.getFileName() + " " + String.join(" ", args), workDir, listener);
    }

    private static List<String> java(List<String> jvmOptions, List<String> what, List<String> args) {
        List<String> c = new ArrayList<>();
        c.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        c.addAll(jvmOptions);
        c.addAll(what);
        c.addAll(args);
        return c;
    }

    public String name() {
        return name;
    }

    Path workDir() {
        return workDir;
    }

    /** Starts it (again: the same command line, in the same directory). */
    public synchronized Proc start() throws IOException {
        if (process != null && process.isAlive()) {
            throw new IllegalStateException(name + " runs already");
        }
        runs++;
        unread.clear();
        Files.writeString(log, "---- run " + runs + ": " + shown + "\n", StandardOpenOption.CREATE,
                StandardOpenOption.APPEND);
        Process p = new ProcessBuilder(command).directory(workDir.toFile()).redirectErrorStream(true).start();
        process = p;
        in = new OutputStreamWriter(p.getOutputStream(), StandardCharsets.UTF_8);
        int run = runs;
        Threads.start("crash-" + name + "-" + run + "-output", () -> drain(p));
        return this;
    }

    private void drain(Process p) {
        try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
                PrintWriter out = new PrintWriter(Files.newBufferedWriter(log, StandardOpenOption.APPEND))) {
            for (String line; (line = r.readLine()) != null;) {
                out.println(line);
                unread.add(line);
                if (listener != null) {
                    listener.accept(line);
                }
            }
        } catch (IOException ended) {
            // the process is gone
        }
    }

    /**
     * The first line not read yet that matches {@code pattern}.
     *
     * @throws IOException if none comes within {@code millis}, naming the process and its log
     */
    public Matcher await(Pattern pattern, long millis) throws IOException, InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(millis);
        while (true) {
            String line = unread.poll(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
            if (line == null) {
                Process p = process;
                throw new IOException(name + ": no line matching " + pattern + " within " + millis + " ms"
                        + (p != null && !p.isAlive() ? " (it exited with " + p.exitValue() + ")" : "") + "; see "
                        + log);
            }
            Matcher m = pattern.matcher(line);
            if (m.matches()) {
                return m;
            }
        }
    }

    /** Sends one line to its standard input. */
    synchronized void tell(String line) throws IOException {
        in.write(line + "\n");
        in.flush();
    }

    /** {@code kill -9}: SIGKILL, no shutdown hook runs; returns once the process is gone. */
    void kill9() throws InterruptedException {
        Process p;
        synchronized (this) {
            p = process;
        }
        p.destroyForcibly();
        if (!p.waitFor(30, TimeUnit.SECONDS)) {
            throw new IllegalStateException(name + " did not die of SIGKILL within 30 s");
        }
    }

    /** The running process's id; -1 before it started. */
    public long pid() {
        Process p = process;
        return p == null ? -1 : p.pid();
    }

    public boolean isAlive() {
        Process p = process;
        return p != null && p.isAlive();
    }

    /** Waits for it to exit by itself; its exit status, or -1 if it still runs after {@code millis}. */
    int waitFor(long millis) throws InterruptedException {
        Process p = process;
        return p.waitFor(millis, TimeUnit.MILLISECONDS) ? p.exitValue() : -1;
    }

    public Path log() {
        return log;
    }

    /** The last {@code n} lines of its log. */
    public String tail(int n) {
        try {
            List<String> lines = Files.readAllLines(log);
            return String.join("\n", lines.subList(Math.max(0, lines.size() - n), lines.size()));
        } catch (IOException e) {
            return "(" + log + " unreadable: " + e.getMessage() + ")";
        }
    }

    /** Ends it: SIGTERM, then SIGKILL after 10 s. */
    @Override
    public void close() {
        Process p = process;
        if (p == null || !p.isAlive()) {
            return;
        }
        p.destroy();
        try {
            if (!p.waitFor(10, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                p.waitFor(10, TimeUnit.SECONDS);
            }
        } catch (InterruptedException e) {
            p.destroyForcibly();
            Thread.currentThread().interrupt();
        }
    }
}
