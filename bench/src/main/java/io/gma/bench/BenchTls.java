package io.gma.bench;

import io.gma.security.Keys;
import io.gma.security.Rules;
import io.gma.security.Security;
import io.gma.security.Tls;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * TLS for the benchmarks, with {@code -Dgma.bench.tls=true}: certificates and domain keys made once in a
 * temporary directory (Keys.make), and each endpoint given TLS, a token, and rules that let anyone send and
 * go by any name.
 */
public final class BenchTls {
    private static Path dir;

    private BenchTls() {
    }

    /** Whether {@code -Dgma.bench.tls=true} was given. */
    public static boolean on() {
        return Boolean.getBoolean("gma.bench.tls");
    }

    /** TLS 1.3 and tokens for {@code identity} (alice or bob). */
    public static synchronized Security security(String identity) throws IOException {
        if (dir == null) {
            dir = Files.createTempDirectory("gma-bench-keys-").resolve("keys");
            Keys.make(dir, List.of("localhost", "127.0.0.1"), List.of("alice", "bob"));
        }
        return Security.fromDirectory(dir, identity, Tls.ClientAuth.NONE)
                .rules(Rules.parse("send * *\nregister * *", "bench")).build();
    }
}
