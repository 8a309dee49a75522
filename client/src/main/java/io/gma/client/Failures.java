package io.gma.client;

import io.gma.internal.link.LinkException;
import io.gma.registry.api.RegistryException;
import io.gma.wire.ErrorCode;

/**
 * Failures across the client's boundaries. What a link or a send queue reports as a {@link LinkException}
 * reaches an application as an {@link EndpointException}, with the same code, message, cause and stack trace;
 * a failure the endpoint decides (SHUTTING_DOWN, NO_ROUTE) is handed to a queue as a LinkException; and a
 * {@link RegistryException} becomes an EndpointException whose code says what the registry's status meant.
 */
final class Failures {
    private Failures() {
    }

    /** {@code e} as the client's public exception. */
    static EndpointException toEndpoint(LinkException e) {
        EndpointException endpoint = new EndpointException(e.code(), e.getMessage(), e.getCause());
        endpoint.setStackTrace(e.getStackTrace()); // where the link failed, not where it was turned into this
        return endpoint;
    }

    /** {@code e} as the link module's exception, to fail a queue with. */
    static LinkException toLink(EndpointException e) {
        LinkException internal = new LinkException(e.code(), e.getMessage(), e.getCause());
        internal.setStackTrace(e.getStackTrace());
        return internal;
    }

    /** A registry call that failed, {@code what} naming it: "{@code what}: {@code ex}'s message". */
    static EndpointException fromRegistry(String what, RegistryException ex) {
        ErrorCode code = switch (ex.status()) {
            case 401 -> ErrorCode.UNAUTHORIZED;
            case 403 -> ErrorCode.FORBIDDEN;
            case 404 -> ErrorCode.NO_ROUTE;
            case 409 -> ErrorCode.FORBIDDEN; // a name another holds: not this endpoint's to have now
            case 0 -> ErrorCode.TIMEOUT;
            default -> ErrorCode.INTERNAL;
        };
        return new EndpointException(code, what + ": " + ex.getMessage(), ex);
    }
}
