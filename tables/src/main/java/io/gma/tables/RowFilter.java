package io.gma.tables;

/**
 * A compiled WHERE clause ({@link BoundQuery#filter()}). Thread-safe and allocation-free: evaluating reads the
 * row's unboxed values and allocates nothing.
 */
@FunctionalInterface
public interface RowFilter {
    /**
     * Whether the WHERE clause is TRUE for the row, in SQL's three-valued logic: a comparison with NULL is
     * UNKNOWN, and UNKNOWN, like FALSE, does not keep the row.
     *
     * @param row a row of the schema the query was bound to, as {@link RowCodec#decode} gives or
     *     {@link TableSchema#validate} accepts; another row gives an undefined answer, or an
     *     {@code IndexOutOfBoundsException} when it is shorter
     */
    boolean test(Row row);
}
