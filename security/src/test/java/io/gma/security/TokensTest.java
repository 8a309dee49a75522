package io.gma.security;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class TokensTest {
    private static final Instant T0 = Instant.parse("2026-11-21T12:00:00Z");
    private final byte[] secret1 = bytes(1);
    private final byte[] secret2 = bytes(2);
    private final KeyRing ring = KeyRing.of(Map.of("k1", secret1), "k1");
    /** Every refusal's text, checked at the end of the tests that refuse: no secret in any of them. */
    private final List<String> texts = new ArrayList<>();

    private static byte[] bytes(int seed) {
        byte[] b = new byte[32];
        for (int i = 0; i < b.length; i++) {
            b[i] = (byte) (seed * 31 + i * 7);
        }
        return b;
    }

    private static Tokens tokens(KeyRing keys, Instant now) {
        return Tokens.with(keys).clock(Clock.fixed(now, ZoneOffset.UTC)).build();
    }

    private TokenException.Reason refused(Tokens t, String token) {
        TokenException e = assertThrows(TokenException.class, () -> t.verify(token));
        texts.add(e.getMessage());
        return e.reason();
    }

    private void noSecretIn(String text, byte[]... secrets) {
        for (byte[] s : secrets) {
            for (String form : new String[] {Base64.getEncoder().encodeToString(s),
                Base64.getUrlEncoder().withoutPadding().encodeToString(s), HexFormat.of().formatHex(s),
                new String(s, StandardCharsets.ISO_8859_1)}) {
                assertFalse(text.contains(form), "a secret in: " + text);
            }
        }
    }

    @Test
    void anIssuedTokenVerifiesWithItsSubjectExpiryAndKey() throws Exception {
        String token = tokens(ring, T0).issue("cpu-k3x7qz@dsg", Duration.ofHours(1));
        assertTrue(token.startsWith("gma1.k1.Y3B1LWszeDdxekBkc2c." + T0.plusSeconds(3600).getEpochSecond() + "."),
                token);
        Tokens.Verified v = tokens(ring, T0.plusSeconds(10)).verify(token);
        assertEquals("cpu-k3x7qz@dsg", v.subject());
        assertEquals(T0.plusSeconds(3600), v.expiresAt());
        assertEquals("k1", v.keyId());
    }

    @Test
    void wrongTamperedAndForeignTokensAreRefusedWithoutSayingWhatDiffered() {
        Tokens t = tokens(ring, T0);
        String good = t.issue("cpu-k3x7qz@dsg", Duration.ofHours(1));
        String[] part = good.split("\\.");
        String otherSubject = Base64.getUrlEncoder().withoutPadding().encodeToString("admin@dsg".getBytes(
                StandardCharsets.UTF_8));
        // another domain's secret under the same key id
        String foreign = tokens(KeyRing.of(Map.of("k1", secret2), "k1"), T0).issue("cpu-k3x7qz@dsg",
                Duration.ofHours(1));
        assertEquals(TokenException.Reason.BAD_SIGNATURE, refused(t, foreign));
        assertEquals(TokenException.Reason.BAD_SIGNATURE, refused(t, String.join(".", part[0], part[1],
                otherSubject, part[3], part[4])));
        assertEquals(TokenException.Reason.BAD_SIGNATURE, refused(t, String.join(".", part[0], part[1], part[2],
                Long.toString(Long.parseLong(part[3]) + 86_400), part[4])));
        char flipped = part[4].charAt(5) == 'A' ? 'B' : 'A';
        assertEquals(TokenException.Reason.BAD_SIGNATURE, refused(t, String.join(".", part[0], part[1], part[2],
                part[3], part[4].substring(0, 5) + flipped + part[4].substring(6))));
        assertEquals("the token's signature does not verify with key k1", texts.get(0));
        for (String text : texts) {
            noSecretIn(text, secret1, secret2);
        }
    }

    @Test
    void expiryAllowsTheSkewAndNoMore() throws Exception {
        String token = tokens(ring, T0).issue("cpu-k3x7qz@dsg", Duration.ofMinutes(5));
        Instant expiry = T0.plusSeconds(300);
        tokens(ring, expiry.plusSeconds(60)).verify(token); // the default skew of 60 s
        Tokens late = tokens(ring, expiry.plusSeconds(61));
        assertEquals(TokenException.Reason.EXPIRED, refused(late, token)); // replayed after expiry
        assertEquals("the token expired at 2026-11-21T12:05:00Z, now 2026-11-21T12:06:01Z (clock skew allowed:"
                + " 60 s)", texts.get(0));
        Tokens strict = Tokens.with(ring).skew(Duration.ZERO).clock(Clock.fixed(expiry.plusSeconds(1),
                ZoneOffset.UTC)).build();
        assertEquals(TokenException.Reason.EXPIRED, refused(strict, token));
    }

    @Test
    void aTokenLivingLongerThanAllowedIsRefused() {
        String token = Tokens.with(ring).maxLifetime(Duration.ofDays(30)).clock(Clock.fixed(T0, ZoneOffset.UTC))
                .build().issue("cpu-k3x7qz@dsg", Duration.ofDays(7));
        assertEquals(TokenException.Reason.TOO_LONG_LIVED, refused(tokens(ring, T0), token));
        assertThrows(IllegalArgumentException.class, () -> tokens(ring, T0).issue("x@d", Duration.ofDays(2)));
    }

    @Test
    void aTokenHasOneSpellingOnly() {
        Tokens t = tokens(ring, T0);
        String good = t.issue("cpu-k3x7qz@dsg", Duration.ofHours(1));
        char last = good.charAt(good.length() - 1);
        // the last character carries 2 unused bits: another character with the same 4 leading bits decodes alike
        String alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
        int v = alphabet.indexOf(last);
        String twin = good.substring(0, good.length() - 1) + alphabet.charAt(v ^ 1);
        assertEquals(TokenException.Reason.MALFORMED, refused(t, twin));
        assertThrows(IllegalArgumentException.class, () -> t.issue("\u4e2d".repeat(255), Duration.ofHours(1)),
                "a token verify() would refuse is not issued");
        assertThrows(IllegalArgumentException.class, () -> ring.rotateTo("k1", secret2), "ids are not reused");
    }

    @Test
    void rotationVerifiesOldAndNewUntilTheOldKeyIsDropped() throws Exception {
        String old = tokens(ring, T0).issue("cpu-k3x7qz@dsg", Duration.ofHours(1));
        KeyRing rotated = ring.rotateTo("k2", secret2);
        String fresh = tokens(rotated, T0).issue("cpu-k3x7qz@dsg", Duration.ofHours(1));
        assertTrue(fresh.startsWith("gma1.k2."), fresh);
        assertEquals("k1", tokens(rotated, T0).verify(old).keyId());
        assertEquals("k2", tokens(rotated, T0).verify(fresh).keyId());
        KeyRing dropped = rotated.without("k1");
        assertEquals(TokenException.Reason.UNKNOWN_KEY, refused(tokens(dropped, T0), old));
        assertEquals("key id k1 is not in this domain's key ring", texts.get(0));
        assertEquals(TokenException.Reason.UNKNOWN_KEY, refused(tokens(ring, T0), fresh));
        assertThrows(IllegalArgumentException.class, () -> rotated.without("k2"), "the current key stays");
    }

    @Test
    void malformedTokensAreRefusedAsMalformed() {
        Tokens t = tokens(ring, T0);
        String good = t.issue("cpu-k3x7qz@dsg", Duration.ofHours(1));
        for (String bad : new String[] {null, "", "gma1", "a.b.c.d.e", good.replace("gma1.", "gma2."),
            good + ".x", "gma1.k 1.YQ.1.YQ", "gma1.k1.@@@.1.YQ", "gma1.k1.YQ.soon.YQ", "x".repeat(2000),
            good + "=", "gma1.k1\r\nforged log line.YQ.1.YQ", good.replace("." + good.split("\\.")[3] + ".",
                    ".\u0661\u0667\u0669\u0665.")}) {
            assertEquals(TokenException.Reason.MALFORMED, refused(t, bad), String.valueOf(bad));
        }
        assertEquals("a token of 2000 characters is not 1..1024", texts.get(texts.size() - 4));
        for (String text : texts) {
            assertFalse(text.contains("forged") || text.contains("\n"), "echoed: " + text);
        }
        for (String text : texts) {
            noSecretIn(text, secret1);
        }
    }

    @Test
    void keyRingsAreCheckedReadWrittenAndNeverShowTheirSecrets(@TempDir Path dir) throws Exception {
        assertEquals("the secret of key k1 is 16 bytes, under the minimum of 32", assertThrows(
                IllegalArgumentException.class, () -> KeyRing.of(Map.of("k1", new byte[16]), "k1")).getMessage());
        assertEquals("current key k9 is not among the keys [k1]", assertThrows(IllegalArgumentException.class,
                () -> KeyRing.of(Map.of("k1", secret1), "k9")).getMessage());
        assertEquals("key id \"a b\" is not 1..32 of [A-Za-z0-9_-]", assertThrows(IllegalArgumentException.class,
                () -> KeyRing.generate("a b")).getMessage());
        KeyRing two = ring.rotateTo("k2", secret2);
        Path file = dir.resolve("domain.keys");
        KeyFiles.writeNew(file, two.toKeysFile());
        KeyRing back = KeyRing.read(file);
        assertEquals(two, back);
        assertEquals("k2", back.current());
        assertEquals("KeyRing[k1, k2] current k2", back.toString());
        noSecretIn(back.toString(), secret1, secret2);
        Files.writeString(file, "current = k1\nk1 = not*base64\n");
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> KeyRing.read(file));
        assertEquals("the secret of key k1 in " + file + " is not Base64", e.getMessage());
        KeyRing generated = KeyRing.generate("g1");
        String token = tokens(generated, T0).issue("pc@dsg", Duration.ofMinutes(1));
        assertEquals(TokenException.Reason.BAD_SIGNATURE, refused(tokens(KeyRing.generate("g1"), T0), token));
    }
}
