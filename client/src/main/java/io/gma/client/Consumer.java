package io.gma.client;

import io.gma.registry.api.Kind;
import io.gma.wire.Command;
import io.gma.tables.TableException;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.List;

/**
 * A consumer of monitoring events: it finds producers with SQL, subscribes to them, and sends and requests.
 *
 * <pre>{@code
 * try (Consumer c = Consumer.builder().registry(url).domain("dsg").label("collector")
 *         .onMessage(m -> System.out.println(m.from() + ": " + new String(m.data(), UTF_8))).build()) {
 *     for (List<Object> row : c.query("SELECT name FROM producers WHERE domain = 'dsg'").rows()) {
 *         c.subscribe((String) row.get(0), null);
 *     }
 * }
 * }</pre>
 */
public final class Consumer extends Endpoint {
    /** The most rows a history query answers with: past it, the query fails with TOO_LARGE, naming it. */
    public static final int MAX_HISTORY_ROWS = HistoryQueries.MAX_ROWS;

    private Consumer(EndpointCore core) {
        super(core);
    }

    /** Options for a consumer; {@link EndpointBuilder#build()} starts and registers it. */
    public static EndpointBuilder<Consumer> builder() {
        return new EndpointBuilder<>(Kind.CONSUMER, Consumer::new);
    }

    /**
     * Subscribes to a producer: its published events arrive at the handler as DATA. With
     * {@link EndpointBuilder#receipts}, the Sent's {@code delivered()} completes once the producer has the
     * subscriber.
     *
     * @param filter text the producer's application interprets (null for none)
     */
    public Sent subscribe(String producer, String filter) throws EndpointException {
        return core().send(producer, Command.SUBSCRIBE, filter == null ? new byte[0]
                : filter.getBytes(StandardCharsets.UTF_8));
    }

    /** Ends a subscription (a control message: it never waits behind data). */
    public void unsubscribe(String producer) throws EndpointException {
        core().sendControl(producer, Command.UNSUBSCRIBE, core().nextSequence(), new byte[0]);
    }

    /**
     * Starts a continuous query over a monitoring table (docs/tables.md, "Queries"): from now on, every row that
     * a producer of the table inserts and that the WHERE accepts arrives at {@code handler}, once, projected to
     * the selected columns. The mediator asks the registry which producers publish the table, keeps those whose
     * predicate may overlap the WHERE, subscribes to each (waiting for their answers before this returns), and
     * every few seconds subscribes to producers that came and forgets those that left.
     *
     * @throws TableException the query is refused, or names a column the table does not have: the sentence says
     *     which
     * @throws EndpointException NO_ROUTE when no table is declared by that name; MALFORMED when a producer refused
     *     the query (its sentence); TIMEOUT or INTERNAL when the registry failed
     */
    public ContinuousQuery continuous(String sql, RowHandler handler) throws EndpointException {
        if (handler == null) {
            throw new NullPointerException("handler");
        }
        return core().mediator().continuous(sql, handler);
    }

    /**
     * Runs a latest query: each producer of the table that may hold matching rows answers with its latest row per
     * primary key within its latest retention, and the newest row of each key among them is kept. Producers that
     * left or do not answer within the request timeout are skipped.
     *
     * @return the rows, projected to the selected columns, each with its producer and insert time; in no order
     * @throws TableException the query is refused, or names a column the table does not have
     * @throws EndpointException NO_ROUTE when no table is declared by that name; MALFORMED when a producer refused
     *     the query, TOO_LARGE when a producer's matching rows exceed its answer limit (narrow the WHERE)
     */
    public List<TableRow> latest(String sql) throws EndpointException {
        return core().mediator().latest(sql);
    }

    /**
     * Runs a history query (docs/tables.md, "History"): every row of the table inserted at or after {@code since}
     * that the WHERE accepts, oldest first ({@code ORDER BY insert_time DESC} for newest first; {@code LIMIT n} for
     * the first n in that order). It is answered by one archiver of the table (another if that one fails or does not
     * answer within the request timeout; those whose retention covers the period first), or, when none answers,
     * by each producer whose own history retention reaches back to {@code since}, merged.
     *
     * @return at most {@link #MAX_HISTORY_ROWS} rows, projected to the selected columns, each with its producer, its
     *     insert time and, when an archiver answered, the archiver
     * @throws TableException the query is refused (a construct, an unknown column, a LIMIT over the bound)
     * @throws EndpointException TOO_LARGE when more than {@link #MAX_HISTORY_ROWS} rows match (narrow the WHERE,
     *     shorten the period or add a LIMIT), or when they exceed the answering side's message limit; NO_ROUTE when
     *     no table is declared by that name, or no archiver or producer that keeps history back to {@code since}
     *     answered (the sentence names each and why); MALFORMED when one refused the query
     * @throws IllegalArgumentException when {@code since} is beyond what microseconds since the epoch can count
     */
    public List<TableRow> history(String sql, Instant since) throws EndpointException {
        return core().history().history(sql, since);
    }

    /**
     * Runs a history query at one producer or archiver, as it answers (the archiver uses it to catch up with a
     * producer). The same query and bound as {@link #history}; a producer whose table keeps no history answers
     * with its latest rows.
     *
     * @return the rows, projected, and the time from which they are complete
     * @throws EndpointException as {@link #history}; TIMEOUT or NO_ROUTE when that producer does not answer
     */
    public TableHistory historyFrom(String producer, String sql, Instant since) throws EndpointException {
        return core().history().historyFrom(producer, sql, since);
    }
}
