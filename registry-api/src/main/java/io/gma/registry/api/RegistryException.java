package io.gma.registry.api;

import java.io.IOException;

/**
 * The registry refused a call, or could not be reached. {@link #status()} is the HTTP status (0 when no
 * answer came), {@link #code()} the registry's error code ({@code NOT_FOUND}, {@code CONFLICT}, ...,
 * {@code UNREACHABLE} when no answer came), and the message the registry's sentence.
 */
public final class RegistryException extends IOException {
    private static final long serialVersionUID = 1L;

    private final int status;
    private final String code;

    public RegistryException(int status, String code, String message, Throwable cause) {
        super(message, cause);
        this.status = status;
        this.code = code;
    }

    /** The HTTP status, or 0 when the registry did not answer. */
    public int status() {
        return status;
    }

    /** The registry's error code, such as {@code NOT_FOUND}, or {@code UNREACHABLE}. */
    public String code() {
        return code;
    }
}
