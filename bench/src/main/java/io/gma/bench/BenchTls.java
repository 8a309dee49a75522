package io.gma.bench;

import io.gma.registry.Registry;
import io.gma.security.Keys;
import io.gma.security.Rules;
import io.gma.security.Security;
import io.gma.security.Tls;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * TLS for the benchmarks, with {@code -Dgma.bench.tls=true}: certificates, signing keys and a trust file made
 * once in a temporary directory (Keys.make), each endpoint given TLS, signed tokens, and rules that let anyone
 * send, and a registry over TLS (endpoints show their credentials over TLS only).
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
                .rules(Rules.parse("send * *\nregister * *\nquery * *", "bench")).build();
    }

    /** A registry over TLS with the same keys, letting everyone register and look up; the caller closes it. */
    public static Registry registry() throws Exception {
        return Registry.builder().port(0).security(security("registry")).build().start();
    }
}
