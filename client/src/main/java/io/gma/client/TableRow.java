package io.gma.client;

import io.gma.tables.Row;
import java.time.Instant;
import java.util.Objects;

/**
 * A row of a monitoring table as a query answers it: the values of the query's columns ({@code SELECT *}: every
 * column, in the table's order), the producer that inserted it and when, by the producer's clock.
 *
 * @param producer the producer's registered name
 * @param insertMicros when the producer inserted it, microseconds since 1970-01-01T00:00:00Z
 * @param row the values, in the order the query selects them
 */
public record TableRow(String producer, long insertMicros, Row row) {
    public TableRow {
        Objects.requireNonNull(producer, "producer");
        Objects.requireNonNull(row, "row");
    }

    /** {@link #insertMicros()} as an instant. */
    public Instant inserted() {
        return Instant.EPOCH.plusNanos(Math.multiplyExact(insertMicros, 1000L));
    }
}
