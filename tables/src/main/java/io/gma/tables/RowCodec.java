package io.gma.tables;

import io.gma.wire.ErrorCode;
import io.gma.wire.ProtocolException;
import java.nio.ByteBuffer;
import java.util.List;

/**
 * The binary form of a {@link Row}, typed by its {@link TableSchema} (docs/tables.md, "Rows"): a nulls bitmap,
 * then each non-NULL value in column order.
 *
 * <pre>
 * +------------------------------+---------+---------+-----+
 * | nulls bitmap                 | value a | value b | ... |   one value per non-NULL column, in column order
 * | ceil(columns / 8) bytes      |         |         |     |
 * | bit i = byte i/8, bit i%8    |         |         |     |
 * | (LSB first), 1 = NULL        |         |         |     |
 * +------------------------------+---------+---------+-----+
 *
 * INTEGER, TIMESTAMP  zigzag LEB128 varint, 1..10 bytes, minimal
 * DOUBLE              8 bytes, IEEE 754 binary64, big-endian (every NaN written as 7FF8000000000000)
 * BOOLEAN             1 byte, 0x00 or 0x01
 * STRING              LEB128 varint byte length (at most 65,535, minimal), then that many bytes of UTF-8
 * </pre>
 *
 * <p>The encoding is canonical: a row has exactly one encoding, and the decoder refuses every other byte string,
 * with one exception: a DOUBLE NaN may arrive with any of its bit patterns (a C producer's 0.0 / 0.0 on x86 is
 * FFF8000000000000) and is read as NaN, which is written back as 7FF8000000000000.
 * Decoding never allocates more than its input's length allows (a string's length is checked against what
 * remains before its bytes are read) and never reads past its input. Thread-safe: it holds no state.
 */
public final class RowCodec {
    /** The longest STRING value, in bytes of UTF-8. */
    public static final int MAX_STRING_BYTES = 65_535;

    private static final long CANONICAL_NAN = 0x7FF8000000000000L;

    private RowCodec() {
    }

    /**
     * Encodes a row.
     *
     * @return a new array, the caller's
     * @throws TableException if the row does not fit the schema: its size, a value of the wrong class, a NULL
     *     key, a string over {@link #MAX_STRING_BYTES} or with an unpaired surrogate
     */
    public static byte[] encode(TableSchema schema, Row row) {
        byte[] out = new byte[encodedSize(schema, row)];
        encodeInto(schema, row, out, 0);
        return out;
    }

    /** Checks the row against the schema and returns the length of its encoding. */
    static int encodedSize(TableSchema schema, Row row) {
        List<Column> columns = schema.columns();
        int n = columns.size();
        if (row.size() != n) {
            throw new TableException("the row has " + row.size() + " values, but table " + schema.name() + " has "
                    + n + " columns");
        }
        long size = (n + 7) / 8;
        for (int i = 0; i < n; i++) {
            Column c = columns.get(i);
            byte kind = row.kinds[i];
            if (kind == Row.NULL) {
                if (schema.isKey(i)) {
                    throw new TableException("key column " + c.name() + " is NULL; a key column needs a value");
                }
                continue;
            }
            if (kind != kindOf(c.type())) {
                throw new TableException("column " + c.name() + " is " + c.type() + ", but the row holds "
                        + Row.kindName(kind) + " (" + Sql.shorten(row.get(i)) + ")");
            }
            switch (c.type()) {
                case INTEGER:
                case TIMESTAMP:
                    size += Varint.size(Varint.zigzag(row.words[i]));
                    break;
                case DOUBLE:
                    size += 8;
                    break;
                case BOOLEAN:
                    size += 1;
                    break;
                default:
                    long bytes = Utf8.encodedLength(row.strings[i]);
                    if (bytes < 0) {
                        throw new TableException(String.format("column %s has an unpaired surrogate U+%04X at"
                                + " index %d, which UTF-8 cannot carry", c.name(),
                                (int) row.strings[i].charAt((int) (-1 - bytes)), -1 - bytes));
                    }
                    if (bytes > MAX_STRING_BYTES) {
                        throw new TableException("column " + c.name() + " is " + bytes
                                + " bytes in UTF-8, over the limit of " + MAX_STRING_BYTES);
                    }
                    size += Varint.size(bytes) + bytes;
                    break;
            }
        }
        return (int) size;
    }

    /** Writes a row that {@link #encodedSize} checked; returns the offset after it. */
    static int encodeInto(TableSchema schema, Row row, byte[] out, int at) {
        List<Column> columns = schema.columns();
        int n = columns.size();
        int p = at + (n + 7) / 8;
        for (int i = 0; i < n; i++) {
            long w = row.words[i];
            switch (row.kinds[i]) {
                case Row.NULL:
                    out[at + (i >>> 3)] |= (byte) (1 << (i & 7));
                    break;
                case Row.LONG:
                    p = Varint.write(Varint.zigzag(w), out, p);
                    break;
                case Row.DOUBLE:
                    long bits = Double.isNaN(Double.longBitsToDouble(w)) ? CANONICAL_NAN : w;
                    for (int k = 56; k >= 0; k -= 8) {
                        out[p++] = (byte) (bits >>> k);
                    }
                    break;
                case Row.BOOLEAN:
                    out[p++] = (byte) w;
                    break;
                default:
                    String s = row.strings[i];
                    p = Varint.write(Utf8.encodedLength(s), out, p);
                    p = Utf8.encode(s, out, p);
                    break;
            }
        }
        return p;
    }

    /**
     * Decodes a row from all of an array.
     *
     * @param bytes read, not kept
     * @throws ProtocolException MALFORMED, naming the column, the offset and the value: the bytes end early or
     *     go on after the last value, the bitmap marks a column past the last or a key column NULL, a varint
     *     is longer than 10 bytes, overflows 64 bits or is not minimal, a boolean is not 0 or 1, a string is
     *     longer than 65,535 bytes or than what remains, or is not UTF-8
     */
    public static Row decode(TableSchema schema, byte[] bytes) throws ProtocolException {
        return decode(schema, bytes, 0, bytes.length);
    }

    /**
     * Decodes a row from all of a buffer's remaining bytes, and moves its position to its limit on success.
     *
     * @param buffer read, not kept; its position is left alone when decoding fails
     * @throws ProtocolException as {@link #decode(TableSchema, byte[])}
     */
    public static Row decode(TableSchema schema, ByteBuffer buffer) throws ProtocolException {
        Row row;
        if (buffer.hasArray()) {
            row = decode(schema, buffer.array(), buffer.arrayOffset() + buffer.position(), buffer.remaining());
        } else {
            byte[] copy = new byte[buffer.remaining()];
            buffer.duplicate().get(copy);
            row = decode(schema, copy, 0, copy.length);
        }
        buffer.position(buffer.limit());
        return row;
    }

    /** Decodes a row from exactly {@code length} bytes at {@code offset}. */
    static Row decode(TableSchema schema, byte[] bytes, int offset, int length) throws ProtocolException {
        return new RowReader(schema, bytes, offset, length).read();
    }

    static byte kindOf(ColumnType type) {
        switch (type) {
            case INTEGER:
            case TIMESTAMP:
                return Row.LONG;
            case DOUBLE:
                return Row.DOUBLE;
            case BOOLEAN:
                return Row.BOOLEAN;
            default:
                return Row.STRING;
        }
    }

    static ProtocolException malformed(String message) {
        return new ProtocolException(ErrorCode.MALFORMED, message);
    }
}
