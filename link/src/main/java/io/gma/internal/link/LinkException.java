package io.gma.internal.link;

import io.gma.wire.ErrorCode;
import java.io.IOException;
import java.util.Objects;

/**
 * Why a link, or a send queue, failed: {@link #code()} is the ERROR code that says it (QUEUE_FULL, TIMEOUT,
 * UNAUTHORIZED, an ERROR the peer refused the link with, SHUTTING_DOWN, ...), the message says what and where,
 * naming values and limits. The client turns it into its public {@code EndpointException}, with the same code,
 * message and cause, where it leaves this package.
 */
public final class LinkException extends IOException {
    private static final long serialVersionUID = 1L;

    private final ErrorCode code;

    public LinkException(ErrorCode code, String message) {
        super(message);
        this.code = Objects.requireNonNull(code, "code");
    }

    public LinkException(ErrorCode code, String message, Throwable cause) {
        super(message, cause);
        this.code = Objects.requireNonNull(code, "code");
    }

    /** Why it failed. */
    public ErrorCode code() {
        return code;
    }
}
