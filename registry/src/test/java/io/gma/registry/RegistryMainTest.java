package io.gma.registry;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(value = 30, unit = TimeUnit.SECONDS)
class RegistryMainTest {
    private final ByteArrayOutputStream out = new ByteArrayOutputStream();
    private final ByteArrayOutputStream err = new ByteArrayOutputStream();

    private int run(String... args) {
        return RegistryMain.run(args, new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8));
    }

    private String err() {
        return err.toString(StandardCharsets.UTF_8);
    }

    @Test
    void helpPrintsEveryOptionAndExitsZero() {
        assertEquals(0, run("--help"));
        String usage = out.toString(StandardCharsets.UTF_8);
        for (String option : new String[] {"--host", "--port", "--jdbc", "--jdbc-user", "--max-rows",
                "--query-timeout", "--default-lease", "--max-lease", "GMA_JDBC_PASSWORD", "--security", "--identity",
                "--client-auth", "--rules", "--insecure"}) {
            assertTrue(usage.contains(option), option);
        }
    }

    @Test
    void badArgumentsExitTwoWithOneClearLine() {
        assertEquals(2, run("--port", "http"));
        assertEquals("gma-registry: --port http is not a whole number\nTry --help.\n", err());
        err.reset();
        assertEquals(2, run("--max-rows", "0"));
        assertTrue(err().startsWith("gma-registry: maxRows 0 is outside 1..1000000"), err());
        err.reset();
        assertEquals(2, run("--frobnicate", "1"));
        assertTrue(err().startsWith("gma-registry: unknown option --frobnicate"), err());
        err.reset();
        assertEquals(2, run("--port", "0", "--frobnicate"));
        assertTrue(err().startsWith("gma-registry: unknown option --frobnicate"), err());
        err.reset();
        assertEquals(2, run("--port"));
        assertTrue(err().startsWith("gma-registry: --port needs a value"), err());
        err.reset();
        assertEquals(2, run("--jdbc", "jdbc:mysql://x/y"));
        assertTrue(err().contains("is not H2 (jdbc:h2:) or PostgreSQL (jdbc:postgresql:)"), err());
        err.reset();
        assertEquals(2, run("--jdbc-user", "me"));
        assertTrue(err().startsWith("gma-registry: --jdbc-user needs --jdbc"), err());
    }

    @Test
    void portInUseExitsOne() throws Exception {
        try (ServerSocket taken = new ServerSocket(0, 1, InetAddress.getByName("127.0.0.1"))) {
            assertEquals(1, run("--port", "" + taken.getLocalPort()));
            assertTrue(err().startsWith("gma-registry: cannot start: "), err());
        }
    }

    @Test
    void optionsReachTheBuilder() {
        assertNull(RegistryMain.parse(new String[] {"-h"}, new PrintStream(out)));
        Registry registry = RegistryMain.parse(new String[] {"--host", "::1", "--port", "0", "--max-rows", "7",
                "--query-timeout", "2", "--default-lease", "10", "--max-lease", "20"}, new PrintStream(out)).build();
        assertEquals(7, registry.settings().maxRows());
        assertEquals(2, registry.settings().queryTimeout().toSeconds());
        assertEquals(10, registry.settings().defaultLease().toSeconds());
        assertEquals(20, registry.settings().maxLease().toSeconds());
    }

    @Test
    void securityOptionsAreCheckedBeforeAnythingStarts() {
        assertEquals(2, run("--rules", "r"));
        assertEquals("gma-registry: --rules r needs --security DIR\nTry --help.\n", err());
        err.reset();
        assertEquals(2, run("--security", "d", "--insecure"));
        assertEquals("gma-registry: --security and --insecure exclude each other: give one\nTry --help.\n", err());
        err.reset();
        assertEquals(2, run("--security", "no-such-dir", "--client-auth", "maybe"));
        assertEquals("gma-registry: --client-auth maybe is not none, want or need\nTry --help.\n", err());
        err.reset();
        assertEquals(2, run("--security", "no-such-dir"));
        assertEquals("gma-registry: --security no-such-dir: no file no-such-dir/store.pass\nTry --help.\n", err());
    }
}
