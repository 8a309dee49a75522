package io.gma.tables;

import io.gma.wire.ProtocolException;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;

/**
 * Decodes rows of one schema from one input: the position, and the sentence for each way the bytes can be wrong.
 * Offsets in the sentences count from the row's first byte. Every read checks the end of the input first.
 *
 * <p>Rows read one after another from the same input (a batch, a latest answer) share their strings: a string
 * column whose bytes are those of its last ASCII value in an earlier row is given the same {@code String} again,
 * neither decoded nor checked a second time (a producer's rows repeat their host's and site's names).
 */
final class RowReader {
    private final TableSchema schema;
    private final List<Column> columns;
    private final byte[] in;
    private int start;
    private int end;
    private int p;
    /**
     * For each string column, the string of ASCII the row before held, and where its bytes were in the input; or
     * null (the arrays too, in a reader of one row).
     */
    private String[] lastStrings;
    private int[] lastAt;

    /**
     * A reader of rows of {@code schema} in {@code in}.
     *
     * @param sequence whether it reads several rows, which share their strings; a reader of one row keeps none
     */
    RowReader(TableSchema schema, byte[] in, boolean sequence) {
        this.schema = schema;
        this.columns = schema.columns();
        this.in = in;
        if (sequence) {
            lastStrings = new String[columns.size()];
            lastAt = new int[columns.size()];
        }
    }

    /** Decodes the row of exactly {@code length} bytes at {@code offset}. */
    Row read(int offset, int length) throws ProtocolException {
        start = offset;
        end = offset + length;
        p = offset;
        return read();
    }

    private Row read() throws ProtocolException {
        int n = columns.size();
        int bitmapBytes = (n + 7) / 8;
        if (end - start < bitmapBytes) {
            throw RowCodec.malformed("row ends inside its nulls bitmap: " + bitmapBytes + " bytes needed, "
                    + (end - start) + " present");
        }
        if ((n & 7) != 0) {
            int last = in[start + bitmapBytes - 1] & 0xFF;
            int extra = last >>> (n & 7);
            if (extra != 0) {
                int bit = (bitmapBytes - 1) * 8 + (n & 7) + Integer.numberOfTrailingZeros(extra);
                throw RowCodec.malformed(String.format("nulls bitmap byte 0x%02X at offset %d sets bit %d, past"
                        + " the last of %d columns", last, bitmapBytes - 1, bit, n));
            }
        }
        p = start + bitmapBytes;
        // the row's arrays, filled here and owned by the row: each value as Row.Builder would set it; the
        // schema's kinds are the row's as long as no value is NULL (a row never changes its arrays)
        byte[] kinds = schema.kinds;
        long[] words = new long[n];
        String[] strings = null;
        for (int i = 0; i < n; i++) {
            if ((in[start + (i >>> 3)] & 1 << (i & 7)) != 0) {
                if (schema.isKey(i)) {
                    throw RowCodec.malformed("key column " + name(i) + " is NULL in the nulls bitmap at offset "
                            + (i >>> 3));
                }
                if (kinds == schema.kinds) {
                    kinds = kinds.clone();
                }
                kinds[i] = Row.NULL;
                continue;
            }
            switch (kinds[i]) {
                case Row.LONG:
                    words[i] = Varint.unzigzag(varint(i, "the varint of column "));
                    break;
                case Row.DOUBLE:
                    need(i, 8);
                    words[i] = (long) RowEncoder.LONG_BE.get(in, p); // raw bits: every NaN as it came
                    p += 8;
                    break;
                case Row.BOOLEAN:
                    need(i, 1);
                    int b = in[p] & 0xFF;
                    if (b > 1) {
                        throw RowCodec.malformed(String.format("column %s at offset %d is 0x%02X, not 0 or 1",
                                name(i), p - start, b));
                    }
                    p++;
                    words[i] = b;
                    break;
                default:
                    if (strings == null) {
                        strings = new String[n];
                    }
                    strings[i] = string(i);
                    break;
            }
        }
        if (p != end) {
            throw RowCodec.malformed("row has " + (end - p) + " bytes after its last column, from offset "
                    + (p - start));
        }
        return Row.owned(kinds, words, strings);
    }

