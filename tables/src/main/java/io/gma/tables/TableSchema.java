package io.gma.tables;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;

/**
 * A table as a producer declares it: its name, its typed columns, its primary key, an optional predicate that
 * describes this producer's share of the table, and how long the producer keeps rows for latest and history
 * queries. Immutable and validated when made; thread-safe.
 *
 * <pre>{@code
 * TableSchema hostCpu = TableSchema.builder("host_cpu")
 *         .column("site", ColumnType.STRING).column("host", ColumnType.STRING)
 *         .column("load1", ColumnType.DOUBLE).column("sampled", ColumnType.TIMESTAMP)
 *         .primaryKey("site", "host")
 *         .predicate("site = 'cardiff'")
 *         .build();
 * }</pre>
 *
 * <p>The table itself, which every producer of it must declare alike, is the name, the columns in order and the
 * primary key ({@link #difference}); the predicate and the retention periods are each producer's own.
 */
public final class TableSchema {
    /** The most columns a table may have. */
    public static final int MAX_COLUMNS = 64;
    /** The default {@link #latestRetention()}: 10 minutes. */
    public static final Duration DEFAULT_LATEST_RETENTION = Duration.ofMinutes(10);
    /** The longest {@link #latestRetention()}: 7 days. */
    public static final Duration MAX_LATEST_RETENTION = Duration.ofDays(7);
    /** The default {@link #historyRetention()}: zero, no history kept. */
    public static final Duration DEFAULT_HISTORY_RETENTION = Duration.ZERO;
    /** The longest {@link #historyRetention()}: 366 days. */
    public static final Duration MAX_HISTORY_RETENTION = Duration.ofDays(366);

    private final String name;
    private final List<Column> columns;
    private final List<String> primaryKey;
    private final String predicate;
    private final Duration latestRetention;
    private final Duration historyRetention;
    private final Map<String, Integer> indexes;
    /** Bit i set: column i is in the primary key. */
    private final long keyMask;
    /** Per column, the kind of value a row holds for it ({@link Row#LONG}, ...): for the codec, without a switch. */
    final byte[] kinds;
    private final Predicate predicateInfo;

    /**
     * @param name an SQL identifier (as {@link Column#name()})
     * @param columns 1 to {@link #MAX_COLUMNS}, with distinct names; the order is the order of values in a row
     * @param primaryKey the names of 1 or more distinct columns, which may never be NULL in a row
     * @param predicate null, or the condition every row of this producer meets (docs/tables.md, "Predicates"):
     *     {@code column = literal} and {@code column IN (literals)} joined by AND, over columns that are not
     *     DOUBLE
     * @param latestRetention how long a row stays the latest of its key: more than zero, at most
     *     {@link #MAX_LATEST_RETENTION}
     * @param historyRetention how long rows are kept for history: zero (none) to {@link #MAX_HISTORY_RETENTION}
     * @throws TableException naming the value and the limit that it breaks
     * @throws NullPointerException if an argument other than the predicate is null
     */
    public TableSchema(String name, List<Column> columns, List<String> primaryKey, String predicate,
            Duration latestRetention, Duration historyRetention) {
        this.name = Objects.requireNonNull(name, "name");
        Names.checkIdentifier("table name", name);
        this.columns = List.copyOf(Objects.requireNonNull(columns, "columns"));
        this.primaryKey = List.copyOf(Objects.requireNonNull(primaryKey, "primaryKey"));
        this.latestRetention = Objects.requireNonNull(latestRetention, "latestRetention");
        this.historyRetention = Objects.requireNonNull(historyRetention, "historyRetention");
        if (this.columns.isEmpty()) {
            throw new TableException("table " + name + " has no columns; it needs at least one");
        }
        if (this.columns.size() > MAX_COLUMNS) {
            throw new TableException("table " + name + " has " + this.columns.size() + " columns, over the limit of "
                    + MAX_COLUMNS);
        }
        Map<String, Integer> byName = new HashMap<>();
        for (int i = 0; i < this.columns.size(); i++) {
            Integer before = byName.put(this.columns.get(i).name(), i);
            if (before != null) {
                throw new TableException("table " + name + " has two columns named " + this.columns.get(i).name()
                        + " (columns " + (before + 1) + " and " + (i + 1) + ")");
            }
        }
        this.indexes = Map.copyOf(byName);
        this.kinds = new byte[this.columns.size()];
        for (int i = 0; i < kinds.length; i++) {
            kinds[i] = RowCodec.kindOf(this.columns.get(i).type());
        }
        if (this.primaryKey.isEmpty()) {
            throw new TableException("table " + name + " has no primary key; name at least one column");
        }
        long mask = 0;
        for (String k : this.primaryKey) {
            Integer i = byName.get(k);
            if (i == null) {
                throw new TableException("primary key column " + k + " is not a column of table " + name
                        + "; its columns are " + columnNames());
            }
            if ((mask & 1L << i) != 0) {
                throw new TableException("primary key names column " + k + " twice");
            }
            mask |= 1L << i;
        }
        this.keyMask = mask;
        if (latestRetention.isNegative() || latestRetention.isZero()
                || latestRetention.compareTo(MAX_LATEST_RETENTION) > 0) {
            throw new TableException("latestRetention " + latestRetention + " is outside (0, "
                    + MAX_LATEST_RETENTION + "]");
        }
        if (historyRetention.isNegative() || historyRetention.compareTo(MAX_HISTORY_RETENTION) > 0) {
            throw new TableException("historyRetention " + historyRetention + " is outside [0, "
                    + MAX_HISTORY_RETENTION + "]");
        }
        Names.checkUsableInQueries(name, this.columns);
        this.predicate = predicate == null || predicate.isBlank() ? null : predicate.strip();
        this.predicateInfo = this.predicate == null ? null : Predicate.compile(this, this.predicate);
    }

