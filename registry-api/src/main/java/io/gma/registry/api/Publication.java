package io.gma.registry.api;

import java.time.Duration;
import java.util.Objects;

/**
 * What a producer says it publishes ({@code PUT /endpoints/{name}/tables/{table}}, docs/registry.md "Tables"):
 * rows of a declared table, the share of them it holds, how long it keeps them, and whether they are its own rows
 * (a primary producer) or other producers' rows that it archives (an archiver, R-GMA's secondary producer).
 * Publishing the same table again replaces the predicate, the periods and the flag. The row goes with the
 * producer's registration: when its lease runs out or it is removed (or taken over), it no longer publishes anything.
 *
 * @param table the declared table's name
 * @param predicate null for all rows, or SQL over columns whose values are fixed for this producer that describes
 *     its share, such as {@code site = 'cardiff'}: at most 1,024 bytes of UTF-8, not blank. The registry keeps it as
 *     text; the mediator reads it
 * @param latestRetention how long the producer answers a row as the latest of its key: whole seconds, 1 s to 7 days
 * @param historyRetention how long it keeps past rows for history queries: whole seconds, 0 (none) to 366 days
 * @param archive whether the producer is an archiver: it keeps the rows other producers inserted and answers
 *     history and latest queries with them, never continuous ones (docs/tables.md, "The archiver")
 */
public record Publication(String table, String predicate, Duration latestRetention, Duration historyRetention,
        boolean archive) {
    public Publication {
        Objects.requireNonNull(table, "table");
        Objects.requireNonNull(latestRetention, "latestRetention");
        Objects.requireNonNull(historyRetention, "historyRetention");
    }

    /** A primary producer's publication: its own rows ({@code archive} false). */
    public Publication(String table, String predicate, Duration latestRetention, Duration historyRetention) {
        this(table, predicate, latestRetention, historyRetention, false);
    }
}
