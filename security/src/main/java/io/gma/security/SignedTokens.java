package io.gma.security;

import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.function.Supplier;
import java.util.regex.Pattern;

/**
 * Tokens signed with Ed25519 (format {@code gma2}): a verifier holds public keys only ({@link Trust}), so it
 * can check tokens but mint none, and each token names its audience, so one shown to west is refused at north.
 *
 * <pre>
 *   gma2.ZWFzdA.k1.YWxpY2U.d2VzdA.1795176000.kQ2v...
 *   ^    ^      ^  ^       ^     ^          ^
 *   |    |      |  |       |     expiry,    Ed25519(issuer's key k1, ASCII of everything before the last
 *   |    |      |  |       |     epoch s    dot), Base64url
 *   |    |      |  |       audience, Base64url: "registry", a domain, or an endpoint's name
 *   |    |      |  subject, Base64url: who the bearer is (an identity, as rules name it)
 *   |    |      key id of the issuer's key
 *   |    issuer, Base64url: whose key signed it (a domain, or the subject itself)
 *   format version
 * </pre>
 *
 * <p>A verifier checks, in order: the form; that the issuer's key is in its trust and not past its
 * {@code until}; the signature; that the trust lets that issuer vouch for the subject; the audience; the
 * expiry (with a clock skew) and that it is not further ahead than the longest lifetime. A token that passed
 * is remembered (at most {@value #CACHE_ENTRIES}, least recently used out), so a POST or a link pays the
 * signature check once per token, not once per call; the trust changing empties that memory.
 *
 * <p>Thread-safe.
 */
public final class SignedTokens {
    static final String VERSION = "gma2";
    /** Tokens remembered as verified, at most. */
    static final int CACHE_ENTRIES = 4096;
    private static final Base64.Encoder B64 = Base64.getUrlEncoder().withoutPadding();
    private static final Base64.Decoder B64_DECODE = Base64.getUrlDecoder();
    private static final Pattern KEY_ID = Pattern.compile("[A-Za-z0-9_-]{1,32}");
    private static final Pattern EXPIRY = Pattern.compile("[0-9]{1,12}");
    private static final Pattern BASE64URL = Pattern.compile("[A-Za-z0-9_-]+");
    /** What a refused token's form is told, whichever part was wrong. */
    static final String NOT_A_TOKEN = "not a well-formed " + VERSION + " token";

    /** A token that verified. */
    public record Verified(String issuer, String keyId, String subject, String audience, Instant expiresAt) {
    }

    private record Remembered(Verified token, Trust trust, Trust.Entry key) {
    }

    private final Supplier<Trust> trust;
    private final TokenTimes times;
    private final Map<String, Remembered> verified;

    private SignedTokens(Builder b) {
        this.trust = b.trust;
        this.times = b.times;
        int bound = b.cacheEntries;
        this.verified = new LinkedHashMap<>(256, 0.75f, true) {
            private static final long serialVersionUID = 1L;

            @Override
            protected boolean removeEldestEntry(Map.Entry<String, Remembered> eldest) {
                return size() > bound;
            }
        };
    }

    /** A verifier with this trust, asked for on each verification (so that a reloaded file takes effect). */
    public static Builder verifier(Supplier<Trust> trust) {
        return new Builder(trust);
    }

    /**
     * A token for {@code subject} to show {@code audience}, signed with {@code key}, expiring at
     * {@code expiresAt}.
     *
     * @throws IllegalArgumentException if the subject or audience is empty or over 255 characters, or the token
     *     would be longer than {@link Tokens#MAX_TOKEN_CHARS}
     */
    public static String issue(SigningKey key, String subject, String audience, Instant expiresAt) {
        for (String[] field : new String[][] {{"subject", subject}, {"audience", audience}}) {
            if (field[1] == null || field[1].isEmpty() || field[1].length() > 255) {
                throw new IllegalArgumentException(field[0] + " \"" + field[1] + "\" is not 1..255 characters");
            }
        }
        String signed = VERSION + "." + b64(key.issuer()) + "." + key.keyId() + "." + b64(subject) + "."
                + b64(audience) + "." + expiresAt.getEpochSecond();
        String token = signed + "." + B64.encodeToString(key.sign(signed.getBytes(StandardCharsets.US_ASCII)));
        if (token.length() > Tokens.MAX_TOKEN_CHARS) {
            throw new IllegalArgumentException("a token for subject \"" + subject + "\" and audience \"" + audience
                    + "\" would be " + token.length() + " characters, over " + Tokens.MAX_TOKEN_CHARS);
        }
        return token;
    }

    private static String b64(String text) {
        return B64.encodeToString(text.getBytes(StandardCharsets.UTF_8));
    }

