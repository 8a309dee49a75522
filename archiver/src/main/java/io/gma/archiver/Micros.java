package io.gma.archiver;

import java.time.Instant;
import java.time.temporal.ChronoUnit;

/** Times as the tables carry them: microseconds since 1970-01-01T00:00:00Z. */
final class Micros {
    private Micros() {
    }

    static long now() {
        return ChronoUnit.MICROS.between(Instant.EPOCH, Instant.now());
    }

    /** As an instant, for sentences; any long fits. */
    static Instant instant(long micros) {
        return Instant.ofEpochSecond(Math.floorDiv(micros, 1_000_000L), Math.floorMod(micros, 1_000_000L) * 1000L);
    }
}
