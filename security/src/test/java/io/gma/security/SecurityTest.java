package io.gma.security;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

class SecurityTest {
    private static final byte[] SECRET = "0123456789abcdef0123456789abcdef".getBytes(StandardCharsets.US_ASCII);
    private static final KeyRing RING = KeyRing.of(Map.of("k1", SECRET), "k1");
    private static final Rules RULES = Rules.parse("send alice pong@dsg", "rules");

    private static Security alice() {
        return Security.builder().plaintext().keys(RING).identity("alice").rules(RULES).build();
    }

    @Test
    void aMintedTokenAuthenticatesItsIdentityAndIsReusedUntilHalfItsLife() throws Exception {
        Security s = alice();
        String bearer = s.bearer();
        assertTrue(bearer.startsWith("Bearer gma1.k1."), bearer);
        assertEquals(bearer, s.bearer());
        assertEquals("alice", s.authenticate(bearer, null));
        s.authorize("alice", Rules.Verb.SEND, "pong@dsg");
        AuthException no = assertThrows(AuthException.class,
                () -> s.authorize("alice", Rules.Verb.SEND, "ping@dsg"));
        assertEquals(AuthException.Kind.FORBIDDEN, no.kind());
        assertEquals(403, no.kind().status());
    }

    @Test
    void refusalsSayWhatWasMissingOrWrongButNeverTheSecretOrToken() {
        Security s = alice();
        String good = s.bearer();
        String foreign = Security.builder().plaintext().keys(KeyRing.of(Map.of("k1",
                "ffffffffffffffffffffffffffffffff".getBytes(StandardCharsets.US_ASCII)), "k1")).identity("alice")
                .build().bearer();
        String unknownKey = Security.builder().plaintext().keys(KeyRing.of(Map.of("k9", SECRET), "k9"))
                .identity("alice").build().bearer();
        String tampered = good.substring(0, good.length() - 2) + (good.endsWith("AA") ? "BB" : "AA");
        for (String[] c : new String[][] {
                {null, "no credentials"}, {"", "no credentials"}, {"Basic YWxpY2U6eA==", "Bearer <token>"},
                {foreign, "BAD_SIGNATURE"}, {tampered, "BAD_SIGNATURE"}, {unknownKey, "UNKNOWN_KEY"},
                {"Bearer nonsense", "MALFORMED"}}) {
            AuthException e = assertThrows(AuthException.class, () -> s.authenticate(c[0], null), c[0]);
            assertEquals(AuthException.Kind.UNAUTHORIZED, e.kind());
            assertTrue(e.getMessage().contains(c[1]), e.getMessage());
            if (c[0] != null && c[0].length() > 20) {
                assertFalse(e.getMessage().contains(c[0].substring(7)), e.getMessage());
            }
        }
    }

    @Test
    void aCertificateIdentityCountsWhenNoTokenIsSent() throws Exception {
        assertEquals("bob", alice().authenticate(null, "bob"));
        assertEquals("alice", alice().authenticate(alice().bearer(), "bob"), "a token, when sent, says who");
    }

    @Test
    void insecureLetsEveryoneDoEverythingAndSaysSo() throws Exception {
        Security open = Security.insecure();
        assertEquals(Security.ANONYMOUS, open.authenticate(null, null));
        open.authorize(Security.ANONYMOUS, Rules.Verb.QUERY, "anything");
        assertNull(open.bearer());
        assertFalse(open.authenticates());
        assertTrue(open.warning("registry").contains("INSECURE"));
        assertTrue(alice().warning("registry").contains("without TLS"));
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
    void securityNeedsTlsOrAnExplicitPlaintextAndAWayToAuthenticate() {
        assertTrue(assertThrows(IllegalStateException.class, () -> Security.builder().keys(RING).build())
                .getMessage().contains("plaintext()"));
        assertTrue(assertThrows(IllegalStateException.class, () -> Security.builder().plaintext().build())
                .getMessage().contains("authenticate"));
        assertThrows(IllegalArgumentException.class, () -> Security.builder().tokenLifetime(Duration.ofDays(2)));
        assertNotEquals(-1, alice().toString().indexOf("alice"));
        assertFalse(alice().toString().contains("gma1."));
    }
}
