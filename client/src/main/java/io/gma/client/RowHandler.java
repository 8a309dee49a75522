package io.gma.client;

/**
 * Receives the rows of a continuous query ({@link Consumer#continuous}). Runs on the event loop of the link the
 * row came on: it must not block (a blocking call stalls that link, its ACKs included). One producer's rows
 * arrive one at a time, in the order it inserted them; rows of different producers may arrive at once.
 */
@FunctionalInterface
public interface RowHandler {
    /** @param row a row that matched the query's WHERE, projected to its columns; an exception is logged */
    void onRow(TableRow row) throws Exception;
}
