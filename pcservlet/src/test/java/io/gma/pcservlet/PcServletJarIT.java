package io.gma.pcservlet;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.gma.cli.CommandProcess;
import io.gma.registry.Registry;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code java -jar gma-pcservlet.jar}, as docs/pcservlet.md runs it: the jar alone in an empty directory (no lib/
 * beside it), its spool in the working directory, stopped by Ctrl-C (SIGINT) with exit status 0; a bad domain is
 * a usage error, 2. Run after package (mvn verify), on the jar just made, whose path the build gives as the
 * system property gma.jar.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class PcServletJarIT {
    @Test
    void runsWithJavaJarAloneAndStopsCleanlyOnCtrlC(@TempDir Path dir) throws Exception {
        // set by the build's integration-test run only: -Dtest=... also runs this in the test phase, before package
        assumeTrue(System.getProperty("gma.jar") != null, "the jar is tested after package (mvn verify)");
        Files.copy(Path.of(System.getProperty("gma.jar")),
                dir.resolve("gma-pcservlet.jar"));
        try (Registry registry = Registry.builder().port(0).build().start();
                CommandProcess pc = start(dir, "--domain", "east", "--registry", registry.url(), "--http-port", "0",
                        "--uplink-port", "0")) {
            assertEquals("spool in " + dir.toRealPath().resolve("east") + " (fsync batch)", pc.await("spool in "));
            String signal = pc.interrupt();
            CommandProcess.Ended ended = pc.exit();
            assertEquals(0, ended.status(), ended.output());
            assertTrue(ended.output().contains("INFO Running - SIG" + signal + ": stopping"), ended.output());
            assertTrue(ended.output().contains("INFO PcNode - east: stopped; every queue was drained"),
                    ended.output());
        }
        try (CommandProcess pc = start(dir, "--domain", "bad domain!")) {
            CommandProcess.Ended ended = pc.exit();
            assertEquals(2, ended.status(), ended.output());
            assertEquals("domain \"bad domain!\" is not 1..64 of [A-Za-z0-9.-] (see java -jar gma-pcservlet.jar"
                    + " --help)\n", ended.output());
        }
    }

    private static CommandProcess start(Path dir, String... args) throws Exception {
        ProcessBuilder pb = new ProcessBuilder(CommandProcess.java(), "-jar", "gma-pcservlet.jar");
        pb.command().addAll(java.util.List.of(args));
        return CommandProcess.start(pb.directory(dir.toFile()));
    }
}
