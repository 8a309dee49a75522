package io.gma.registry.api;

import java.time.Instant;

/**
 * A live domain: its PC servlet's URL, or for an outbound-only domain the domain it relays through.
 * Exactly one of {@code url} and {@code via} is set.
 */
public record DomainInfo(String domain, String url, String via, Instant registeredAt, Instant expiresAt) {
}
