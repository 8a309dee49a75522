package io.gma.client;

import java.time.Instant;
import java.util.List;
import java.util.Objects;

/**
 * One producer's or archiver's answer to a history query ({@link Consumer#historyFrom}), or what a
 * {@link TableArchive} answers with: the rows, and the time from which they are complete.
 *
 * @param rows the rows that match, in the query's order (by insert time, oldest first unless {@code ORDER BY
 *     insert_time DESC}); each says its producer, and, when an archiver answered for that producer, the archiver
 * @param completeSinceMicros the answer holds every matching row inserted at or after this time (microseconds since
 *     the epoch) that its source ever held; rows inserted before it may be missing: past the source's history
 *     retention, dropped to keep within its bound, or (an archiver) before it began. A producer that keeps no
 *     history answers from its latest rows, complete since nothing: the time it answered
 */
public record TableHistory(List<TableRow> rows, long completeSinceMicros) {
    public TableHistory {
        rows = List.copyOf(Objects.requireNonNull(rows, "rows"));
    }

    /** {@link #completeSinceMicros()} as an instant. */
    public Instant completeSince() {
        return Instant.EPOCH.plusNanos(Math.multiplyExact(completeSinceMicros, 1000L));
    }
}
