package io.gma.registry;

import java.security.SecureRandom;
import java.util.regex.Pattern;

/**
 * The name rules of PROTOCOL.md section 3, and the nonces that make registered names unique. Whether a name
 * carries a nonce is known only from the registration that made it (the store keeps the label): it is never
 * guessed from the name's shape, since {@code x-abc234@east} may be the exact label {@code x-abc234}.
 */
final class Names {
    static final int MAX_LABEL = 64;
    static final int MAX_DOMAIN = 64;
    static final int NONCE_LENGTH = 6;
    private static final Pattern LABEL = Pattern.compile("[A-Za-z0-9._-]{1,64}");
    private static final Pattern DOMAIN = Pattern.compile("[A-Za-z0-9.-]{1,64}");
    private static final Pattern ATTRIBUTE_KEY = Pattern.compile("[A-Za-z0-9._-]{1,64}");
    private static final Pattern NAME = Pattern.compile("[A-Za-z0-9._-]{1,64}(-[a-z2-7]{6})?@[A-Za-z0-9.-]{1,64}");
    private static final Pattern NONCE = Pattern.compile("[a-z2-7]{6}");
    private static final char[] NONCE_ALPHABET = "abcdefghijklmnopqrstuvwxyz234567".toCharArray();
    private static final SecureRandom RANDOM = new SecureRandom();

    private Names() {
    }

    static String label(String field, String value) {
        return check(LABEL, field, value, "1..64 of [A-Za-z0-9._-]");
    }

    static String domain(String field, String value) {
        return check(DOMAIN, field, value, "1..64 of [A-Za-z0-9.-]");
    }

    static String attributeKey(String value) {
        return check(ATTRIBUTE_KEY, "attribute key", value, "1..64 of [A-Za-z0-9._-]");
    }

    /** Checks a full registered name, as found in a URL path. */
    static String name(String value) {
        return check(NAME, "name", value, "<label>[-<nonce>]@<domain>");
    }

    /** A nonce a registration asks for, to take back its name. */
    static String givenNonce(String value) {
        return check(NONCE, "nonce", value, "6 of [a-z2-7]");
    }

    static String nonce() {
        char[] nonce = new char[NONCE_LENGTH];
        for (int i = 0; i < nonce.length; i++) {
            nonce[i] = NONCE_ALPHABET[RANDOM.nextInt(NONCE_ALPHABET.length)];
        }
        return new String(nonce);
    }

    private static String check(Pattern pattern, String field, String value, String rule) {
        if (value == null) {
            throw ApiException.badRequest(field + " is missing");
        }
        if (!pattern.matcher(value).matches()) {
            throw ApiException.badRequest(field + " " + Json.quote(value) + " is not " + rule);
        }
        return value;
    }
}
