package io.gma.client;

import io.gma.tables.Row;
import java.time.Instant;
import java.util.Objects;

/**
 * A row of a monitoring table as a query answers it: the values of the query's columns ({@code SELECT *}: every
 * column, in the table's order), the producer that inserted it and when, by the producer's clock, and, when it
 * came from an archive rather than from its producer, the archiver that answered with it.
 *
 * @param producer the registered name of the producer that inserted it
 * @param insertMicros when the producer inserted it, microseconds since 1970-01-01T00:00:00Z
 * @param row the values, in the order the query selects them
 * @param archiver null when the producer itself answered (or sent it, to a continuous query); else the registered
 *     name of the archiver that kept it and answered (a history query, or a latest query that its producer could
 *     not answer)
 */
public record TableRow(String producer, long insertMicros, Row row, String archiver) {
    public TableRow {
        Objects.requireNonNull(producer, "producer");
        Objects.requireNonNull(row, "row");
    }

    /** A row its producer answered with itself. */
    public TableRow(String producer, long insertMicros, Row row) {
        this(producer, insertMicros, row, null);
    }

    /** {@link #insertMicros()} as an instant. */
    public Instant inserted() {
        return Instant.EPOCH.plusNanos(Math.multiplyExact(insertMicros, 1000L));
    }

    /** Whether an archiver answered with it, rather than its producer. */
    public boolean archived() {
        return archiver != null;
    }
}
