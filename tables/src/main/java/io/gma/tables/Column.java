package io.gma.tables;

import java.util.Objects;

/**
 * One column of a table: a name and a type. Any column may hold NULL in a row except those of the primary key.
 *
 * @param name an SQL identifier: lower-case ASCII letters, digits and '_', starting with a letter, 1 to 64
 *     characters, and not a word SQL reserves (such as {@code order} or {@code null})
 * @param type the type of its values
 */
public record Column(String name, ColumnType type) {
    /**
     * @throws TableException if the name is not such an identifier
     * @throws NullPointerException if an argument is null
     */
    public Column {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(type, "type");
        Names.checkIdentifier("column name", name);
    }

    @Override
    public String toString() {
        return name + " " + type;
    }
}
