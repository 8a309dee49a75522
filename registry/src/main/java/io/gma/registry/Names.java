package io.gma.registry;

import io.gma.security.Security;
import io.gma.wire.Name;
import java.security.SecureRandom;
import java.util.regex.Pattern;

/**
 * The name rules of protocol.md section 3 ({@link Name}) as the registry's API refuses them (400, the value
 * quoted as JSON), the rule for attribute keys, and the nonces that make registered names unique. Whether a
 * name carries a nonce is known only from the registration that made it (the store keeps the label): it is
 * never guessed from the name's shape, since {@code x-abc234@east} may be the exact label {@code x-abc234}.
 */
final class Names {
    /** Attribute keys are the registry's own rule (protocol.md names none): the characters of a label. */
    private static final Pattern ATTRIBUTE_KEY = Pattern.compile("[A-Za-z0-9._-]{1,64}");
    private static final char[] NONCE_ALPHABET = "abcdefghijklmnopqrstuvwxyz234567".toCharArray();
    private static final SecureRandom RANDOM = new SecureRandom();

    private Names() {
    }

    static String label(String field, String value) {
        return check(Name.isLabel(value), field, value, Name.LABEL_RULE);
    }

    static String domain(String field, String value) {
        check(Name.isDomain(value), field, value, Name.DOMAIN_RULE);
        if (value.equalsIgnoreCase(Security.REGISTRY_AUDIENCE)) {
            // a PC servlet's audience is its domain's name: tokens minted for a domain of this name would be the
            // registry's own, and could be replayed at it
            throw ApiException.badRequest(field + " " + Json.quote(value) + " is reserved: it is the registry's"
                    + " audience for tokens, and no domain may take it");
        }
        return value;
    }

    static String attributeKey(String value) {
        return check(value != null && ATTRIBUTE_KEY.matcher(value).matches(), "attribute key", value,
                "1..64 of [A-Za-z0-9._-]");
    }

    /** Checks a full registered name, as found in a URL path. */
    static String name(String value) {
        return check(Name.isName(value), "name", value, Name.NAME_RULE);
    }

    /** A nonce a registration asks for, to take back its name. */
    static String givenNonce(String value) {
        return check(Name.isNonce(value), "nonce", value, Name.NONCE_RULE);
    }

    static String nonce() {
        char[] nonce = new char[Name.NONCE_LENGTH];
        for (int i = 0; i < nonce.length; i++) {
            nonce[i] = NONCE_ALPHABET[RANDOM.nextInt(NONCE_ALPHABET.length)];
        }
        return new String(nonce);
    }

    private static String check(boolean valid, String field, String value, String rule) {
        if (value == null) {
            throw ApiException.badRequest(field + " is missing");
        }
        if (!valid) {
            throw ApiException.badRequest(field + " " + Json.quote(value) + " is not " + rule);
        }
        return value;
    }
}
