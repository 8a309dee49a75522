package io.gma.security;

import java.util.ArrayList;
import java.util.List;

/**
 * A signed ({@code gma2}) token altered as a forger would try: one character changed in its signature, its
 * subject, its audience or its expiry. None of them is a valid token. Public for the registry's and the PC
 * servlet's tests, in this module's test jar.
 */
public final class AlteredTokens {
    /** The parts altered, by their index among the token's dot-separated parts. */
    private static final String[] PARTS = {null, null, null, "subject", "audience", "expiry", "signature"};

    /** One altered token: which part, at which character. */
    public record Altered(String part, int at, String token) {
        @Override
        public String toString() {
            return part + " at " + at;
        }
    }

    private AlteredTokens() {
    }

    /**
     * {@code token} altered in each of the four parts, at its first character and about every quarter of it
     * after: a digit of the expiry one higher (mod 10), a character elsewhere another of Base64url.
     */
    public static List<Altered> of(String token) {
        String[] part = token.split("\\.", -1);
        if (part.length != PARTS.length || !part[0].equals(SignedTokens.VERSION)) {
            throw new IllegalArgumentException("not a " + SignedTokens.VERSION + " token of " + PARTS.length
                    + " parts");
        }
        List<Altered> altered = new ArrayList<>();
        for (int i = 0; i < PARTS.length; i++) {
            if (PARTS[i] == null) {
                continue;
            }
            for (int at = 0; at < part[i].length(); at += Math.max(1, part[i].length() / 4)) {
                String[] p = part.clone();
                char c = p[i].charAt(at);
                char flipped = PARTS[i].equals("expiry") ? (char) ('0' + (c - '0' + 1) % 10) : c == 'A' ? 'B' : 'A';
                p[i] = p[i].substring(0, at) + flipped + p[i].substring(at + 1);
                altered.add(new Altered(PARTS[i], at, String.join(".", p)));
            }
        }
        return altered;
    }
}
