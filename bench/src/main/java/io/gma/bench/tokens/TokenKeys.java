package io.gma.bench.tokens;

import io.gma.security.Keys;
import io.gma.security.Security;
import io.gma.security.Tls;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.List;

/**
 * The keys of the token benchmarks, made once in a temporary directory: two key directories that differ in their
 * tokens only, so that a run compares token formats and nothing else (the same CA, the same server key and
 * certificate, the same rules).
 *
 * <pre>
 *   signed/   Keys.make (CA, server.p12, truststore.p12, store.pass), then Keys.addIdentities: NAME.key for
 *             every identity and the trust file. Security.fromDirectory signs gma2 tokens, checks them by trust.
 *   hmac/     the same store.pass, server.p12 and truststore.p12, copied; Keys.writeDomainKeys: domain.keys.
 *             No NAME.key, no trust: Security.fromDirectory makes and checks gma1 (HMAC) tokens, as before gma2.
 * </pre>
 *
 * Identities: {@code east} and {@code west} (the PC servlets, named after their domains), {@code alice} (the
 * endpoints of east) and {@code bob} (those of west), {@code registry}. No client certificates: servers ask for
 * none ({@link Tls.ClientAuth#NONE}), so every hop proves itself with a token.
 */
public final class TokenKeys {
    /** The identities with a signing key in {@code signed/}. */
    static final List<String> IDENTITIES = List.of("east", "west", "alice", "bob");

    /** What each identity may do: the PC servlets post as their own domain, endpoints register and send. */
    static final String RULES = """
            # the token benchmarks: a PC servlet per domain (east, west), alice's endpoints in east, bob's in west
            register  alice,bob   *
            domain    east        east
            domain    west        west
            send      *           *
            post      east        east
            post      west        west
            query     *           endpoints,domains
            """;

    private final Path signed;
    private final Path hmac;

    private TokenKeys(Path signed, Path hmac) {
        this.signed = signed;
        this.hmac = hmac;
    }

    /**
     * Makes both directories under a new temporary directory (keytool runs eight times: a few seconds).
     *
     * @throws IOException if keytool fails or a file cannot be written
     */
    public static TokenKeys make() throws IOException {
        Path root = Files.createTempDirectory("gma-bench-tokens-");
        Path signed = root.resolve("signed");
        Keys.make(signed, List.of("localhost", "127.0.0.1"), List.of());
        Keys.addIdentities(signed, IDENTITIES);
        Files.writeString(signed.resolve("rules"), RULES, StandardCharsets.UTF_8);
        Path hmac = Files.createDirectories(root.resolve("hmac"));
        for (String name : List.of("store.pass", "server.p12", "truststore.p12")) {
            // COPY_ATTRIBUTES keeps the secrets owner-only, as fromDirectory insists
            Files.copy(signed.resolve(name), hmac.resolve(name), StandardCopyOption.COPY_ATTRIBUTES);
        }
        Keys.writeDomainKeys(hmac);
        Files.writeString(hmac.resolve("rules"), RULES, StandardCharsets.UTF_8);
        TokenKeys keys = new TokenKeys(signed, hmac);
        // what each setup shows is what its name says, or every figure drawn from it would be mislabelled
        expect(keys.signed("east"), "gma2.");
        expect(keys.hmac("east"), "gma1.");
        return keys;
    }

    private static void expect(Security security, String format) {
        String bearer = security.bearer("west");
        if (bearer == null || !bearer.startsWith(Security.BEARER + format)) {
            throw new IllegalStateException("expected a " + format + " token, but the setup shows "
                    + (bearer == null ? "none" : bearer.substring(0, Math.min(bearer.length(), 12)) + "..."));
        }
    }

    /** TLS and Ed25519-signed gma2 tokens for {@code identity}: what {@code gma keys} sets up today. */
    public Security signed(String identity) throws IOException {
        return Security.fromDirectory(signed, identity, Tls.ClientAuth.NONE).build();
    }

    /** TLS and HMAC gma1 tokens for {@code identity}, the same TLS files: security before gma2. */
    public Security hmac(String identity) throws IOException {
        return Security.fromDirectory(hmac, identity, Tls.ClientAuth.NONE).build();
    }

    /** The directory of the signed setup (NAME.key, trust). */
    public Path signedDir() {
        return signed;
    }

    /** The directory of the HMAC setup (domain.keys). */
    public Path hmacDir() {
        return hmac;
    }

    /** Deletes both directories (best effort: a file left in the temporary directory is no harm). */
    public void delete() {
        for (Path dir : List.of(signed, hmac)) {
            try (DirectoryStream<Path> files = Files.newDirectoryStream(dir)) {
                for (Path f : files) {
                    Files.deleteIfExists(f);
                }
                Files.deleteIfExists(dir);
            } catch (IOException ignored) {
                // left behind
            }
        }
        try {
            Files.deleteIfExists(signed.getParent());
        } catch (IOException ignored) {
            // left behind
        }
    }
}
