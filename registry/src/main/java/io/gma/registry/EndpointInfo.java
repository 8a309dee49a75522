package io.gma.registry;

import java.time.Instant;
import java.util.Map;

/** A live endpoint, as {@code GET /endpoints/{name}} answers. */
public record EndpointInfo(String name, String label, Kind kind, String domain, String host, int port,
        Instant registeredAt, Instant expiresAt, Map<String, String> attributes) {
    public EndpointInfo {
        attributes = Map.copyOf(attributes);
    }
}
