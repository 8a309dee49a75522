package io.gma.tables;

import java.io.ByteArrayOutputStream;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.List;

/**
 * Encodes rows ({@link RowCodec}'s form) one after another into a buffer it keeps, checking each against its
 * schema as it writes it: one walk of a row, each string encoded to UTF-8 once, and no array per row until the
 * caller asks for one, {@link #toArray()} or {@link #envelope}. A producer's insert encodes a row once and makes
 * the data of every TABLE_ROW it sends, and the row it keeps for history, from the same bytes.
 *
 * <p>Not thread-safe: one thread at a time (a table's inserts, under the table's lock). The buffer grows to the
 * largest row encoded, and starts small again after a row of more than {@link #KEPT_BYTES}.
 */
public final class RowEncoder {
    /** The buffer a row of more than this leaves behind is dropped at the next encode. */
    static final int KEPT_BYTES = 16 * 1024;
    private static final int FIRST_BYTES = 256;
    /** A string's encoding kept for its column's next row, at most. */
    private static final int CACHED_BYTES = 256;
    private static final long CANONICAL_NAN = 0x7FF8000000000000L;
    /** 8 bytes of an array as a big-endian long: one store for a DOUBLE. */
    static final VarHandle LONG_BE = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.BIG_ENDIAN);
    /** A string this long or shorter whose chars are all ASCII is written by its length in one byte. */
    private static final int ASCII_CHARS = 127;
    private byte[] buf = new byte[FIRST_BYTES];
    /** A short string's chars, copied out of it. */
    private final char[] chars = new char[ASCII_CHARS];
    /** The length of the last row encoded; 0 after a failed encode. */
    private int length;
    /**
     * The schema of the rows encoded last, and for each of its string columns the last string encoded (the same
     * object) and its encoding, its length first: a producer's rows repeat their host's and site's strings, and
     * one that is the same object again is copied, not encoded again. Kept from the second row of a schema on
     * (a one-off encoder keeps nothing), in buffers reused from row to row; reset when the schema changes.
     */
    private TableSchema lastSchema;
    private String[] lastStrings;
    private byte[][] lastEncodings;
    private int[] lastLengths;

    /** An encoder with a small buffer. */
    public RowEncoder() {
    }

    /**
     * Checks the row against the schema and encodes it, in place of the row encoded before.
     *
     * @return the length of its encoding
     * @throws TableException as {@link RowCodec#encode}: the row's size, a value of the wrong class, a NULL key,
     *     a string over {@link RowCodec#MAX_STRING_BYTES} or with an unpaired surrogate
     */
    public int encode(TableSchema schema, Row row) {
        length = 0;
        List<Column> columns = schema.columns();
        int n = columns.size();
        if (row.size() != n) {
            throw new TableException("the row has " + row.size() + " values, but table " + schema.name() + " has "
                    + n + " columns");
        }
        int bitmap = (n + 7) >>> 3;
        if (buf.length > KEPT_BYTES) {
            buf = new byte[FIRST_BYTES];
        }
        if (schema != lastSchema) {
            lastSchema = schema;
            lastStrings = null;
        } else if (lastStrings == null) {
            lastStrings = new String[n];
            lastEncodings = new byte[n][];
            lastLengths = new int[n];
        }
        // every value but a string fits in 10 bytes: room for them all, so that only strings check for more
        ensure(bitmap + 10 * n);
        for (int k = 0; k < bitmap; k++) {
            buf[k] = 0;
        }
        byte[] kinds = row.kinds;
        byte[] types = schema.kinds;
        long[] words = row.words;
        int p = bitmap;
        for (int i = 0; i < n; i++) {
            byte kind = kinds[i];
            long w = words[i];
            if (kind != types[i]) {
                if (kind != Row.NULL) {
                    Column c = columns.get(i);
                    throw new TableException("column " + c.name() + " is " + c.type() + ", but the row holds "
                            + Row.kindName(kind) + " (" + Sql.shorten(row.get(i)) + ")");
                }
                if (schema.isKey(i)) {
                    throw new TableException("key column " + columns.get(i).name() + " is NULL; a key column needs"
                            + " a value");
                }
                buf[i >>> 3] |= (byte) (1 << (i & 7));
                continue;
            }
            switch (kind) {
                case Row.LONG:
                    p = Varint.writeWide(Varint.zigzag(w), buf, p); // room for 10 bytes at every value
                    break;
                case Row.DOUBLE:
                    LONG_BE.set(buf, p, Double.isNaN(Double.longBitsToDouble(w)) ? CANONICAL_NAN : w);
                    p += 8;
                    break;
                case Row.BOOLEAN:
                    buf[p++] = (byte) w;
                    break;
                default:
                    p = string(i, columns.get(i), row.strings[i], p, 10 * (n - 1 - i));
                    break;
            }
        }
        length = p;
        return p;
    }

    /**
     * Writes the string value of column {@code i} at {@code p}, its length first, with room for {@code after} bytes
     * beyond it; returns the offset after it. The string the column held last, the same object, is copied from
     * its encoding then.
     */
    private int string(int i, Column c, String s, int p, int after) {
        if (lastStrings == null) {
            return encodeString(c, s, p, after);
        }
        if (s == lastStrings[i]) {
            int bytes = lastLengths[i];
            ensure(p + bytes + after);
            System.arraycopy(lastEncodings[i], 0, buf, p, bytes);
            return p + bytes;
        }
        int end = encodeString(c, s, p, after);
        int bytes = end - p;
        if (bytes > CACHED_BYTES) {
            lastStrings[i] = null; // a long text: not kept
            return end;
        }
        if (lastEncodings[i] == null || lastEncodings[i].length < bytes) {
            lastEncodings[i] = new byte[Math.max(bytes, 32)];
        }
        System.arraycopy(buf, p, lastEncodings[i], 0, bytes);
        lastStrings[i] = s;
        lastLengths[i] = bytes;
        return end;
    }

    /**
     * {@link #string} of a string not encoded just before. Its length takes the bytes its most (3 a char) would,
     * and the bytes move back when it took fewer.
     */
    private int encodeString(Column c, String s, int p, int after) {
        int chars = s.length();
        if (chars <= ASCII_CHARS) {
            // the common case, a short string of ASCII: its chars copied out at once, then one byte each
            ensure(p + 1 + 3 * chars + after);
            s.getChars(0, chars, this.chars, 0);
            int end = Utf8.encodeAscii(this.chars, chars, buf, p + 1);
            if (end >= 0) {
                buf[p] = (byte) chars;
                return end;
            }
        }
        if (chars > RowCodec.MAX_STRING_BYTES) {
            throw tooLong(c, s); // a char is a byte at least
        }
        int most = 3 * chars;
        int reserved = Varint.size(Math.min(most, RowCodec.MAX_STRING_BYTES));
        ensure(p + reserved + most + after);
        int end = Utf8.encode(s, buf, p + reserved);
        if (end < 0) {
            throw unpaired(c, s, -1 - end);
        }
        int bytes = end - p - reserved;
        if (bytes > RowCodec.MAX_STRING_BYTES) {
            throw tooLong(c, s);
        }
        int prefix = Varint.size(bytes);
        if (prefix < reserved) {
            System.arraycopy(buf, p + reserved, buf, p + prefix, bytes);
        }
        Varint.write(bytes, buf, p);
        return p + prefix + bytes;
    }

    private static TableException tooLong(Column c, String s) {
        long bytes = Utf8.encodedLength(s);
        if (bytes < 0) {
            return unpaired(c, s, (int) (-1 - bytes));
        }
        return new TableException("column " + c.name() + " is " + bytes + " bytes in UTF-8, over the limit of "
                + RowCodec.MAX_STRING_BYTES);
    }

    private static TableException unpaired(Column c, String s, int index) {
        return new TableException(String.format("column %s has an unpaired surrogate U+%04X at index %d, which"
                + " UTF-8 cannot carry", c.name(), (int) s.charAt(index), index));
    }

    private void ensure(int bytes) {
        if (bytes > buf.length) {
            buf = Arrays.copyOf(buf, Math.max(bytes, 2 * buf.length));
        }
    }

    /** The length of the row last encoded. */
    public int length() {
        return length;
    }

    /** The encoding of the row last encoded: a new array, the caller's. */
    public byte[] toArray() {
        return Arrays.copyOf(buf, length);
    }

    /** Copies the encoding of the row last encoded to {@code out} at {@code at}, which has room for it. */
    void copyTo(byte[] out, int at) {
        System.arraycopy(buf, 0, out, at, length);
    }

    /** Writes the encoding of the row last encoded to {@code out}: an answer of many rows, without an array each. */
    public void writeTo(ByteArrayOutputStream out) {
        out.write(buf, 0, length);
    }

    /**
     * The data of a TABLE_ROW ({@link RowEnvelope}) that carries the row last encoded.
     *
     * @param queryId the consumer's id of the query it answers
     * @param insertMicros when the producer inserted it
     * @return a new array, the caller's
     */
    public byte[] envelope(long queryId, long insertMicros) {
        return RowEnvelope.wrap(queryId, insertMicros, buf, length);
    }
}
