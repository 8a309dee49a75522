package io.gma.client;

import io.gma.tables.BoundQuery;
import io.gma.tables.Row;
import io.gma.tables.RowCodec;
import io.gma.tables.TableSchema;
import io.gma.wire.ProtocolException;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.List;

/**
 * A primary producer's history of one table, for a table declared with a history retention: each row it inserted,
 * encoded, with its insert time, in insert order, so that the producer answers history queries itself
 * (TABLE_HISTORY; docs/tables.md, "History"). Bounded in time by the retention and in memory by {@link #MAX_ROWS}:
 * past it the oldest rows go first, and the insert time of the newest that went is kept, so that an answer says
 * from when it is complete. Each row costs its encoding and about 55 bytes beside it (its entry, its array's
 * header, its slot): some 11 MB for {@link #MAX_ROWS} rows of the 51-byte {@code host_cpu} row of tables.md.
 *
 * <p>Not thread-safe: the table's lock in {@link TablePublisher} guards it.
 */
final class KeptHistory {
    /** The most rows kept per table. */
    static final int MAX_ROWS = 100_000;
    /** By insert time, then producer: the order of a history answer, oldest first. */
    private static final Comparator<TableRow> OLDEST_FIRST = Comparator.comparingLong(TableRow::insertMicros)
            .thenComparing(TableRow::producer);

    /** A row as kept: when it was inserted, and its encoding against the table's schema. */
    record Entry(long insertMicros, byte[] row) {
    }

    private final long retentionMicros;
    private final int maxRows;
    private final ArrayDeque<Entry> rows = new ArrayDeque<>();
    /** The insert time of the newest row dropped for the bound; Long.MIN_VALUE while none was. */
    private long droppedUpTo = Long.MIN_VALUE;

    KeptHistory(TableSchema schema, int maxRows) {
        this.retentionMicros = schema.historyRetention().toNanos() / 1000;
        this.maxRows = maxRows;
    }

    /** Keeps a row; past the bound, the oldest goes. */
    void add(long insertMicros, byte[] row) {
        rows.addLast(new Entry(insertMicros, row));
        if (rows.size() > maxRows) {
            droppedUpTo = Math.max(droppedUpTo, rows.removeFirst().insertMicros());
        }
    }

    /** Drops the rows older than the retention. */
    void purge(long nowMicros) {
        long oldest = nowMicros - retentionMicros;
        while (!rows.isEmpty() && rows.peekFirst().insertMicros() < oldest) {
            rows.removeFirst();
        }
    }

    /** The rows inserted at or after {@code sinceMicros}, in insert order: a copy. */
    List<Entry> since(long sinceMicros) {
        List<Entry> out = new ArrayList<>();
        for (Entry e : rows) {
            if (e.insertMicros() >= sinceMicros) {
                out.add(e);
            }
        }
        return out;
    }

    /** The time from which {@link #since} holds every row inserted, now. */
    long completeSince(long nowMicros) {
        long afterDropped = droppedUpTo == Long.MIN_VALUE ? Long.MIN_VALUE : droppedUpTo + 1;
        return Math.max(nowMicros - retentionMicros, afterDropped);
    }

    int size() {
        return rows.size();
    }

    /**
     * The rows of {@code entries} that {@code query} keeps, by insert time in its order, with its LIMIT; each as
     * {@code producer}'s.
     */
    static List<TableRow> answer(String producer, TableSchema schema, BoundQuery query, List<Entry> entries) {
        List<TableRow> out = new ArrayList<>();
        for (Entry e : entries) {
            Row row;
            try {
                row = RowCodec.decode(schema, e.row());
            } catch (ProtocolException ex) {
                throw new IllegalStateException("a row this producer encoded does not decode", ex);
            }
            if (query.filter().test(row)) {
                out.add(new TableRow(producer, e.insertMicros(), row));
            }
        }
        return ordered(out, query);
    }

    /**
     * {@code rows}, in the order they were inserted, sorted by insert time (then producer) in the query's order,
     * cut at its LIMIT. Rows inserted in the same microsecond keep the order they were inserted in, reversed
     * when the query asks for the newest first.
     */
    static List<TableRow> ordered(List<TableRow> rows, BoundQuery query) {
        if (!query.query().descending()) {
            return merged(rows, query);
        }
        List<TableRow> newestInsertedFirst = new ArrayList<>(rows);
        Collections.reverse(newestInsertedFirst);
        return merged(newestInsertedFirst, query);
    }

    /**
     * Answers to the query, each in the query's order already ({@link #ordered}), merged in that order and cut
     * at its LIMIT. Rows of one answer with the same insert time keep the order it gave them: sorting them again
     * from the oldest and reversing would put, of two rows inserted in one microsecond, the older first.
     */
    static List<TableRow> merged(List<TableRow> answers, BoundQuery query) {
        List<TableRow> sorted = new ArrayList<>(answers);
        sorted.sort(query.query().descending() ? OLDEST_FIRST.reversed() : OLDEST_FIRST); // stable
        long limit = query.query().limit();
        return limit >= 0 && sorted.size() > limit ? sorted.subList(0, (int) limit) : sorted;
    }
}
