package io.gma.client;

import io.gma.internal.link.LinkException;

/**
 * Failures across the boundary with the link module: what a link or a send queue reports as a
 * {@link LinkException} reaches an application as an {@link EndpointException}, with the same code, message,
 * cause and stack trace; and a failure the endpoint decides (SHUTTING_DOWN, NO_ROUTE) is handed to a queue as a
 * LinkException.
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
}
