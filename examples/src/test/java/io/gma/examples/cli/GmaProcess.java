package io.gma.examples.cli;

import io.gma.cli.CommandProcess;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
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
        return run(env, new byte[0], args);
    }

    /** As {@link #run(Map, String...)}, with {@code stdin} on its standard input, which then ends. */
    static Run run(Map<String, String> env, byte[] stdin, String... args) throws IOException, InterruptedException {
        Process p = builder(env, args).start();
        try (java.io.OutputStream in = p.getOutputStream()) {
            in.write(stdin);
        }
        CompletableFuture<String> out = CompletableFuture.supplyAsync(() -> read(p.getInputStream()));
        CompletableFuture<String> err = CompletableFuture.supplyAsync(() -> read(p.getErrorStream()));
        if (!p.waitFor(60, TimeUnit.SECONDS)) {
            p.destroyForcibly().waitFor();
            throw new AssertionError("gma " + String.join(" ", args) + " did not end within 60 s");
        }
        return new Run(p.exitValue(), out.join(), err.join());
    }

    /** gma started and left running: a long-running command, to be stopped. */
    static CommandProcess start(Map<String, String> env, String... args) throws IOException {
        return CommandProcess.start(builder(env, args));
    }

    private static ProcessBuilder builder(Map<String, String> env, String... args) {
        List<String> command = new ArrayList<>(List.of(CommandProcess.java(), "-cp",
                System.getProperty("java.class.path"), Gma.class.getName()));
        command.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(command);
        pb.environment().keySet().removeIf(k -> k.startsWith("GMA_"));
        pb.environment().putAll(env);
        return pb;
    }

    private static String read(InputStream in) {
        try (in) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
