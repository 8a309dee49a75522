package io.gma.tables;

import java.util.ArrayList;
import java.util.List;

/**
 * A {@link TableQuery} bound to a table's schema: its WHERE compiled to a {@link RowFilter}, its projection to
 * column indexes. Immutable and thread-safe.
 */
public final class BoundQuery {
    private final TableQuery query;
    private final TableSchema schema;
    private final Filters.Compiled filter;
    private final int[] projection;
    /** Whether the query selects every column in the table's order ({@code SELECT *}). */
    private final boolean everyColumn;

    BoundQuery(TableQuery query, TableSchema schema, Filters.Node where, int[] projection) {
        this.query = query;
        this.schema = schema;
        this.filter = new Filters.Compiled(where);
        this.projection = projection;
        boolean identity = projection.length == schema.columns().size();
        for (int k = 0; identity && k < projection.length; k++) {
            identity = projection[k] == k;
        }
        this.everyColumn = identity;
    }

    /** The query. */
    public TableQuery query() {
        return query;
    }

    /** The schema it is bound to. */
    public TableSchema schema() {
        return schema;
    }

    /** The WHERE clause; one that keeps every row when there is none. */
    public RowFilter filter() {
        return filter;
    }

    /** The indexes in the schema of the columns selected, in the order selected; a new array. */
    public int[] projection() {
        return projection.clone();
    }

    /** The columns selected, in the order selected. */
    public List<Column> resultColumns() {
        List<Column> out = new ArrayList<>(projection.length);
        for (int i : projection) {
            out.add(schema.columns().get(i));
        }
        return List.copyOf(out);
    }

    /**
     * The selected values of a row of the schema, in the order selected: the row itself when the query selects
     * every column in order (a row is immutable).
     */
    public Row project(Row row) {
        if (everyColumn && row.size() == projection.length) {
            return row;
        }
        Row.Builder b = new Row.Builder(projection.length);
        for (int k = 0; k < projection.length; k++) {
            b.copy(k, row, projection[k]);
        }
        return b.buildOwned();
    }

    Filters.Node where() {
        return filter.root;
    }
}
