package io.gma.client;

import io.gma.tables.ColumnType;
import io.gma.tables.Row;
import io.gma.tables.RowFilter;
import io.gma.tables.TableSchema;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * A producer's latest row of each primary key of one table, with its insert time ({@link TablePublisher}). Keyed
 * by the values of the key columns as the row holds them, unboxed: an insert of a key kept already replaces its
 * row in place, and allocates nothing; a new key costs one entry. Key values are equal as their boxes would be
 * ({@code Double.equals} for a DOUBLE: NaN equals NaN, -0.0 differs from 0.0).
 *
 * <p>Not thread-safe: the table's lock guards it. What it hands out are copies ({@link Kept}), which a later
 * insert does not change.
 */
final class LatestRows {
    /** A row and its insert time, as kept when it was taken. */
    record Kept(long insertMicros, Row row) {
    }

    /** The primary key's column indexes, in the key's order, and their types. */
    private final int[] columns;
    private final ColumnType[] types;
    /** Each entry is its own key: its hash and equality are its row's key values, which an update keeps. */
    private final Map<Entry, Entry> rows = new HashMap<>();
    /** The look-up's key, its row set for the look-up only. */
    private final Entry probe = new Entry();

    /** The latest rows, by key, and their insert times. */
    private final class Entry {
        int hash;
        Row row;
        long insertMicros;

        @Override
        public int hashCode() {
            return hash;
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof Entry e && e.hash == hash && sameKey(row, e.row);
        }
    }

    LatestRows(TableSchema schema) {
        columns = schema.primaryKey().stream().mapToInt(schema::indexOf).toArray();
        types = new ColumnType[columns.length];
        for (int k = 0; k < columns.length; k++) {
            types[k] = schema.columns().get(columns[k]).type();
        }
    }

    /** Keeps {@code row}, a row of the schema with no NULL in its key, as its key's latest, inserted now. */
    void put(Row row, long insertMicros) {
        probe.row = row;
        probe.hash = hash(row);
        Entry e = rows.get(probe);
        probe.row = null;
        if (e == null) {
            e = new Entry();
            e.hash = probe.hash;
            e.row = row; // before it is put: the map compares it with the entries of its hash
            rows.put(e, e);
        }
        e.row = row;
        e.insertMicros = insertMicros;
    }

    /** Drops the rows inserted before {@code oldestMicros}. */
    void purge(long oldestMicros) {
        rows.values().removeIf(e -> e.insertMicros < oldestMicros);
    }

    /** The rows inserted at or after {@code sinceMicros} that {@code filter} keeps (null: every row). */
    List<Kept> since(long sinceMicros, RowFilter filter) {
        List<Kept> out = new ArrayList<>();
        for (Entry e : rows.values()) {
            if (e.insertMicros >= sinceMicros && (filter == null || filter.test(e.row))) {
                out.add(new Kept(e.insertMicros, e.row));
            }
        }
        return out;
    }

    int size() {
        return rows.size();
    }

    private int hash(Row row) {
        int h = 1;
        for (int k = 0; k < columns.length; k++) {
            int c = columns[k];
            int v = switch (types[k]) {
                case INTEGER, TIMESTAMP -> Long.hashCode(row.getLong(c));
                case DOUBLE -> Double.hashCode(row.getDouble(c));
                case BOOLEAN -> Boolean.hashCode(row.getBoolean(c));
                case STRING -> row.getString(c).hashCode();
            };
            h = 31 * h + v;
        }
        return h;
    }

    private boolean sameKey(Row a, Row b) {
        for (int k = 0; k < columns.length; k++) {
            int c = columns[k];
            boolean same = switch (types[k]) {
                case INTEGER, TIMESTAMP -> a.getLong(c) == b.getLong(c);
                case DOUBLE -> Double.doubleToLongBits(a.getDouble(c)) == Double.doubleToLongBits(b.getDouble(c));
                case BOOLEAN -> a.getBoolean(c) == b.getBoolean(c);
                case STRING -> a.getString(c).equals(b.getString(c));
            };
            if (!same) {
                return false;
            }
        }
        return true;
    }
}
