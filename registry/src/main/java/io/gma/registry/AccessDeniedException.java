package io.gma.registry;

/**
 * Thrown by an {@link Authenticator} (answered with 401) or an {@link Authorizer} (answered with 403). The
 * message is sent to the caller: it names what was missing or refused, never a secret or which part of one
 * was wrong.
 */
public class AccessDeniedException extends Exception {
    private static final long serialVersionUID = 1L;

    public AccessDeniedException(String message) {
        super(message);
    }
}
