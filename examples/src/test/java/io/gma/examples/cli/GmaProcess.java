package io.gma.examples.cli;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * gma run as a process of its own, as a user runs it (this test's class path, the environment given, no GMA_*
 * variable of the test's own), for what only a process shows: its log lines, its reading of the environment.
 */
final class GmaProcess {
    /** One run: its exit status, and what it printed on each stream. */
    record Run(int status, String out, String err) {
    }

    private GmaProcess() {
    }

    static Run run(Map<String, String> env, String... args) throws IOException, InterruptedException {
        Process p = builder(env, args).start();
        CompletableFuture<String> out = CompletableFuture.supplyAsync(() -> read(p.getInputStream()));
        CompletableFuture<String> err = CompletableFuture.supplyAsync(() -> read(p.getErrorStream()));
        if (!p.waitFor(60, TimeUnit.SECONDS)) {
            p.destroyForcibly().waitFor();
            throw new AssertionError("gma " + String.join(" ", args) + " did not end within 60 s");
        }
        return new Run(p.exitValue(), out.join(), err.join());
    }

    /** gma started and left running, its two streams merged: a long-running command, to be stopped. */
    static Started start(Map<String, String> env, String... args) throws IOException {
        return new Started(builder(env, args).redirectErrorStream(true).start());
    }

    private static ProcessBuilder builder(Map<String, String> env, String... args) {
        List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java")
                .toString(), "-cp", System.getProperty("java.class.path"), Gma.class.getName()));
        command.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(command);
        pb.environment().keySet().removeIf(k -> k.startsWith("GMA_"));
        pb.environment().putAll(env);
        return pb;
    }

    /** A gma process that runs until stopped: its lines as they come, and signals sent as a shell sends them. */
    static final class Started implements AutoCloseable {
        private final Process process;
        private final BlockingQueue<String> lines = new LinkedBlockingQueue<>();
        private final StringBuilder seen = new StringBuilder();

        private Started(Process process) {
            this.process = process;
            Thread reader = new Thread(() -> {
                try (BufferedReader in = new BufferedReader(new InputStreamReader(process.getInputStream(),
                        StandardCharsets.UTF_8))) {
                    for (String line = in.readLine(); line != null; line = in.readLine()) {
                        lines.add(line);
                    }
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            }, "gma-process-reader");
            reader.setDaemon(true);
            reader.start();
        }

        /** The first line that contains {@code text}, waiting up to 60 s for it. */
        String await(String text) throws InterruptedException {
            long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (System.nanoTime() < end) {
                String line = lines.poll(100, TimeUnit.MILLISECONDS);
                if (line != null) {
                    seen.append(line).append('\n');
                    if (line.contains(text)) {
                        return line;
                    }
                }
            }
            throw new AssertionError("no line with \"" + text + "\" within 60 s:\n" + seen);
        }

        /**
         * Sends SIGINT, as Ctrl-C does, or SIGTERM where this process ignores SIGINT (as a command started in
         * the background by a shell without job control does, and so everything it starts); the signal sent.
         */
        String interrupt() throws IOException, InterruptedException {
            String signal = ignores(2) ? "TERM" : "INT";
            signal(signal);
            return signal;
        }

        /** Sends the signal {@code name} (TERM, INT) with kill(1). */
        void signal(String name) throws IOException, InterruptedException {
            if (new ProcessBuilder("kill", "-" + name, Long.toString(process.pid())).start().waitFor() != 0) {
                throw new AssertionError("kill -" + name + " " + process.pid() + " failed");
            }
        }

        /** Whether the process ignores the signal {@code number} (Linux only; false where it cannot tell). */
        private boolean ignores(int number) throws IOException {
            Path status = Path.of("/proc", Long.toString(process.pid()), "status");
            if (Files.exists(status)) {
                for (String line : Files.readAllLines(status)) {
                    if (line.startsWith("SigIgn:")) {
                        return (Long.parseUnsignedLong(line.substring(7).trim(), 16) >> (number - 1) & 1) != 0;
                    }
                }
            }
            return false;
        }

        /** The exit status, once the process has ended (within 60 s), and every line it printed. */
        Run exit() throws InterruptedException {
            if (!process.waitFor(60, TimeUnit.SECONDS)) {
                throw new AssertionError("still running 60 s later:\n" + seen);
            }
            List<String> rest = new ArrayList<>();
            lines.drainTo(rest);
            rest.forEach(l -> seen.append(l).append('\n'));
            return new Run(process.exitValue(), seen.toString(), "");
        }

        /** Kills the process if it still runs (a test that failed half-way). */
        @Override
        public void close() throws InterruptedException {
            if (process.isAlive()) {
                process.destroyForcibly().waitFor();
            }
        }
    }

    private static String read(InputStream in) {
        try (in) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
