package io.gma.security;

/**
 * A caller was refused: UNAUTHORIZED (HTTP 401) when it did not prove who it is, FORBIDDEN (403) when it did
 * but the rules do not let it. The message is a sentence naming what was missing or refused, and never shows
 * a secret or which part of one was wrong.
 */
public final class AuthException extends Exception {
    private static final long serialVersionUID = 1L;

    /** The refusal's code, as protocol.md names it. */
    public enum Kind {
        UNAUTHORIZED(401), FORBIDDEN(403);

        private final int status;

        Kind(int status) {
            this.status = status;
        }

        /** The HTTP status that carries it. */
        public int status() {
            return status;
        }
    }

    private final Kind kind;

    public AuthException(Kind kind, String message) {
        super(message);
        this.kind = kind;
    }

    public Kind kind() {
        return kind;
    }
}
