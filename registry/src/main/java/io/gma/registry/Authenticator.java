package io.gma.registry;

import jakarta.servlet.http.HttpServletRequest;

/**
 * Establishes who is calling, from the request's headers (or its TLS client certificate) only: it runs
 * before the body is read. The security module provides implementations; without one, the registry is open
 * and every caller is {@link #ANONYMOUS}.
 */
@FunctionalInterface
public interface Authenticator {
    /** The identity of every caller of an open registry. */
    String ANONYMOUS = "anonymous";

    /**
     * @return the caller's identity, never null
     * @throws AccessDeniedException if credentials are missing or not valid; the caller gets 401
     */
    String authenticate(HttpServletRequest request) throws AccessDeniedException;
}
