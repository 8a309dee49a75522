package io.gma.security;

/**
 * A token was refused. The message names what is wrong (its form, its key id, its expiry) but never which
 * part of a signature or secret differed: a forger learns nothing from it.
 */
public final class TokenException extends Exception {
    private static final long serialVersionUID = 1L;

    /** Why a token was refused. */
    public enum Reason {
        /** Not a token of this format, or too long. */
        MALFORMED,
        /** Signed with a key this ring does not hold (never had, or dropped after a rotation). */
        UNKNOWN_KEY,
        /** The signature does not verify: tampered, or signed with another secret. */
        BAD_SIGNATURE,
        /** Its expiry, plus the allowed clock skew, has passed. */
        EXPIRED,
        /** It expires further ahead than the longest lifetime allowed. */
        TOO_LONG_LIVED,
        /** Signed by an issuer the trust does not let vouch for its subject (west's key, for alice of east). */
        FOREIGN_SUBJECT,
        /** Made for another audience (a token shown to west, replayed at north). */
        WRONG_AUDIENCE
    }

    private final Reason reason;

    TokenException(Reason reason, String message) {
        super(message);
        this.reason = reason;
    }

    public Reason reason() {
        return reason;
    }
}
