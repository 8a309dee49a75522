package io.gma.registry;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.gma.cli.CommandProcess;
import io.gma.registry.api.RegistryClient;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code java -jar gma-registry.jar}, as docs/registry.md runs it: the jar alone in an empty directory (no lib/
 * beside it), its JDBC driver and log binding found, stopped by SIGTERM with exit status 0. Run after package
 * (mvn verify), on the jar just made, whose path the build gives as the system property gma.jar.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class RegistryJarIT {
    @Test
    void runsWithJavaJarAloneAndStopsCleanlyOnSigterm(@TempDir Path dir) throws Exception {
        // set by the build's integration-test run only: -Dtest=... also runs this in the test phase, before package
        assumeTrue(System.getProperty("gma.jar") != null, "the jar is tested after package (mvn verify)");
        Path jar = Files.copy(Path.of(System.getProperty("gma.jar")),
                dir.resolve("gma-registry.jar"));
        try (CommandProcess registry = CommandProcess.start(new ProcessBuilder(CommandProcess.java(), "-jar",
                "gma-registry.jar", "--port", "0").directory(dir.toFile()))) {
            String url = registry.await("GMA registry at ").substring("GMA registry at ".length())
                    .replace(Registry.API_PATH, "");
            assertEquals(List.of(), RegistryClient.create(url).query("SELECT name FROM endpoints").rows());
            registry.signal("TERM");
            CommandProcess.Ended ended = registry.exit();
            assertEquals(0, ended.status(), ended.output());
            assertTrue(ended.output().contains("INFO RegistryCore - registry database jdbc:h2:mem:"), ended.output());
            assertTrue(ended.output().contains("INFO Running - SIGTERM: stopping"), ended.output());
        }
        try (var files = Files.list(dir)) {
            assertEquals(List.of(jar), files.toList());
        }
    }
}
