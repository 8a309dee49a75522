package io.gma.client;

import io.gma.registry.api.Kind;
import io.gma.tables.Row;
import io.gma.tables.TableException;
import io.gma.tables.TableSchema;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;

/**
 * A producer of monitoring events: it publishes to its subscribers, answers requests, and can send and
 * request like any {@link Endpoint}.
 *
 * <pre>{@code
 * try (Producer cpu = Producer.builder().registry(url).domain("dsg").label("cpu").build()) {
 *     cpu.publish("load=0.73".getBytes(UTF_8));          // to every current subscriber
 * }
 * }</pre>
 *
 * <p>Consumers subscribe with SUBSCRIBE; the producer may also add subscribers itself. A subscriber whose name
 * the registry no longer knows is dropped.
 */
public final class Producer extends Endpoint {
    private Producer(EndpointCore core) {
        super(core);
    }

    /** Options for a producer; {@link EndpointBuilder#build()} starts and registers it. */
    public static EndpointBuilder<Producer> builder() {
        return new EndpointBuilder<>(Kind.PRODUCER, Producer::new);
    }

    /**
     * Sends DATA to every current subscriber: a {@link Sent} for each, with a receipt of its own when the
     * endpoint asks for receipts.
     */
    public List<Sent> publish(byte[] data) {
        return core().publish(data, filter -> true);
    }

    /**
     * Sends DATA to each subscriber whose filter text (sent with its SUBSCRIBE, empty if none) the predicate
     * accepts. A subscriber whose queue refuses the message gets a failed {@link Sent}; the others still get it.
     */
    public List<Sent> publish(byte[] data, Predicate<String> filter) {
        return core().publish(data, filter);
    }

    /** Adds a subscriber from this side, with an optional filter text (null for none). */
    public void addSubscriber(String consumer, String filter) {
        core().addSubscriber(consumer, filter);
    }

    /** Stops publishing to a subscriber. */
    public void removeSubscriber(String consumer) {
        core().removeSubscriber(consumer);
    }

    /** The current subscribers and their filter texts. */
    public Map<String, String> subscribers() {
        return core().subscribers();
    }

    /**
     * Declares a monitoring table at the registry (its name, columns and primary key) and publishes it as this
     * producer's, with the schema's predicate and retention periods (docs/tables.md). A producer declares its
     * tables each time it starts; declaring one again with another predicate or retention starts its rows and
     * its consumers' queries afresh. Consumers then find it by the registry's {@code publishers} view.
     *
     * @throws EndpointException FORBIDDEN when the registry holds another declaration of the table (its sentence
     *     names each difference) or security refuses it; NO_ROUTE, TIMEOUT or INTERNAL when the registry failed
     */
    public void declare(TableSchema schema) throws EndpointException {
        core().tables().declare(schema);
    }

    /**
     * Inserts a row into a declared table: it becomes the latest row of its primary key (for the table's latest
     * retention), and goes to every consumer whose continuous query's WHERE it satisfies: at once, as TABLE_ROW,
     * when nothing went to that query for a millisecond; else within a millisecond, with the rows that follow, as
     * a TABLE_ROWS (docs/tables.md). A consumer whose queue refuses it misses it; the others still get it. Under
     * BLOCK, an insert waits while rows for a consumer that does not read wait to be sent.
     *
     * @param row every column of the table, in its order, as {@link TableSchema#validate(Row)} checks it
     * @return how many queries it goes to
     * @throws TableException naming the table, column or value: a table this producer did not declare, a value
     *     of the wrong type, a NULL in the primary key, a row of another width or outside the predicate; nothing
     *     was kept or sent
     */
    public int insert(String table, Row row) {
        return core().tables().insert(table, row);
    }

    /**
     * Inserts one row given as SQL, {@code INSERT INTO table [(columns)] VALUES (values)}, each value a literal or
     * a {@code ?} filled from {@code args} in order; columns left out are NULL (docs/tables.md, "Inserting").
     * Arguments convert to their column's type as SQL would (an Integer into a DOUBLE column, an
     * {@link java.time.Instant} into a TIMESTAMP). Each text is parsed once and kept: use {@code ?} rather than
     * building texts. Otherwise as {@link #insert(String, Row)}.
     *
     * <pre>{@code producer.insert("INSERT INTO host_cpu (host, cpu, busy) VALUES (?, ?, ?)", host, -1, 12.5);}</pre>
     *
     * @throws TableException naming what does not fit: the statement (only one row of VALUES is allowed), the
     *     table, a column, an argument, or the row as {@link #insert(String, Row)} checks it; nothing was kept or
     *     sent
     */
    public int insert(String sql, Object... args) {
        return core().tables().insert(sql, args);
    }

    /**
     * Publishes a declared table as archived by this producer (R-GMA's secondary producer; docs/tables.md, "The
     * archiver"): at the registry, with {@code schema}'s retention periods and {@code archive} set, so that
     * consumers send it history queries, and latest queries that the table's own producers do not answer; each
     * goes to {@code archive}. Continuous queries never come to it. A producer archives a table or inserts into
     * it, not both.
     *
     * @param schema the table as the registry declares it, with the archive's retention periods
     * @throws TableException when this producer declared the table (to insert into it)
     * @throws EndpointException as {@link #declare}, for publishing
     */
    public void archive(TableSchema schema, TableArchive archive) throws EndpointException {
        core().tables().archive(schema, java.util.Objects.requireNonNull(archive, "archive"));
    }
}
