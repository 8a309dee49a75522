package io.gma.registry.api;

/**
 * The type of a column of a declared table, as JSON and the {@code table_columns} view spell it (the enum's
 * name, upper case). What each holds on the wire is the tables module's (docs/tables.md).
 */
public enum ColumnType {
    /** A whole number, 64 bits signed. */
    INTEGER,
    /** A 64-bit IEEE 754 floating-point number. */
    DOUBLE,
    /** UTF-8 text. */
    STRING,
    /** True or false. */
    BOOLEAN,
    /** An instant. */
    TIMESTAMP
}
