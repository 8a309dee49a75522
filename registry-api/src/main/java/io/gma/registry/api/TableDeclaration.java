package io.gma.registry.api;

import java.util.List;
import java.util.Objects;

/**
 * A table as a producer declares it to the registry ({@code POST /tables}, docs/registry.md "Tables"): its name,
 * its columns in order, and its primary key. The registry checks every part and answers 400 naming the one it
 * refuses: names are SQL identifiers (1..64 of {@code [a-z0-9_]}, starting with a letter, not an SQL keyword), at
 * most 64 columns, each named once, a key of 1 or more of them, each once. Declaring a table the registry holds
 * already is harmless when the declaration is the same (columns, their order and types, the key and its order),
 * and refused with 409 naming the difference otherwise.
 *
 * @param name the table's name
 * @param columns its columns, in the order rows carry them; copied
 * @param primaryKey the names of the columns that identify a row, in order; copied
 */
public record TableDeclaration(String name, List<ColumnDeclaration> columns, List<String> primaryKey) {
    public TableDeclaration {
        Objects.requireNonNull(name, "name");
        columns = List.copyOf(columns);
        primaryKey = List.copyOf(primaryKey);
    }
}
