package io.gma.registry.api;

import java.time.Instant;

/** A registered name and when its lease ends unless renewed (by the registry's database clock). */
public record Lease(String name, Instant expiresAt) {
}