    /**
     * A builder for a table of this name, with the default retention periods and no predicate.
     *
     * @param name checked by {@link Builder#build()}
     */
    public static Builder builder(String name) {
        return new Builder(name);
    }

    /** The table's name. */
    public String name() {
        return name;
    }

    /** The columns, in the order of a row's values; unmodifiable. */
    public List<Column> columns() {
        return columns;
    }

    /** The columns' names, in order. */
    public List<String> columnNames() {
        List<String> names = new ArrayList<>(columns.size());
        for (Column c : columns) {
            names.add(c.name());
        }
        return List.copyOf(names);
    }

    /** The names of the primary key's columns, in the order declared; unmodifiable. */
    public List<String> primaryKey() {
        return primaryKey;
    }

    /** The predicate, as declared but trimmed, when there is one. */
    public Optional<String> predicate() {
        return Optional.ofNullable(predicate);
    }

    /** How long a row stays the latest of its key. */
    public Duration latestRetention() {
        return latestRetention;
    }

    /** How long rows are kept for history queries; zero when none are. */
    public Duration historyRetention() {
        return historyRetention;
    }

    /** The index of the named column, or -1. */
    public int indexOf(String column) {
        Integer i = indexes.get(column);
        return i == null ? -1 : i;
    }

    /** Whether the column at this index is part of the primary key. */
    public boolean isKey(int index) {
        return index >= 0 && index < 64 && (keyMask & 1L << index) != 0;
    }

    Predicate predicateInfo() {
        return predicateInfo;
    }

    /**
     * Checks that a row fits this table and this producer: as many values as columns, each of its column's
     * type or NULL, no NULL in the key, strings within {@link RowCodec#MAX_STRING_BYTES}, and the predicate
     * holds.
     *
     * @throws TableException naming the column and the value
     */
    public void validate(Row row) {
        validate(row, new RowEncoder());
    }

    /**
     * Checks a row as {@link #validate(Row)} does, and encodes it with {@code encoder} in the same walk: a
     * producer's insert, which sends the encoding.
     *
     * @return the length of the encoding, which {@code encoder} holds until its next encode
     * @throws TableException as {@link #validate(Row)}
     */
    public int validate(Row row, RowEncoder encoder) {
        int length = encoder.encode(this, row);
        if (predicateInfo != null && predicateInfo.filter.eval(row) != Filters.TRUE) {
            StringBuilder values = new StringBuilder();
            for (Integer i : predicateInfo.fixed.keySet()) {
                values.append(values.length() == 0 ? "" : ", ").append(columns.get(i).name()).append(" = ")
                        .append(row.isNull(i) ? "NULL" : Sql.shorten(row.get(i)));
            }
            throw new TableException("the row has " + values + ", outside this producer's predicate " + predicate);
        }
        return length;
    }

