package io.gma.tables;

import java.util.Arrays;
import java.util.Objects;

/**
 * One row of a table: a value per column, by column index, in the order of the table's columns. Immutable.
 *
 * <p>Values are {@code Long} (INTEGER, and TIMESTAMP as microseconds since the epoch), {@code Double},
 * {@code String}, {@code Boolean} or null. A row does not know its schema: whether its values fit a table's
 * columns is checked by {@link TableSchema#validate(Row)} and by {@link RowCodec#encode}.
 *
 * <p>Numbers and booleans are held unboxed; {@link #getLong}, {@link #getDouble} and {@link #getBoolean} read
 * them without allocating, {@link #get} boxes.
 */
public final class Row {
    static final byte NULL = 0;
    static final byte LONG = 1;
    static final byte DOUBLE = 2;
    static final byte BOOLEAN = 3;
    static final byte STRING = 4;

    /** Per column: NULL, LONG, DOUBLE, BOOLEAN or STRING. */
    final byte[] kinds;
    /** LONG: the value; DOUBLE: its raw bits; BOOLEAN: 0 or 1. */
    final long[] words;
    /** STRING: the value; null for every other kind, and null altogether when the row holds no string. */
    final String[] strings;

    private Row(byte[] kinds, long[] words, String[] strings) {
        this.kinds = kinds;
        this.words = words;
        this.strings = strings;
    }

    /**
     * A row of these arrays, which it owns from now on: the decoder's, which filled them as a builder would.
     * {@code kinds} may be shared (a schema's, for a row without NULLs): no row changes its arrays.
     */
    static Row owned(byte[] kinds, long[] words, String[] strings) {
        return new Row(kinds, words, strings);
    }

    /**
     * A row of these values, one per column in the table's order.
     *
     * @param values each a {@code Long}, {@code Double}, {@code String}, {@code Boolean} or null; an
     *     {@code Integer}, {@code Short} or {@code Byte} is taken as a {@code Long} and a {@code Float} as a
     *     {@code Double}; the array is not kept
     * @throws TableException naming the index and the class of a value of any other class
     */
    public static Row of(Object... values) {
        Builder b = new Builder(values.length);
        for (int i = 0; i < values.length; i++) {
            b.set(i, values[i]);
        }
        return b.build();
    }

    /**
     * A builder of a row of this many columns, every value NULL until set.
     *
     * @param columns 0..{@link TableSchema#MAX_COLUMNS}
     */
    public static Builder builder(int columns) {
        if (columns < 0 || columns > TableSchema.MAX_COLUMNS) {
            throw new TableException("a row of " + columns + " columns is outside 0.." + TableSchema.MAX_COLUMNS);
        }
        return new Builder(columns);
    }

    /** The number of values, which is the number of the table's columns. */
    public int size() {
        return kinds.length;
    }

    /** Whether the value at this index is NULL. */
    public boolean isNull(int index) {
        return kinds[index] == NULL;
    }

    /**
     * The value at this index, boxed: a {@code Long}, {@code Double}, {@code String}, {@code Boolean}, or null.
     *
     * @throws IndexOutOfBoundsException if there is no such column
     */
    public Object get(int index) {
        switch (kinds[index]) {
            case LONG:
                return words[index];
            case DOUBLE:
                return Double.longBitsToDouble(words[index]);
            case BOOLEAN:
                return words[index] != 0;
            case STRING:
                return strings[index];
            default:
                return null;
        }
    }

    /**
     * The INTEGER or TIMESTAMP value at this index.
     *
     * @throws IllegalStateException if the value is NULL or not a {@code Long}
     */
    public long getLong(int index) {
        expect(index, LONG);
        return words[index];
    }

    /**
     * The DOUBLE value at this index.
     *
     * @throws IllegalStateException if the value is NULL or not a {@code Double}
     */
    public double getDouble(int index) {
        expect(index, DOUBLE);
        return Double.longBitsToDouble(words[index]);
    }

    /**
     * The BOOLEAN value at this index.
     *
     * @throws IllegalStateException if the value is NULL or not a {@code Boolean}
     */
    public boolean getBoolean(int index) {
        expect(index, BOOLEAN);
        return words[index] != 0;
    }

    /**
     * The STRING value at this index.
     *
     * @throws IllegalStateException if the value is NULL or not a {@code String}
     */
    public String getString(int index) {
        expect(index, STRING);
        return strings[index];
    }

    private void expect(int index, byte kind) {
        if (kinds[index] != kind) {
            throw new IllegalStateException("value " + index + " is " + kindName(kinds[index]) + ", not "
                    + kindName(kind));
        }
    }

