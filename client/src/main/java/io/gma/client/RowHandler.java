package io.gma.client;

/**
 * Receives the rows of a continuous query ({@link Consumer#continuous}). Runs where the endpoint's message
 * handler runs: on the event loop of the link the row came on, or on the {@link EndpointBuilder#executor} when
 * one is given. On the event loop, one producer's rows arrive one at a time, in the order it inserted them, and
 * rows of different producers may arrive at once; a slow handler holds up that producer's link only (its ACKs
 * and keepalive go on, docs/CONCURRENCY.md). An executor runs rows in whatever order it runs tasks.
 */
@FunctionalInterface
public interface RowHandler {
    /** @param row a row that matched the query's WHERE, projected to its columns; an exception is logged */
    void onRow(TableRow row) throws Exception;
}
