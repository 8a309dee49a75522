package io.gma.tables;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * A {@link TableQuery} bound to a table's schema: its WHERE compiled to a {@link RowFilter}, its projection to
 * column indexes. Immutable and thread-safe.
 */
public final class BoundQuery {
    private final TableQuery query;
    private final TableSchema schema;
    private final Filters.Compiled filter;
    private final int[] projection;
    private final Map<String, List<Object>> required;
    /** Whether the query selects every column in the table's order ({@code SELECT *}). */
    private final boolean everyColumn;

    BoundQuery(TableQuery query, TableSchema schema, Filters.Node where, int[] projection,
            Map<String, List<Object>> required) {
        this.query = query;
        this.schema = schema;
        this.filter = new Filters.Compiled(where);
        this.projection = projection;
        this.required = required;
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

    /**
     * Values the WHERE requires of some columns: for each column named here, every row the filter keeps has one of
     * the values listed (as a {@link Row} holds them: Long, String, Boolean). Found in the parts of the WHERE that
     * are ANDed at its top, {@code column = literal} and {@code column IN (literals)} over INTEGER, TIMESTAMP,
     * STRING and BOOLEAN columns, where each literal is of the column's own type (DOUBLE, whose equality has
     * NaN and -0.0 in it, is left out). A store may use them to read less (an index on the key); it must still
     * apply {@link #filter()}, which is the whole WHERE. Empty when nothing is required.
     */
    public Map<String, List<Object>> requiredValues() {
        return required;
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
