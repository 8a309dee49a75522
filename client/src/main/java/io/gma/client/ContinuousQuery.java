package io.gma.client;

import io.gma.tables.BoundQuery;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A continuous query that runs ({@link Consumer#continuous}): every new row that a producer of its table inserts
 * and that its WHERE accepts arrives at its {@link RowHandler}. The consumer follows producers that start or stop
 * publishing the table while it runs. {@link #close()} ends it.
 */
public final class ContinuousQuery implements AutoCloseable {
    private final TableMediator mediator;
    private final long id;
    private final BoundQuery query;
    private final RowHandler handler;
    /** The producers subscribed to, or being subscribed to: each is asked once. */
    final Set<String> producers = ConcurrentHashMap.newKeySet();
    /** Those of them that acknowledged the subscription: rows they insert from then on arrive. */
    final Set<String> subscribed = ConcurrentHashMap.newKeySet();
    /**
     * When each subscribed producer was last heard of for this query (System.nanoTime): its acknowledgement, or a
     * message of rows, at most once a second. One silent for {@link TableMediator#REASSERT} is asked again.
     */
    final Map<String, Long> heard = new ConcurrentHashMap<>();
    private volatile boolean closed;

    ContinuousQuery(TableMediator mediator, long id, BoundQuery query, RowHandler handler) {
        this.mediator = mediator;
        this.id = id;
        this.query = query;
        this.handler = handler;
    }

    long id() {
        return id;
    }

    BoundQuery bound() {
        return query;
    }

    RowHandler handler() {
        return handler;
    }

    boolean closed() {
        return closed;
    }

    /** The query's text. */
    public String sql() {
        return query.query().sql();
    }

    /**
     * The producers it is subscribed to now, each of which acknowledged the query: every row they insert from now on
     * that the WHERE accepts arrives (a copy). A producer being subscribed to is not among them until it answers.
     */
    public Set<String> producers() {
        return Set.copyOf(subscribed);
    }

    /**
     * Cancels the query at each producer it is subscribed to (TABLE_CANCEL, sent without waiting). Rows that
     * arrive afterwards are dropped (and answered with TABLE_CANCEL); one being delivered as this is called may
     * still reach the handler.
     */
    @Override
    public void close() {
        if (!closed) {
            closed = true;
            mediator.cancel(this);
        }
    }
}
