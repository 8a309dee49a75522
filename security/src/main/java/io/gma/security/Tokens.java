package io.gma.security;

import java.nio.charset.StandardCharsets;
import java.security.InvalidKeyException;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import java.util.Objects;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * Issues and checks the bearer tokens of a domain: HMAC-SHA256 over a subject (an endpoint's name, or a
 * domain), an expiry and a key id, keyed by the domain's shared secret of that id (security/README.md has
 * the format).
 *
 * <pre>
 *   gma1.k2.Y3B1LWszeDdxekBkc2c.1795176000.2mU1c6...
 *   ^    ^  ^                  ^          ^
 *   |    |  subject, Base64url  expiry,    HMAC-SHA256(secret of k2, everything before the last dot),
 *   |    key id                epoch s    Base64url
 *   format version
 * </pre>
 *
 * <pre>{@code
 * Tokens tokens = Tokens.with(KeyRing.read(Path.of("domain.keys"))).build();
 * String t = tokens.issue("cpu-k3x7qz@dsg", Duration.ofHours(1));
 * String who = tokens.verify(t).subject();            // throws TokenException when refused
 * }</pre>
 *
 * Signatures are compared in constant time. Immutable and thread-safe.
 */
public final class Tokens {
    static final String VERSION = "gma1";
    /** The longest token accepted, in characters: a subject is a name, at most a few hundred. */
    public static final int MAX_TOKEN_CHARS = 1024;
    private static final Base64.Encoder B64 = Base64.getUrlEncoder().withoutPadding();
    private static final Base64.Decoder B64_DECODE = Base64.getUrlDecoder();
    private static final java.util.regex.Pattern KEY_ID = java.util.regex.Pattern.compile("[A-Za-z0-9_-]{1,32}");
    /** At most 12 digits (the year 33658): Instant arithmetic on it never overflows. */
    private static final java.util.regex.Pattern EXPIRY = java.util.regex.Pattern.compile("[0-9]{1,12}");
    private static final java.util.regex.Pattern BASE64URL = java.util.regex.Pattern.compile("[A-Za-z0-9_-]+");

    /** A token that verified. */
    public record Verified(String subject, Instant expiresAt, String keyId) {
    }

    private final KeyRing keys;
    private final TokenTimes times;

    private Tokens(Builder b) {
        this.keys = b.keys;
        this.times = b.times;
    }

    public static Builder with(KeyRing keys) {
        return new Builder(keys);
    }

    /**
     * A token for {@code subject}, valid for {@code lifetime}, signed with the ring's current key.
     *
     * @throws IllegalArgumentException if the subject is empty or over 255 characters, or the lifetime is not
     *     positive or longer than maxLifetime
     */
    public String issue(String subject, Duration lifetime) {
        if (subject == null || subject.isEmpty() || subject.length() > 255) {
            throw new IllegalArgumentException("subject \"" + subject + "\" is not 1..255 characters");
        }
        if (lifetime.isNegative() || lifetime.isZero() || lifetime.compareTo(times.maxLifetime()) > 0) {
            throw new IllegalArgumentException("lifetime " + lifetime + " is outside 1 s.." + times.maxLifetime());
        }
        long expiry = times.clock().instant().plus(lifetime).getEpochSecond();
        String kid = keys.current();
        String signed = VERSION + "." + kid + "." + B64.encodeToString(subject.getBytes(StandardCharsets.UTF_8))
                + "." + expiry;
        String token = signed + "." + B64.encodeToString(mac(keys.secret(kid), signed));
        if (token.length() > MAX_TOKEN_CHARS) {
            throw new IllegalArgumentException("a token for a subject of " + subject.getBytes(
                    StandardCharsets.UTF_8).length + " UTF-8 bytes would be " + token.length() + " characters, over "
                    + MAX_TOKEN_CHARS);
        }
        return token;
    }

