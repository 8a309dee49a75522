package io.gma.tables;

import io.gma.wire.ErrorCode;
import io.gma.wire.ProtocolException;
import java.nio.ByteBuffer;

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
 * Encoding is {@link RowEncoder}'s, one walk of the row that checks it too. Decoding never allocates more than its
 * input's length allows (a string's length is checked against what remains before its bytes are read) and never
 * reads past its input. Thread-safe: it holds no state.
 */
public final class RowCodec {
    /** The longest STRING value, in bytes of UTF-8. */
    public static final int MAX_STRING_BYTES = 65_535;

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
        RowEncoder encoder = new RowEncoder();
        encoder.encode(schema, row);
        return encoder.toArray();
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
        return new RowReader(schema, bytes, false).read(offset, length);
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
