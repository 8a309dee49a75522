package io.gma.client;

import io.gma.wire.ErrorCode;
import java.io.IOException;

/**
 * A send, request or registration that failed: {@link #code()} says why (QUEUE_FULL, TIMEOUT, NO_ROUTE, an
 * ERROR the peer answered with, SHUTTING_DOWN, ...), the message says what and where, naming values and
 * limits.
 */
public final class EndpointException extends IOException {
    private static final long serialVersionUID = 1L;

    private final ErrorCode code;

    public EndpointException(ErrorCode code, String message) {
        super(message);
        this.code = code;
    }

    public EndpointException(ErrorCode code, String message, Throwable cause) {
        super(message, cause);
        this.code = code;
    }

    /** Why it failed. */
    public ErrorCode code() {
        return code;
    }
}