    static String kindName(byte kind) {
        switch (kind) {
            case LONG:
                return "a Long";
            case DOUBLE:
                return "a Double";
            case BOOLEAN:
                return "a Boolean";
            case STRING:
                return "a String";
            default:
                return "NULL";
        }
    }

    /** Rows are equal when their values are: doubles by their bits, every NaN alike, -0.0 apart from 0.0. */
    @Override
    public boolean equals(Object o) {
        if (!(o instanceof Row)) {
            return false;
        }
        Row r = (Row) o;
        if (!Arrays.equals(kinds, r.kinds)) {
            return false;
        }
        for (int i = 0; i < kinds.length; i++) {
            boolean same = kinds[i] == DOUBLE
                    ? Double.doubleToLongBits(Double.longBitsToDouble(words[i]))
                            == Double.doubleToLongBits(Double.longBitsToDouble(r.words[i]))
                    : kinds[i] == STRING ? strings[i].equals(r.strings[i]) : words[i] == r.words[i];
            if (!same) {
                return false;
            }
        }
        return true;
    }

    @Override
    public int hashCode() {
        int h = 1;
        for (int i = 0; i < kinds.length; i++) {
            h = 31 * h + Objects.hashCode(get(i));
        }
        return h;
    }

    /** {@code [cardiff-01, 4.5, NULL, true]}: strings quoted as SQL writes them. */
    @Override
    public String toString() {
        StringBuilder s = new StringBuilder("[");
        for (int i = 0; i < kinds.length; i++) {
            s.append(i == 0 ? "" : ", ");
            Object v = get(i);
            s.append(v == null ? "NULL" : v instanceof String ? Sql.quote((String) v) : v.toString());
        }
        return s.append(']').toString();
    }

    /** Sets a row's values one by one; not thread-safe; each {@link #build()} copies what was set. */
    public static final class Builder {
        private final byte[] kinds;
        private final long[] words;
        private String[] strings;

        Builder(int columns) {
            kinds = new byte[columns];
            words = new long[columns];
        }

        /** Sets an INTEGER or TIMESTAMP value. */
        public Builder setLong(int index, long value) {
            kinds[index] = LONG;
            words[index] = value;
            clearString(index);
            return this;
        }

        /** Sets a DOUBLE value. */
        public Builder setDouble(int index, double value) {
            kinds[index] = DOUBLE;
            words[index] = Double.doubleToRawLongBits(value);
            clearString(index);
            return this;
        }

        /** Sets a BOOLEAN value. */
        public Builder setBoolean(int index, boolean value) {
            kinds[index] = BOOLEAN;
            words[index] = value ? 1 : 0;
            clearString(index);
            return this;
        }

        /** Sets a STRING value; null sets NULL. */
        public Builder setString(int index, String value) {
            if (value == null) {
                return setNull(index);
            }
            if (strings == null) {
                strings = new String[kinds.length];
            }
            kinds[index] = STRING;
            words[index] = 0;
            strings[index] = value;
            return this;
        }

        /** Sets NULL. */
        public Builder setNull(int index) {
            kinds[index] = NULL;
            words[index] = 0;
            clearString(index);
            return this;
        }

        /**
         * Sets a value of any of the classes {@link Row#of} takes.
         *
         * @throws TableException naming the index and the class of a value of another class
         */
        public Builder set(int index, Object value) {
            if (value == null) {
                return setNull(index);
            } else if (value instanceof Long || value instanceof Integer || value instanceof Short
                    || value instanceof Byte) {
                return setLong(index, ((Number) value).longValue());
            } else if (value instanceof Double || value instanceof Float) {
                return setDouble(index, ((Number) value).doubleValue());
            } else if (value instanceof Boolean) {
                return setBoolean(index, (Boolean) value);
            } else if (value instanceof String) {
                return setString(index, (String) value);
            }
            throw new TableException("value " + index + " is a " + value.getClass().getName()
                    + "; a row holds Long, Double, String, Boolean or null");
        }

        /** Sets the value at {@code index} to the other row's value at {@code from}, without boxing. */
        void copy(int index, Row row, int from) {
            if (row.kinds[from] == STRING) {
                setString(index, row.strings[from]);
            } else {
                kinds[index] = row.kinds[from];
                words[index] = row.words[from];
                clearString(index);
            }
        }

        private void clearString(int index) {
            if (strings != null) {
                strings[index] = null;
            }
        }

        /** The row; the builder may go on and build others. */
        public Row build() {
            return new Row(kinds.clone(), words.clone(), strings == null ? null : strings.clone());
        }

        /** The row, without copying: the decoder's, which never touches the builder again. */
        Row buildOwned() {
            return new Row(kinds, words, strings);
        }
    }
}