    private String string(int c) throws ProtocolException {
        int at = p - start;
        long length = varint(c, "the length of column ");
        if (Long.compareUnsigned(length, RowCodec.MAX_STRING_BYTES) > 0) { // unsigned: 64-bit lengths are huge
            throw RowCodec.malformed("the length of column " + name(c) + " at offset " + at + " is "
                    + Long.toUnsignedString(length) + ", over the limit of " + RowCodec.MAX_STRING_BYTES);
        }
        if (length > end - p) {
            throw RowCodec.malformed("column " + name(c) + " at offset " + at + " has length " + length
                    + ", but only " + (end - p) + " bytes remain");
        }
        int len = (int) length;
        String last = lastStrings == null ? null : lastStrings[c];
        if (last != null && last.length() == len && Arrays.equals(in, lastAt[c], lastAt[c] + len, in, p, p + len)) {
            p += len; // the bytes of the row before, which were ASCII (as many chars as bytes): its string again
            return last;
        }
        String s = new String(in, p, len, StandardCharsets.UTF_8);
        // as many chars as bytes and no U+FFFD (for which Java's decoder puts each bad sequence): every byte was
        // ASCII, and the strict check has nothing to refuse; a string of ASCII alone holds no U+FFFD, which
        // indexOf sees without a scan
        if (s.length() != len || s.indexOf('\uFFFD') >= 0) {
            int bad = io.gma.wire.Utf8.firstInvalid(in, p, len);
            if (bad >= 0) {
                throw RowCodec.malformed(String.format("column %s at offset %d is not valid UTF-8: byte 0x%02X at"
                        + " offset %d", name(c), at, in[bad] & 0xFF, bad - start));
            }
        }
        if (lastStrings != null && s.length() == len) {
            lastStrings[c] = s;
            lastAt[c] = p;
        }
        p += len;
        return s;
    }

    /** An unsigned LEB128 varint, minimal, at most 10 bytes, within 64 bits. */
    private long varint(int c, String what) throws ProtocolException {
        if (p < end && in[p] >= 0) {
            return in[p++]; // one byte: a string's length, a small number
        }
        if (end - p >= 8) {
            // 2 to 8 bytes (a timestamp takes 8), minimal: read at once; anything else on the checked way below
            long word = (long) Varint.LONG_LE.get(in, p);
            int n = Varint.wideLength(word);
            if (n > 1 && (word >>> 8 * (n - 1) & 0xFF) != 0) {
                p += n;
                return Varint.wideValue(word, n);
            }
        }
        int at = p;
        int after = Varint.end(in, at, end, Varint.MAX_BYTES);
        if (after < 0) {
            throw badVarint(after, at, c, what);
        }
        p = after;
        return Varint.valueAt(in, at);
    }

    /** The sentence for a varint at {@code at} that {@link Varint#end} found {@code fault} with. */
    private ProtocolException badVarint(int fault, int at, int c, String what) {
        if (fault == Varint.ENDS) {
            return RowCodec.malformed("row ends inside " + what + name(c) + " at offset " + (at - start) + " after "
                    + (end - at) + " bytes");
        }
        if (fault == Varint.NOT_MINIMAL) {
            int bytes = Varint.length(in, at);
            return RowCodec.malformed(what + name(c) + " at offset " + (at - start) + " is not minimal: " + bytes
                    + " bytes where " + (bytes - 1) + " would do");
        }
        int tenth = in[at + Varint.MAX_BYTES - 1] & 0xFF;
        if (tenth >= 0x80 && at + Varint.MAX_BYTES == end) {
            return RowCodec.malformed("row ends inside " + what + name(c) + " at offset " + (at - start) + " after "
                    + Varint.MAX_BYTES + " bytes");
        }
        if (tenth >= 0x80) {
            return RowCodec.malformed(what + name(c) + " at offset " + (at - start) + " is longer than "
                    + Varint.MAX_BYTES + " bytes");
        }
        return RowCodec.malformed(String.format("%s%s at offset %d overflows 64 bits: its 10th byte is 0x%02X",
                what, name(c), at - start, tenth));
    }

    private void need(int c, int bytes) throws ProtocolException {
        if (end - p < bytes) {
            throw RowCodec.malformed("row ends inside column " + name(c) + " at offset " + (p - start) + ": "
                    + bytes + (bytes == 1 ? " byte" : " bytes") + " needed, " + (end - p) + " remain");
        }
    }

    private String name(int i) {
        Column c = columns.get(i);
        return c.name() + " (" + c.type() + ")";
    }
}
