package io.gma.client;

import io.gma.tables.BoundQuery;
import java.util.concurrent.CompletionStage;

/**
 * An archive of a monitoring table: what answers history and latest queries with rows that other producers
 * inserted (R-GMA's secondary producer; docs/tables.md, "The archiver"). {@link Producer#archive} publishes the
 * table for the producer as an archive, and hands each TABLE_HISTORY that comes for it to {@link #answer}.
 * Continuous queries never come: consumers subscribe to the primary producers.
 */
@FunctionalInterface
public interface TableArchive {
    /**
     * What a consumer asks.
     *
     * @param query the query, bound to the table's schema: its WHERE ({@code query.filter()}, whole; what
     *     {@code query.requiredValues()} says may narrow the reading first), its order ({@code query.query()
     *     .descending()}) and LIMIT ({@code query.query().limit()}, -1 for none)
     * @param sinceMicros the rows inserted at or after this time, microseconds since the epoch
     * @param latest false: every row that matches, in the query's order, LIMIT applied; true: for each primary key,
     *     the newest row inserted since {@code sinceMicros}, if it matches (as a producer answers latest), in no order
     * @param maxRows the most rows the consumer takes: answer with at most {@code maxRows + 1}, so that one more
     *     tells the consumer its bound was passed (it gets a TOO_LARGE error naming the bound)
     * @param consumer who asks
     */
    record Request(BoundQuery query, long sinceMicros, boolean latest, int maxRows, String consumer) {
    }

    /**
     * Answers a query. Called on a link's event loop: return at once, and complete the stage from a thread of the
     * archive's own. The rows hold every column of the table in its order (the consumer projects), each with the
     * producer that inserted it and when.
     *
     * @return the rows and the time from which they are complete; a stage failed with a
     *     {@link io.gma.tables.TableException} goes back as ERROR MALFORMED with its sentence, with an
     *     {@link EndpointException} as ERROR with its code and sentence, with anything else as ERROR INTERNAL
     */
    CompletionStage<TableHistory> answer(Request request);
}
