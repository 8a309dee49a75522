package io.gma.security;

import static org.junit.jupiter.api.Assertions.assertThrows;

import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.Map;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import org.junit.jupiter.api.Test;

/**
 * Review of issue 6: a signed token whose expiry is beyond what an Instant holds (18 digits pass the form
 * check) must be refused with a TokenException, not escape verify() as a DateTimeException (a 500, or a link's
 * I/O thread logging an ERROR with a stack trace).
 */
class TokenExpiryRangeTest {
    @Test
    void anExpiryBeyondAnInstantIsRefusedAsATokenException() throws Exception {
        byte[] secret = new byte[32];
        KeyRing ring = KeyRing.of(Map.of("k1", secret), "k1");
        Base64.Encoder b64 = Base64.getUrlEncoder().withoutPadding();
        for (String expiry : new String[] {"999999999999999999", "31556889864403199"}) {
            String signed = "gma1.k1." + b64.encodeToString("alice".getBytes(StandardCharsets.UTF_8)) + "." + expiry;
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(secret, "HmacSHA256"));
            String token = signed + "." + b64.encodeToString(mac.doFinal(signed.getBytes(StandardCharsets.UTF_8)));
            assertThrows(TokenException.class, () -> Tokens.with(ring).build().verify(token), expiry);
        }
    }
}
