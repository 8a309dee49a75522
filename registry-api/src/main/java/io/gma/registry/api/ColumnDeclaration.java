package io.gma.registry.api;

import java.util.Objects;

/**
 * One column of a {@link TableDeclaration}.
 *
 * @param name an SQL identifier: 1..64 of lower-case letters, digits and {@code _}, starting with a letter (the
 *     registry checks it, and refuses an SQL keyword such as {@code from})
 * @param type its type
 */
public record ColumnDeclaration(String name, ColumnType type) {
    public ColumnDeclaration {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(type, "type");
    }
}
