package io.gma.client;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gma.security.Rules;
import io.gma.security.Security;
import io.gma.security.SignedTokens;
import io.gma.security.SigningKey;
import io.gma.security.Tls;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Refused and accepted tokens, and private keys, never reach the log (slf4j-simple writes System.err). */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class SecretsNotLoggedTest {
    private final Path keys = TestKeys.main();

    @Test
    void noTokenNorPrivateKeyIsLogged() throws Exception {
        String keyFile = Files.readString(keys.resolve("alice.key"), UTF_8);
        String line = keyFile.lines().filter(l -> l.startsWith("k1.private")).findFirst().orElseThrow();
        String privateB64 = line.substring(line.indexOf('=') + 1).strip();
        byte[] privateKey = Base64.getDecoder().decode(privateB64);
        SigningKey alice = SigningKey.read(keys.resolve("alice.key"));
        SigningKey mallory = SigningKey.read(keys.resolve("mallory.key"));
        Instant soon = Instant.now().plus(Duration.ofMinutes(10));
        String forRegistry = SignedTokens.issue(alice, "alice", Security.REGISTRY_AUDIENCE, soon);

        ByteArrayOutputStream captured = new ByteArrayOutputStream();
        PrintStream original = System.err;
        List<String> secrets = new ArrayList<>(List.of(privateB64, Base64.getUrlEncoder().encodeToString(privateKey),
                Base64.getUrlEncoder().withoutPadding().encodeToString(privateKey), forRegistry,
                signature(forRegistry)));
        System.setErr(new PrintStream(new TeeStream(captured, original), true, UTF_8));
        try (DirectFixture f = new DirectFixture(keys);
                Consumer inbox = f.consumer("inbox").security(TestKeys.security(keys, "alice",
                        "send alice *\nregister * *")).build()) {
            String good = SignedTokens.issue(alice, "alice", inbox.name(), soon);
            String expired = SignedTokens.issue(alice, "alice", inbox.name(), Instant.now().minus(Duration.ofHours(2)));
            String tampered = good.substring(0, good.length() - 6) + (good.endsWith("AAAAAA") ? "BBBBBB" : "AAAAAA");
            String forbidden = SignedTokens.issue(mallory, "mallory", inbox.name(), soon);
            secrets.addAll(List.of(good, expired, tampered, forbidden, signature(good), signature(expired),
                    signature(forbidden)));
            for (String token : List.of(good, expired, tampered, forbidden)) {
                Security s = TestKeys.builder(keys, "alice", Tls.ClientAuth.WANT).tokens(audience -> audience.equals(
                        Security.REGISTRY_AUDIENCE) ? forRegistry : token)
                        .rules(Rules.parse("send * *\nregister * *", "test rules")).build();
                try (Producer p = f.producer("client").security(s).build()) {
                    Sent sent = p.send(inbox.name(), new byte[1]);
                    if (token.equals(good)) {
                        sent.acknowledged().get(10, TimeUnit.SECONDS);
                    } else {
                        assertThrows(ExecutionException.class, () -> sent.acknowledged().get(10, TimeUnit.SECONDS));
                    }
                }
            }
        } finally {
            System.err.flush();
            System.setErr(original);
        }
        String log = captured.toString(UTF_8);
        assertTrue(log.contains("refused a link from"), "the log was not captured: " + log);
        assertTrue(log.contains("token refused (EXPIRED)"), log);
        for (String secret : secrets) {
            assertFalse(log.contains(secret), "the log shows a secret or token: " + secret);
        }
    }

    private static String signature(String token) {
        return token.substring(token.lastIndexOf('.') + 1);
    }

    /** Writes to two streams. */
    private static final class TeeStream extends java.io.OutputStream {
        private final java.io.OutputStream a;
        private final java.io.OutputStream b;

        TeeStream(java.io.OutputStream a, java.io.OutputStream b) {
            this.a = a;
            this.b = b;
        }

        @Override
        public synchronized void write(int c) throws java.io.IOException {
            a.write(c);
            b.write(c);
        }

        @Override
        public synchronized void write(byte[] buf, int off, int len) throws java.io.IOException {
            a.write(buf, off, len);
            b.write(buf, off, len);
        }
    }
}
