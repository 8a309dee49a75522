package io.gma.client;

import io.gma.tables.ColumnType;
import io.gma.tables.Row;
import io.gma.tables.RowFilter;
import io.gma.tables.TableSchema;
import java.util.ArrayList;
import java.util.List;

/**
 * A producer's latest row of each primary key of one table, with its insert time ({@link TablePublisher}). Keyed
 * by the values of the key columns as the row holds them, unboxed, in an open-addressing table of parallel arrays
 * (the key's hash, the row, its time): an insert of a key kept already replaces its row in place, looks at no
 * object but the two rows, and allocates nothing. Key values are equal as their boxes would be
 * ({@code Double.equals} for a DOUBLE: NaN equals NaN, -0.0 differs from 0.0).
 *
 * <p>Not thread-safe: the table's lock guards it. What it hands out are copies ({@link Kept}), which a later
 * insert does not change.
 */
final class LatestRows {
    /** A row and its insert time, as kept when it was taken. */
    record Kept(long insertMicros, Row row) {
    }

    private static final int FIRST_SLOTS = 16;
    /** The primary key's column indexes, in the key's order, and their types. */
    private final int[] columns;
    private final ColumnType[] types;
    /**
     * Two longs a slot, side by side so that a probe reads one cache line: the hash of its row's key (never 0;
     * 0 when the slot is empty), then the row's insert time. A power of two of slots.
     */
    private long[] slots = new long[2 * FIRST_SLOTS];
    /** Each slot's row. */
    private Row[] rows = new Row[FIRST_SLOTS];
    /** The rows kept; at most three quarters of the slots, so that a probe meets an empty slot soon. */
    private int size;

    LatestRows(TableSchema schema) {
        columns = schema.primaryKey().stream().mapToInt(schema::indexOf).toArray();
        types = new ColumnType[columns.length];
        for (int k = 0; k < columns.length; k++) {
            types[k] = schema.columns().get(columns[k]).type();
        }
    }

    /** Keeps {@code row}, a row of the schema with no NULL in its key, as its key's latest, inserted now. */
    void put(Row row, long insertMicros) {
        int h = hash(row);
        int mask = rows.length - 1;
        for (int i = slot(h, mask); ; i = i + 1 & mask) {
            long there = slots[2 * i];
            if (there == 0) {
                slots[2 * i] = h;
                slots[2 * i + 1] = insertMicros;
                rows[i] = row;
                if (++size > rows.length / 4 * 3) {
                    rebuild(rows.length * 2, Long.MIN_VALUE);
                }
                return;
            }
            if (there == h && sameKey(rows[i], row)) {
                slots[2 * i + 1] = insertMicros;
                rows[i] = row;
                return;
            }
        }
    }

    /** Drops the rows inserted before {@code oldestMicros}. */
    void purge(long oldestMicros) {
        for (int i = 0; i < rows.length; i++) {
            if (slots[2 * i] != 0 && slots[2 * i + 1] < oldestMicros) {
                rebuild(rows.length, oldestMicros); // at most once a second: simpler than moving probes back
                return;
            }
        }
    }

    /** The table again, with {@code count} slots, of the rows inserted at or after {@code oldestMicros}. */
    private void rebuild(int count, long oldestMicros) {
        long[] oldSlots = slots;
        Row[] oldRows = rows;
        slots = new long[2 * count];
        rows = new Row[count];
        size = 0;
        int mask = count - 1;
        for (int k = 0; k < oldRows.length; k++) {
            long h = oldSlots[2 * k];
            if (h != 0 && oldSlots[2 * k + 1] >= oldestMicros) {
                int i = slot((int) h, mask);
                while (slots[2 * i] != 0) {
                    i = i + 1 & mask;
                }
                slots[2 * i] = h;
                slots[2 * i + 1] = oldSlots[2 * k + 1];
                rows[i] = oldRows[k];
                size++;
            }
        }
    }

    /** The rows inserted at or after {@code sinceMicros} that {@code filter} keeps (null: every row). */
    List<Kept> since(long sinceMicros, RowFilter filter) {
        List<Kept> out = new ArrayList<>();
        for (int i = 0; i < rows.length; i++) {
            long micros = slots[2 * i + 1];
            if (slots[2 * i] != 0 && micros >= sinceMicros && (filter == null || filter.test(rows[i]))) {
                out.add(new Kept(micros, rows[i]));
            }
        }
        return out;
    }

    int size() {
        return size;
    }

    /** The first slot to probe for a hash: mixed, so that its low bits depend on all of it. */
    private static int slot(int hash, int mask) {
        int x = hash * 0x9E3779B9;
        return (x ^ x >>> 16) & mask;
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
        return h == 0 ? 1 : h; // 0 marks an empty slot
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
