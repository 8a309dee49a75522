package io.gma.security;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class SecurityTest {
    private static final byte[] SECRET = "0123456789abcdef0123456789abcdef".getBytes(StandardCharsets.US_ASCII);
    private static final KeyRing RING = KeyRing.of(Map.of("k1", SECRET), "k1");
    private static final Rules RULES = Rules.parse("send alice pong@dsg", "rules");
    private static final SigningKey ALICE_KEY = SigningKey.generate("alice", "k1");
    private static final SigningKey WEST_KEY = SigningKey.generate("west", "k1");
    private static final Trust TRUST = Trust.of(List.of(
            new Trust.Key("alice", "k1", ALICE_KEY.publicKey(), "alice", null),
            new Trust.Key("west", "k1", WEST_KEY.publicKey(), "west", null)));

    /** TLS with the JDK's CAs: enough for a client's security in a unit test. */
    static Tls tls() {
        try {
            return Tls.builder().build();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static Security hmacAlice() {
        return Security.builder().tls(tls()).keys(RING).identity("alice").rules(RULES).build();
    }

    private static Security alice() {
        return Security.builder().tls(tls()).signingKey(ALICE_KEY).trust(TRUST).identity("alice").rules(RULES)
                .build();
    }

    @Test
    void aSignedTokenNamesItsAudienceAndIsReusedUntilHalfItsLife() throws Exception {
        Security s = alice();
        String forEast = s.bearer("east");
        assertTrue(forEast.startsWith("Bearer gma2."), forEast);
        assertEquals(forEast, s.bearer("east"), "reused");
        assertNotEquals(forEast, s.bearer("west"), "one token per audience");
        assertEquals("alice", s.authenticate(forEast, null, "east"));
        AuthException replayed = assertThrows(AuthException.class, () -> s.authenticate(forEast, null, "north"));
        assertEquals("token refused (WRONG_AUDIENCE): the token is for \"east\", not for \"north\"",
                replayed.getMessage());
        s.authorize("alice", Rules.Verb.SEND, "pong@dsg");
        AuthException no = assertThrows(AuthException.class,
                () -> s.authorize("alice", Rules.Verb.SEND, "ping@dsg"));
        assertEquals(AuthException.Kind.FORBIDDEN, no.kind());
        assertEquals(403, no.kind().status());
    }

    @Test
    void anHmacTokenNamesNoAudienceAndIsTakenWhereTheSecretIs() throws Exception {
        Security s = hmacAlice();
        String bearer = s.bearer("east");
        assertTrue(bearer.startsWith("Bearer gma1.k1."), bearer);
        assertEquals(bearer, s.bearer("west"), "one token for every audience");
        assertEquals("alice", s.authenticate(bearer, null, "north"));
        AuthException signedRefused = assertThrows(AuthException.class,
                () -> s.authenticate(alice().bearer("east"), null, "east"));
        assertEquals("signed (gma2) tokens are not accepted here (no trust file): use a client certificate",
                signedRefused.getMessage());
    }

    @Test
    void refusalsSayWhatWasMissingOrWrongButNeverTheSecretOrToken() {
        Security s = hmacAlice();
        String good = s.bearer("x");
        String foreign = Security.builder().tls(tls()).keys(KeyRing.of(Map.of("k1",
                "ffffffffffffffffffffffffffffffff".getBytes(StandardCharsets.US_ASCII)), "k1")).identity("alice")
                .build().bearer("x");
        String unknownKey = Security.builder().tls(tls()).keys(KeyRing.of(Map.of("k9", SECRET), "k9"))
                .identity("alice").build().bearer("x");
        String tampered = good.substring(0, good.length() - 2) + (good.endsWith("AA") ? "BB" : "AA");
        for (String[] c : new String[][] {
                {null, "no credentials"}, {"", "no credentials"}, {"Basic YWxpY2U6eA==", "Bearer <token>"},
                {foreign, Security.NOT_VALID}, {tampered, Security.NOT_VALID}, {unknownKey, "UNKNOWN_KEY"},
                {"Bearer nonsense", Security.NOT_VALID}, {"Bearer gma1.nonsense", Security.NOT_VALID}}) {
            AuthException e = assertThrows(AuthException.class, () -> s.authenticate(c[0], null, "x"), c[0]);
            assertEquals(AuthException.Kind.UNAUTHORIZED, e.kind());
            assertTrue(e.getMessage().contains(c[1]), e.getMessage());
            if (c[0] != null && c[0].length() > 20) {
                assertFalse(e.getMessage().contains(c[0].substring(7)), e.getMessage());
            }
        }
    }

    @Test
    void aCertificateIdentityCountsWhenNoTokenIsSent() throws Exception {
        assertEquals("bob", alice().authenticate(null, "bob", "east"));
        assertEquals("alice", alice().authenticate(alice().bearer("east"), "bob", "east"),
                "a token, when sent, says who");
    }

    @Test
    void insecureLetsEveryoneDoEverythingAndSaysSo() throws Exception {
        Security open = Security.insecure();
        assertEquals(Security.ANONYMOUS, open.authenticate(null, null, "east"));
        open.authorize(Security.ANONYMOUS, Rules.Verb.QUERY, "anything");
        assertNull(open.bearer("east"));
        assertFalse(open.authenticates());
        assertTrue(open.warning("registry").contains("INSECURE"));
        assertNull(alice().warning("registry"));
        open.requireSecureUrl("http://127.0.0.1:1", "registry URL"); // nothing to protect
    }

    @Test
    void aSecureSideRefusesPlaintextUrls() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> alice().requireSecureUrl("http://127.0.0.1:8081", "domain west's URL"));
        assertEquals("domain west's URL http://127.0.0.1:8081: expected scheme 'https' but was 'http' (security is"
                + " on: credentials must not cross the network in plaintext)", e.getMessage());
        alice().requireSecureUrl("HTTPS://127.0.0.1:8081", "domain west's URL");
    }

    @Test
    void withoutSecurityAComponentMayListenOnThisMachineOnly() {
        assertEquals(Security.insecure(), Security.unlessExposed("127.0.0.1", "registry"));
        assertEquals(Security.insecure(), Security.unlessExposed("::1", "registry"));
        assertEquals(Security.insecure(), Security.unlessExposed("localhost", "registry"));
        IllegalStateException e = assertThrows(IllegalStateException.class,
                () -> Security.unlessExposed("0.0.0.0", "PC servlet of cardiff"));
        assertTrue(e.getMessage().startsWith("PC servlet of cardiff would listen on 0.0.0.0, beyond this machine,"
                + " without security"), e.getMessage());
        assertTrue(e.getMessage().contains("Security.insecure()"), e.getMessage());
        assertThrows(IllegalStateException.class, () -> Security.unlessExposed("no-such-host.invalid", "x"));
    }

    @Test
    void securityNeedsTlsAWayToAuthenticateAndATrustThatVouchesForItsIdentity() {
        assertTrue(assertThrows(IllegalStateException.class, () -> Security.builder().keys(RING).build())
                .getMessage().contains("security needs TLS"));
        assertTrue(assertThrows(IllegalStateException.class, () -> Security.builder().tls(tls()).build())
                .getMessage().contains("authenticate"));
        IllegalStateException notVouched = assertThrows(IllegalStateException.class, () -> Security.builder()
                .tls(tls()).signingKey(WEST_KEY).trust(TRUST).identity("alice").build());
        assertEquals("the trust does not let issuer west vouch for identity alice: add alice to the subjects of its"
                + " line (gma keys writes them), or sign with alice's own key", notVouched.getMessage());
        assertThrows(IllegalArgumentException.class, () -> Security.builder().tokenLifetime(Duration.ofDays(2)));
        assertNotEquals(-1, alice().toString().indexOf("alice"));
        assertFalse(alice().toString().contains("gma2."));
    }
}