    /**
     * Checks a token shown to {@code audience}.
     *
     * @throws TokenException naming what was refused; a token altered in its subject, audience, expiry or
     *     signature is told the same sentence whichever it was
     */
    public Verified verify(String token, String audience) throws TokenException {
        Instant now = times.clock().instant();
        Trust current = trust.get();
        Remembered r;
        synchronized (verified) {
            r = verified.get(token);
        }
        if (r == null || r.trust() != current || !r.key().key().validAt(now)) {
            r = verifyFully(token, current, now);
            synchronized (verified) {
                verified.put(token, r);
            }
        }
        Verified v = r.token();
        if (!v.audience().equals(audience)) {
            throw new TokenException(TokenException.Reason.WRONG_AUDIENCE, "the token is for \"" + v.audience()
                    + "\", not for \"" + audience + "\"");
        }
        times.checkNotExpired(v.expiresAt(), now);
        return v;
    }

    /** How many verified tokens are remembered now (for tests of the bound). */
    int remembered() {
        synchronized (verified) {
            return verified.size();
        }
    }

    private Remembered verifyFully(String token, Trust current, Instant now) throws TokenException {
        if (token == null || token.length() > Tokens.MAX_TOKEN_CHARS) {
            throw new TokenException(TokenException.Reason.MALFORMED, "a token of " + (token == null ? "no"
                    : token.length()) + " characters is not 1.." + Tokens.MAX_TOKEN_CHARS);
        }
        String[] part = token.split("\\.", -1);
        if (part.length != 7 || !part[0].equals(VERSION) || !KEY_ID.matcher(part[2]).matches()
                || !EXPIRY.matcher(part[5]).matches()) {
            throw new TokenException(TokenException.Reason.MALFORMED, NOT_A_TOKEN);
        }
        String issuer = text(part[1]);
        String subject = text(part[3]);
        String audience = text(part[4]);
        byte[] signature = decode(part[6]);
        Trust.Entry key = current.entry(issuer, part[2], now);
        if (key == null) {
            throw new TokenException(TokenException.Reason.UNKNOWN_KEY, "key " + part[2] + " of issuer \""
                    + issuer + "\" is not trusted here (not in the trust file, or past its until)");
        }
        if (!SigningKey.verify(key.key().publicKey(), token.substring(0, token.lastIndexOf('.'))
                .getBytes(StandardCharsets.US_ASCII), signature)) {
            throw new TokenException(TokenException.Reason.BAD_SIGNATURE, "the token's signature does not"
                    + " verify with key " + part[2] + " of issuer \"" + issuer + "\"");
        }
        if (!key.subjects().matches(subject)) {
            throw new TokenException(TokenException.Reason.FOREIGN_SUBJECT, "issuer \"" + issuer + "\" is not"
                    + " trusted to vouch for \"" + subject + "\"");
        }
        Instant expiresAt = Instant.ofEpochSecond(Long.parseLong(part[5]));
        times.checkNotTooLongLived(expiresAt, now);
        return new Remembered(new Verified(issuer, part[2], subject, audience, expiresAt), current, key);
    }

    /** A Base64url part in its one canonical spelling (a second spelling would let a copy pass as new). */
    private static byte[] decode(String part) throws TokenException {
        if (!BASE64URL.matcher(part).matches()) {
            throw new TokenException(TokenException.Reason.MALFORMED, NOT_A_TOKEN);
        }
        try {
            byte[] bytes = B64_DECODE.decode(part);
            if (B64.encodeToString(bytes).equals(part)) {
                return bytes;
            }
        } catch (IllegalArgumentException notDecodable) {
            // refused below
        }
        throw new TokenException(TokenException.Reason.MALFORMED, NOT_A_TOKEN);
    }

    private static String text(String part) throws TokenException {
        byte[] bytes = decode(part);
        String s = new String(bytes, StandardCharsets.UTF_8);
        if (s.isEmpty() || s.length() > 255 || !java.util.Arrays.equals(s.getBytes(StandardCharsets.UTF_8), bytes)) {
            throw new TokenException(TokenException.Reason.MALFORMED, NOT_A_TOKEN);
        }
        return s;
    }

    /** Settings of a verifier; the trust is required. */
    public static final class Builder {
        private final Supplier<Trust> trust;
        private TokenTimes times = TokenTimes.DEFAULT;
        private int cacheEntries = CACHE_ENTRIES;

        private Builder(Supplier<Trust> trust) {
            this.trust = Objects.requireNonNull(trust, "trust");
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

        /** How many verified tokens are remembered (for tests of the bound). */
        Builder cacheEntries(int entries) {
            this.cacheEntries = entries;
            return this;
        }

        public SignedTokens build() {
            return new SignedTokens(this);
        }
    }
}
