package io.gma.pcservlet;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Objects;

/**
 * Where and how a PC servlet keeps on disk what it took (docs/pcservlet.md, "Delivery"): whatever it
 * acknowledges is in its spool first, and stays there until the next hop acknowledges it, so that a crash loses
 * nothing.
 *
 * @param dir the spool's directory, this PC servlet's alone (made if need be)
 * @param fsync when what is appended is forced to disk before it is acknowledged
 * @param maxBytes the spool's files together, at most; past it, senders are held back as by a full queue
 * @param maxAge how old a message read back at start may be (zero: any age); older ones go back to their
 *     senders as ERROR TIMEOUT
 */
public record SpoolOptions(Path dir, Fsync fsync, long maxBytes, Duration maxAge) {
    /** The default bound on the spool's files: 1 GiB. */
    public static final long DEFAULT_MAX_BYTES = 1L << 30;

    public SpoolOptions {
        Objects.requireNonNull(dir, "dir");
        Objects.requireNonNull(fsync, "fsync");
        Objects.requireNonNull(maxAge, "maxAge");
        if (maxBytes < 1 << 20) {
            throw new IllegalArgumentException("maxSpoolBytes " + maxBytes + " is under 1 MiB (1048576)");
        }
        if (maxAge.isNegative()) {
            throw new IllegalArgumentException("maxAge " + maxAge + " is negative");
        }
    }

    /** In {@code dir}, with group commit, at most 1 GiB, of any age. */
    public static SpoolOptions in(Path dir) {
        return new SpoolOptions(dir, Fsync.BATCH, DEFAULT_MAX_BYTES, Duration.ZERO);
    }

    /** When a PC servlet forces what it spooled to disk, before it acknowledges it. */
    public enum Fsync {
        /** Each message on its own: the safest, and slow (one disk flush each). */
        ALWAYS,
        /** Group commit: one flush covers every message that came while the one before it ran. The default. */
        BATCH,
        /** Never: a crash of the process loses nothing, a crash of the machine may. */
        NEVER;

        io.gma.internal.spool.Fsync spool() {
            return io.gma.internal.spool.Fsync.valueOf(name());
        }
    }
}
