package io.gma.tables;

/**
 * The type of a column, which fixes how its values are encoded in a row (docs/tables.md, "Rows") and which
 * Java class holds them in a {@link Row}.
 */
public enum ColumnType {
    /** A signed 64-bit integer; a {@code Long} in a row; encoded as a zigzag LEB128 varint. */
    INTEGER,
    /** An IEEE 754 binary64 number; a {@code Double} in a row; encoded as 8 bytes, big-endian. */
    DOUBLE,
    /** Unicode text, at most 65,535 bytes in UTF-8; a {@code String} in a row. */
    STRING,
    /** True or false; a {@code Boolean} in a row; encoded as one byte, 0 or 1. */
    BOOLEAN,
    /**
     * An instant as a signed count of microseconds since 1970-01-01T00:00:00Z (UTC, no leap seconds); a
     * {@code Long} in a row; encoded as INTEGER is.
     */
    TIMESTAMP;

    /** Whether values of this type are held as a {@code long} (INTEGER and TIMESTAMP). */
    boolean isLong() {
        return this == INTEGER || this == TIMESTAMP;
    }
}
