package io.gma.registry.api;

import java.time.Instant;
import java.util.Map;

/**
 * A live endpoint, as {@code GET /endpoints/{name}} answers.
 *
 * @param name the registered name, {@code label[-nonce]@domain}
 * @param label the label it was registered with (which the name alone does not tell)
 * @param kind producer or consumer
 * @param domain its domain
 * @param host where it listens
 * @param port where it listens, 1..65535
 * @param registeredAt when it was registered
 * @param expiresAt when its lease ends unless renewed
 * @param attributes its attributes, copied; empty when it has none or when the registry shows them not to
 *     this caller (that takes a {@code query} rule for {@code attributes})
 * @param owner the identity that registered it ({@code anonymous} on an open registry); null from a registry
 *     that does not say
 */
public record EndpointInfo(String name, String label, Kind kind, String domain, String host, int port,
        Instant registeredAt, Instant expiresAt, Map<String, String> attributes, String owner) {
    /** Copies the attributes. */
    public EndpointInfo {
        attributes = Map.copyOf(attributes);
    }
}
