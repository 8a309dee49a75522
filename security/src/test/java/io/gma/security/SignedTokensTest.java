package io.gma.security;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/** Ed25519 tokens: who may vouch for whom, audiences, rotation, and what a forger or a replayer meets. */
class SignedTokensTest {
    private static final Instant T0 = Instant.parse("2026-11-24T12:00:00Z");
    private static final SigningKey EAST = SigningKey.generate("east", "k1");
    private static final SigningKey WEST = SigningKey.generate("west", "k1");
    private static final SigningKey ALICE = SigningKey.generate("alice", "k1");
    /** East vouches for itself and its agents; west for itself; alice for herself. */
    private static final Trust TRUST = Trust.of(List.of(
            new Trust.Key("east", "k1", EAST.publicKey(), "east,agent-*", null),
            new Trust.Key("west", "k1", WEST.publicKey(), "west", null),
            new Trust.Key("alice", "k1", ALICE.publicKey(), "alice", null)));

    private static SignedTokens verifier(Trust trust, Instant now) {
        return SignedTokens.verifier(() -> trust).clock(Clock.fixed(now, ZoneOffset.UTC)).build();
    }

    private static TokenException.Reason refusal(SignedTokens v, String token, String audience) {
        return assertThrows(TokenException.class, () -> v.verify(token, audience)).reason();
    }

    @Test
    void anIssuerVouchesForTheSubjectsItsTrustLineNamesAndNoOthers() throws Exception {
        SignedTokens v = verifier(TRUST, T0);
        Instant exp = T0.plusSeconds(3600);
        assertEquals("alice", v.verify(SignedTokens.issue(ALICE, "alice", "east", exp), "east").subject());
        assertEquals("agent-7", v.verify(SignedTokens.issue(EAST, "agent-7", "registry", exp), "registry")
                .subject());
        // forgery: west's key makes a perfectly signed token for east's identities; nobody takes it
        for (String victim : new String[] {"east", "alice", "agent-7"}) {
            String forged = SignedTokens.issue(WEST, victim, "east", exp);
            TokenException e = assertThrows(TokenException.class, () -> v.verify(forged, "east"));
            assertEquals(TokenException.Reason.FOREIGN_SUBJECT, e.reason(), victim);
            assertEquals("issuer \"west\" is not trusted to vouch for \"" + victim + "\"", e.getMessage());
        }
        // a key the verifier does not hold at all, under a trusted issuer's name
        SigningKey impostor = SigningKey.generate("east", "k1");
        assertEquals(TokenException.Reason.BAD_SIGNATURE, refusal(v, SignedTokens.issue(impostor, "east", "east",
                exp), "east"));
        assertEquals(TokenException.Reason.UNKNOWN_KEY, refusal(v, SignedTokens.issue(SigningKey.generate("north",
                "k1"), "north", "east", exp), "east"));
    }

    @Test
    void aTokenIsTakenOnlyByItsAudienceAndOnlyUntilItExpires() throws Exception {
        Instant exp = T0.plusSeconds(600);
        String atWest = SignedTokens.issue(ALICE, "alice", "west", exp);
        assertEquals("west", verifier(TRUST, T0).verify(atWest, "west").audience());
        TokenException replay = assertThrows(TokenException.class, () -> verifier(TRUST, T0).verify(atWest,
                "north"));
        assertEquals(TokenException.Reason.WRONG_AUDIENCE, replay.reason());
        assertEquals("the token is for \"west\", not for \"north\"", replay.getMessage());
        assertEquals(TokenException.Reason.WRONG_AUDIENCE, refusal(verifier(TRUST, T0), atWest, "registry"));
        // the skew of 60 s, then refused everywhere, its own audience included
        verifier(TRUST, exp.plusSeconds(60)).verify(atWest, "west");
        assertEquals(TokenException.Reason.EXPIRED, refusal(verifier(TRUST, exp.plusSeconds(61)), atWest, "west"));
        assertEquals(TokenException.Reason.TOO_LONG_LIVED, refusal(verifier(TRUST, T0), SignedTokens.issue(ALICE,
                "alice", "west", T0.plus(Duration.ofHours(25).plusSeconds(61))), "west"));
    }

    @Test
    void aRememberedTokenIsStillCheckedForAudienceExpiryAndTrust() throws Exception {
        AtomicReference<Instant> now = new AtomicReference<>(T0);
        AtomicReference<Trust> trust = new AtomicReference<>(TRUST);
        Clock clock = new Clock() {
            @Override
            public java.time.ZoneId getZone() {
                return ZoneOffset.UTC;
            }

            @Override
            public Clock withZone(java.time.ZoneId zone) {
                return this;
            }

            @Override
            public Instant instant() {
                return now.get();
            }
        };
        SignedTokens v = SignedTokens.verifier(trust::get).clock(clock).build();
        String t = SignedTokens.issue(ALICE, "alice", "east", T0.plusSeconds(100));
        v.verify(t, "east");
        v.verify(t, "east"); // remembered
        assertEquals(TokenException.Reason.WRONG_AUDIENCE, refusal(v, t, "west"));
        now.set(T0.plusSeconds(161));
        assertEquals(TokenException.Reason.EXPIRED, refusal(v, t, "east"));
        now.set(T0);
        trust.set(TRUST.without("alice", "k1"));
        assertEquals(TokenException.Reason.UNKNOWN_KEY, refusal(v, t, "east"), "a trust without the key drops"
                + " what was remembered");
    }

