package io.gma.security;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Objects;

/**
 * When a token is taken, for both formats: the clock, how far clocks may disagree (an expired token is still
 * taken this long), and the longest lifetime a token may claim. Immutable; each setter checks its value.
 */
record TokenTimes(Clock clock, Duration skew, Duration maxLifetime) {
    static final TokenTimes DEFAULT = new TokenTimes(Clock.systemUTC(), Duration.ofSeconds(60), Duration.ofHours(24));

    TokenTimes withSkew(Duration s) {
        if (s.isNegative() || s.compareTo(Duration.ofHours(1)) > 0) {
            throw new IllegalArgumentException("skew " + s + " is outside 0..1 h");
        }
        return new TokenTimes(clock, s, maxLifetime);
    }

    TokenTimes withMaxLifetime(Duration lifetime) {
        if (lifetime.compareTo(Duration.ofSeconds(1)) < 0 || lifetime.compareTo(Duration.ofDays(366)) > 0) {
            throw new IllegalArgumentException("maxLifetime " + lifetime + " is outside 1 s..366 days");
        }
        return new TokenTimes(clock, skew, lifetime);
    }

    TokenTimes withClock(Clock c) {
        return new TokenTimes(Objects.requireNonNull(c, "clock"), skew, maxLifetime);
    }

    /** @throws TokenException EXPIRED when {@code now} is past the expiry and the skew */
    void checkNotExpired(Instant expiresAt, Instant now) throws TokenException {
        if (now.isAfter(expiresAt.plus(skew))) {
            throw new TokenException(TokenException.Reason.EXPIRED, "the token expired at " + expiresAt + ", now "
                    + now + " (clock skew allowed: " + skew.toSeconds() + " s)");
        }
    }

    /** @throws TokenException TOO_LONG_LIVED when the expiry is further ahead than the longest lifetime */
    void checkNotTooLongLived(Instant expiresAt, Instant now) throws TokenException {
        if (expiresAt.isAfter(now.plus(maxLifetime).plus(skew))) {
            throw new TokenException(TokenException.Reason.TOO_LONG_LIVED, "the token expires at " + expiresAt
                    + ", more than maxLifetime " + maxLifetime + " ahead");
        }
    }
}
