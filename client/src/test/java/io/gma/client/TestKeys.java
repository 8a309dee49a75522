package io.gma.client;

import io.gma.security.Keys;
import io.gma.security.Rules;
import io.gma.security.Security;
import io.gma.security.Tls;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;

/**
 * Certificates and domain keys made at test time (Keys.make, a few seconds of keytool), once per test JVM
 * and deleted when it exits: nothing secret is checked in.
 */
final class TestKeys {
    private static Path main;
    private static Path foreign;
    private static Path localhostOnly;

    private TestKeys() {
    }

    /** A CA, a server certificate and alice's and bob's, all naming localhost and 127.0.0.1. */
    static synchronized Path main() {
        if (main == null) {
            main = make("main", List.of("localhost", "127.0.0.1"), List.of("alice", "bob"));
        }
        return main;
    }

    /** Another CA, with its own domain keys and a server certificate only: {@link #main()}'s trust none of it. */
    static synchronized Path foreign() {
        if (foreign == null) {
            foreign = make("foreign", List.of("localhost", "127.0.0.1"), List.of());
        }
        return foreign;
    }

    /** A CA and a server certificate naming localhost only, not 127.0.0.1, where endpoints register. */
    static synchronized Path localhostOnly() {
        if (localhostOnly == null) {
            localhostOnly = make("localhost-only", List.of("localhost"), List.of());
        }
        return localhostOnly;
    }

    /** {@code identity}'s security from {@code dir}: TLS asking for client certificates, tokens, the rules. */
    static Security security(Path dir, String identity, String rules) {
        return builder(dir, identity, Tls.ClientAuth.WANT).rules(Rules.parse(rules, "test rules")).build();
    }

    static Security.Builder builder(Path dir, String identity, Tls.ClientAuth clientAuth) {
        try {
            return Security.fromDirectory(dir, identity, clientAuth);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static Path make(String name, List<String> hosts, List<String> clients) {
        try {
            Path parent = Files.createTempDirectory("gma-test-keys-");
            Runtime.getRuntime().addShutdownHook(new Thread(() -> delete(parent)));
            Path dir = parent.resolve(name);
            Keys.make(dir, hosts, clients);
            return dir;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static void delete(Path dir) {
        try (Stream<Path> all = Files.walk(dir)) {
            all.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException ignored) {
            // a temporary directory: the system cleans it some day
        }
    }
}