    @Test
    void rotationKeepsOldTokensDuringTheOverlapAndRefusesThemAfter() throws Exception {
        SigningKey k2 = EAST.rotate("k2");
        Instant overlapEnds = T0.plus(Duration.ofHours(25));
        Trust rotated = TRUST.with(new Trust.Key("east", "k2", k2.publicKey(), "east,agent-*", null))
                .retiring("east", "k2", overlapEnds);
        String old = SignedTokens.issue(EAST, "east", "west", T0.plusSeconds(3600));
        String fresh = SignedTokens.issue(k2, "east", "west", T0.plusSeconds(3600));
        assertEquals("k1", verifier(rotated, T0).verify(old, "west").keyId());
        assertEquals("k2", verifier(rotated, T0).verify(fresh, "west").keyId());
        assertEquals("k1", verifier(rotated, overlapEnds).verify(
                SignedTokens.issue(EAST, "east", "west", overlapEnds.plusSeconds(60)), "west").keyId());
        Instant after = overlapEnds.plusSeconds(1);
        assertEquals(TokenException.Reason.UNKNOWN_KEY, refusal(verifier(rotated, after),
                SignedTokens.issue(EAST, "east", "west", after.plusSeconds(60)), "west"));
        assertEquals("k2", verifier(rotated, after).verify(SignedTokens.issue(k2, "east", "west",
                after.plusSeconds(60)), "west").keyId());
        assertThrows(IllegalArgumentException.class, () -> EAST.rotate("k1"));
        // the trust file written and read back keeps the overlap's end
        Trust back = Trust.parse(rotated.toText(), "trust");
        assertEquals(overlapEnds, back.keys().stream().filter(k -> k.keyId().equals("k1") && k.issuer()
                .equals("east")).findFirst().orElseThrow().until());
    }

    /**
     * A byte altered in the signature, the subject, the audience or the expiry is refused, and a caller is told
     * the same sentence whichever part it was (Security maps both reasons to one). The token expires an hour from
     * now, as Security checks it by the system's clock: unaltered, it is taken.
     */
    @Test
    void anAlteredTokenIsRefusedWithoutSayingWhichPartWasAltered() throws Exception {
        Security verifier = Security.builder().tls(SecurityTest.tls()).trust(TRUST).build();
        String token = SignedTokens.issue(ALICE, "alice", "east", Instant.now().plusSeconds(3600));
        assertEquals("alice", verifier.authenticate("Bearer " + token, null, "east"), "the token unaltered");
        Set<String> answers = new HashSet<>();
        Set<String> parts = new HashSet<>();
        for (AlteredTokens.Altered bad : AlteredTokens.of(token)) {
            AuthException e = assertThrows(AuthException.class, () -> verifier.authenticate("Bearer " + bad.token(),
                    null, "east"), bad.toString());
            assertEquals(AuthException.Kind.UNAUTHORIZED, e.kind(), bad.toString());
            answers.add(e.getMessage());
            parts.add(bad.part());
        }
        assertEquals(Set.of("signature", "subject", "audience", "expiry"), parts);
        assertEquals(Set.of(Security.NOT_VALID), answers, "one answer for every altered part");
        for (String word : new String[] {"subject", "audience", "expiry", "signature"}) {
            assertFalse(Security.NOT_VALID.contains(word), word);
        }
    }

    @Test
    void tokensHaveOneSpellingAndBoundedFields() throws Exception {
        SignedTokens v = verifier(TRUST, T0);
        String t = SignedTokens.issue(ALICE, "alice", "east", T0.plusSeconds(60));
        assertEquals(TokenException.Reason.MALFORMED, refusal(v, t + "=", "east"));
        assertEquals(TokenException.Reason.MALFORMED, refusal(v, t.replaceFirst("^gma2", "gma3"), "east"));
        assertEquals(TokenException.Reason.MALFORMED, refusal(v, "x".repeat(2000), "east"));
        assertEquals(TokenException.Reason.MALFORMED, refusal(v, t + ".extra", "east"));
        assertThrows(IllegalArgumentException.class, () -> SignedTokens.issue(ALICE, "", "east", T0));
        assertThrows(IllegalArgumentException.class, () -> SignedTokens.issue(ALICE, "alice", "x".repeat(256), T0));
        assertNotEquals(t, SignedTokens.issue(ALICE, "alice", "west", T0.plusSeconds(60)));
    }

    @Test
    void theMemoryOfVerifiedTokensIsBounded() throws Exception {
        SignedTokens v = SignedTokens.verifier(() -> TRUST).clock(Clock.fixed(T0, ZoneOffset.UTC)).cacheEntries(16)
                .build();
        for (int i = 1; i <= 40; i++) {
            v.verify(SignedTokens.issue(ALICE, "alice", "east", T0.plusSeconds(i)), "east");
            assertEquals(Math.min(i, 16), v.remembered());
        }
    }
}