    /**
     * Checks a token: its form, its key, its signature, then its expiry.
     *
     * @throws TokenException naming what was refused (never which part of a signature differed)
     */
    public Verified verify(String token) throws TokenException {
        if (token == null || token.length() > MAX_TOKEN_CHARS) {
            throw new TokenException(TokenException.Reason.MALFORMED, "a token of " + (token == null ? "no"
                    : token.length()) + " characters is not 1.." + MAX_TOKEN_CHARS);
        }
        String[] part = token.split("\\.", -1);
        if (part.length != 5 || !part[0].equals(VERSION)) {
            throw new TokenException(TokenException.Reason.MALFORMED, "not a " + VERSION
                    + " token (version.keyId.subject.expiry.signature)");
        }
        if (!KEY_ID.matcher(part[1]).matches() || !EXPIRY.matcher(part[3]).matches()
                || !BASE64URL.matcher(part[2]).matches() || !BASE64URL.matcher(part[4]).matches()) {
            // nothing of the token is echoed: it may carry anything, line breaks included
            throw new TokenException(TokenException.Reason.MALFORMED, "a token's key id, subject, expiry or"
                    + " signature is not of its form");
        }
        byte[] secret = keys.secret(part[1]);
        if (secret == null) {
            throw new TokenException(TokenException.Reason.UNKNOWN_KEY, "key id " + part[1]
                    + " is not in this domain's key ring");
        }
        byte[] given;
        byte[] subject;
        long expiry;
        try {
            given = B64_DECODE.decode(part[4]);
            subject = B64_DECODE.decode(part[2]);
            expiry = Long.parseLong(part[3]);
        } catch (IllegalArgumentException notDecodable) {
            throw new TokenException(TokenException.Reason.MALFORMED, "a token's subject, expiry or signature"
                    + " does not decode");
        }
        if (!B64.encodeToString(given).equals(part[4]) || !B64.encodeToString(subject).equals(part[2])) {
            // one token, one spelling: unused bits set, or padding, would let a copy pass a replay check
            throw new TokenException(TokenException.Reason.MALFORMED, "a token's subject or signature is not in"
                    + " its canonical Base64url");
        }
        byte[] expected = mac(secret, token.substring(0, token.lastIndexOf('.')));
        if (!MessageDigest.isEqual(expected, given)) {
            throw new TokenException(TokenException.Reason.BAD_SIGNATURE, "the token's signature does not verify"
                    + " with key " + part[1]);
        }
        Instant expiresAt = Instant.ofEpochSecond(expiry);
        Instant now = times.clock().instant();
        times.checkNotExpired(expiresAt, now);
        times.checkNotTooLongLived(expiresAt, now);
        return new Verified(new String(subject, StandardCharsets.UTF_8), expiresAt, part[1]);
    }

    private static byte[] mac(byte[] secret, String signed) {
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(secret, "HmacSHA256"));
            return mac.doFinal(signed.getBytes(StandardCharsets.UTF_8));
        } catch (NoSuchAlgorithmException | InvalidKeyException e) {
            throw new IllegalStateException("HmacSHA256 is missing from this JDK", e); // every JDK has it
        }
    }

    /** Settings of a token issuer and checker; the key ring is required. */
    public static final class Builder {
        private final KeyRing keys;
        private TokenTimes times = TokenTimes.DEFAULT;

        private Builder(KeyRing keys) {
            this.keys = Objects.requireNonNull(keys, "keys");
        }

        /** How far clocks may disagree: an expired token is still taken this long; default 60 s, at most 1 h. */
        public Builder skew(Duration skew) {
            times = times.withSkew(skew);
            return this;
        }

        /** The longest lifetime a token may have; default 24 h. */
        public Builder maxLifetime(Duration lifetime) {
            times = times.withMaxLifetime(lifetime);
            return this;
        }

        /** The clock; default the system's (for tests). */
        public Builder clock(Clock clock) {
            times = times.withClock(clock);
            return this;
        }

        public Tokens build() {
            return new Tokens(this);
        }
    }
}