    /**
     * How this table differs from the same table as registered: its name, its columns (their names, types and
     * order) and its primary key. The predicate and the retention periods are each producer's own and do not
     * count.
     *
     * @return empty when they declare the same table; otherwise one sentence, its parts joined by "; ", as
     *     {@code column load1 is DOUBLE here, INTEGER in the registry; column site is missing}
     */
    public Optional<String> difference(TableSchema registered) {
        List<String> parts = new ArrayList<>();
        if (!name.equals(registered.name)) {
            parts.add("the table is named " + name + " here, " + registered.name + " in the registry");
        }
        Set<String> missing = new HashSet<>();
        for (Column theirs : registered.columns) {
            int i = indexOf(theirs.name());
            if (i < 0) {
                parts.add("column " + theirs.name() + " is missing");
                missing.add(theirs.name());
            } else if (columns.get(i).type() != theirs.type()) {
                parts.add("column " + theirs.name() + " is " + columns.get(i).type() + " here, " + theirs.type()
                        + " in the registry");
            }
        }
        boolean extra = false;
        for (Column ours : columns) {
            if (registered.indexOf(ours.name()) < 0) {
                parts.add("column " + ours.name() + " is not in the registry");
                extra = true;
            }
        }
        if (missing.isEmpty() && !extra) {
            for (int i = 0; i < columns.size(); i++) {
                int j = registered.indexOf(columns.get(i).name());
                if (i != j) {
                    parts.add("column " + columns.get(i).name() + " is column " + (i + 1) + " here, column "
                            + (j + 1) + " in the registry");
                    break;
                }
            }
        }
        if (!primaryKey.equals(registered.primaryKey)) {
            parts.add("the primary key is (" + String.join(", ", primaryKey) + ") here, ("
                    + String.join(", ", registered.primaryKey) + ") in the registry");
        }
        return parts.isEmpty() ? Optional.empty() : Optional.of(String.join("; ", parts));
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof TableSchema)) {
            return false;
        }
        TableSchema t = (TableSchema) o;
        return name.equals(t.name) && columns.equals(t.columns) && primaryKey.equals(t.primaryKey)
                && Objects.equals(predicate, t.predicate) && latestRetention.equals(t.latestRetention)
                && historyRetention.equals(t.historyRetention);
    }

    @Override
    public int hashCode() {
        return Objects.hash(name, columns, primaryKey, predicate, latestRetention, historyRetention);
    }

    /** {@code host_cpu (host STRING, load1 DOUBLE, PRIMARY KEY (host)) WHERE site = 'cardiff'}. */
    @Override
    public String toString() {
        StringBuilder s = new StringBuilder(name).append(" (");
        for (Column c : columns) {
            s.append(c).append(", ");
        }
        s.append("PRIMARY KEY (").append(String.join(", ", primaryKey)).append("))");
        return predicate == null ? s.toString() : s.append(" WHERE ").append(predicate).toString();
    }

    /** Collects a schema's parts; {@link #build()} checks them. Not thread-safe. */
    public static final class Builder {
        private final String name;
        private final List<Column> columns = new ArrayList<>();
        private List<String> primaryKey = List.of();
        private String predicate;
        private Duration latestRetention = DEFAULT_LATEST_RETENTION;
        private Duration historyRetention = DEFAULT_HISTORY_RETENTION;

        private Builder(String name) {
            this.name = name;
        }

        /** Adds a column after those added before. */
        public Builder column(String name, ColumnType type) {
            columns.add(new Column(name, type));
            return this;
        }

        /** The primary key's columns; required, no default. */
        public Builder primaryKey(String... columns) {
            this.primaryKey = List.of(columns);
            return this;
        }

        /** This producer's predicate; default none. */
        public Builder predicate(String predicate) {
            this.predicate = predicate;
            return this;
        }

        /** Default {@link TableSchema#DEFAULT_LATEST_RETENTION} (10 minutes). */
        public Builder latestRetention(Duration latestRetention) {
            this.latestRetention = Objects.requireNonNull(latestRetention, "latestRetention");
            return this;
        }

        /** Default zero: no history. */
        public Builder historyRetention(Duration historyRetention) {
            this.historyRetention = Objects.requireNonNull(historyRetention, "historyRetention");
            return this;
        }

        /** @throws TableException as the constructor */
        public TableSchema build() {
            return new TableSchema(name, columns, primaryKey, predicate, latestRetention, historyRetention);
        }
    }
}
