package io.gma.client;

import io.gma.registry.Registry;
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
 * Certificates, signing keys and trust files made at test time (Keys.make, a few seconds of keytool), once per
 * test JVM and deleted when it exits: nothing secret is checked in. Public for the PC servlet's tests.
 */
public final class TestKeys {
    private static Path main;
    private static Path foreign;
    private static Path localhostOnly;

    private TestKeys() {
    }

    /**
     * A CA, a server certificate and alice's and bob's, all naming localhost and 127.0.0.1; signing keys for
     * alice, bob, mallory and the domains east and west, in one trust file.
     */
    public static synchronized Path main() {
        if (main == null) {
            main = make("main", List.of("localhost", "127.0.0.1"), List.of("alice", "bob"));
            try {
                Keys.addIdentities(main, List.of("mallory", "east", "west"));
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
        return main;
    }

    /**
     * Another CA, with its own signing key for x and a server certificate only: {@link #main()}'s trust none of
     * it.
     */
    static synchronized Path foreign() {
        if (foreign == null) {
            foreign = make("foreign", List.of("localhost", "127.0.0.1"), List.of());
            try {
                Keys.addIdentities(foreign, List.of("x"));
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
        return foreign;
    }

    /**
     * A registry over TLS with the keys in {@code dir}, whose rules let every identity register, look up and query
     * everything: for tests whose subject is elsewhere.
     */
    static Registry registry(Path dir) throws Exception {
        return registry(dir, "127.0.0.1");
    }

    /** As {@link #registry(Path)}, listening on {@code host}, the name its URL gives. */
    static Registry registry(Path dir, String host) throws Exception {
        return registry(dir, host, Tls.ClientAuth.WANT);
    }

    /** As {@link #registry(Path, String)}, asking clients for certificates as {@code clientAuth} says. */
    static Registry registry(Path dir, String host, Tls.ClientAuth clientAuth) throws Exception {
        return Registry.builder().host(host).port(0).security(builder(dir, "registry", clientAuth)
                .rules(Rules.parse("register * *\nsend * *\nquery * *\ndomain * *", "test registry rules")).build())
                .build().start();
    }

    /** A CA and a server certificate naming localhost only, not 127.0.0.1, where endpoints register. */
    static synchronized Path localhostOnly() {
        if (localhostOnly == null) {
            localhostOnly = make("localhost-only", List.of("localhost"), List.of());
        }
        return localhostOnly;
    }

    /** {@code identity}'s security from {@code dir}: TLS asking for client certificates, tokens, the rules. */
    public static Security security(Path dir, String identity, String rules) {
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
