package io.gma.internal.spool;

import java.io.IOException;

/** A spool could not do what was asked; {@link #full()} tells a full spool (push back) from a failure. */
public final class SpoolException extends IOException {
    private static final long serialVersionUID = 1L;
    private final boolean full;

    SpoolException(String message, boolean full, Throwable cause) {
        super(message, cause);
        this.full = full;
    }

    /** Whether the spool, or the disk under it, had no room: the caller pushes back, as for a full queue. */
    public boolean full() {
        return full;
    }
}
