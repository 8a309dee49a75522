package io.gma.registry.api;

import java.time.Instant;

/**
 * A declared table, as {@code GET /tables/{name}} answers.
 *
 * @param declaration its name, columns and key as first declared
 * @param declaredBy the identity that declared it first ({@code anonymous} on an open registry)
 * @param declaredAt when it was declared first, by the registry's database clock
 */
public record TableInfo(TableDeclaration declaration, String declaredBy, Instant declaredAt) {
}
