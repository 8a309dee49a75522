package io.gma.client;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gma.security.KeyRing;
import io.gma.security.Rules;
import io.gma.security.Security;
import io.gma.security.Tls;
import io.gma.security.Tokens;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Refused and accepted tokens, and the domain's secret, never reach the log (slf4j-simple writes System.err). */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class SecretsNotLoggedTest {
    private final Path keys = TestKeys.main();

    @Test
    void noTokenNorSecretIsLogged() throws Exception {
        String keysFile = Files.readString(keys.resolve("domain.keys"), UTF_8);
        String line = keysFile.lines().filter(l -> l.startsWith("k1")).findFirst().orElseThrow();
        String secretB64 = line.substring(line.indexOf('=') + 1).strip();
        byte[] secret = Base64.getDecoder().decode(secretB64);
        Tokens tokens = Tokens.with(KeyRing.read(keys.resolve("domain.keys"))).build();
        String good = tokens.issue("alice", Duration.ofMinutes(10));
        String expired = Tokens.with(KeyRing.read(keys.resolve("domain.keys")))
                .clock(Clock.offset(Clock.systemUTC(), Duration.ofHours(-3))).build()
                .issue("alice", Duration.ofHours(1));
        String tampered = good.substring(0, good.length() - 6) + (good.endsWith("AAAAAA") ? "BBBBBB" : "AAAAAA");
        String forbidden = tokens.issue("mallory", Duration.ofMinutes(10));
        List<String> secrets = new ArrayList<>(List.of(secretB64, Base64.getUrlEncoder().encodeToString(secret),
                Base64.getUrlEncoder().withoutPadding().encodeToString(secret), good, expired, tampered, forbidden,
                signature(good), signature(expired), signature(forbidden)));

        ByteArrayOutputStream captured = new ByteArrayOutputStream();
        PrintStream original = System.err;
        System.setErr(new PrintStream(new TeeStream(captured, original), true, UTF_8));
        try (DirectFixture f = new DirectFixture();
                Consumer inbox = f.consumer("inbox").security(TestKeys.security(keys, "alice",
                        "send alice *\nregister * *")).build()) {
            for (String token : List.of(good, expired, tampered, forbidden)) {
                Security s = TestKeys.builder(keys, "alice", Tls.ClientAuth.WANT).token(() -> token)
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
        for (String s : secrets) {
            assertFalse(log.contains(s), "the log shows a secret or token: " + s);
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
