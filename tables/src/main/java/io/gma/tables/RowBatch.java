package io.gma.tables;

import io.gma.wire.Command;
import io.gma.wire.ProtocolException;
import java.util.Arrays;
import java.util.Objects;

/**
 * Rows that travel together: the data of a {@link #COMMAND} message (application command 0x45, TABLE_ROWS) that
 * a producer sends to a consumer with several rows of one query at once (docs/tables.md, "On the wire"): the
 * query id once, then each row with its insert time and its length, as a TABLE_LATEST answer holds them.
 *
 * <pre>
 * +----------------------+-------------------------+-------------------+-----------------------------+
 * | queryId              | insertMicros            | length            | row                         |
 * | unsigned LEB128,     | 8 bytes, big-endian,    | unsigned LEB128,  | {@link RowCodec} bytes of the    |
 * | 1..10 bytes, minimal | signed, as TABLE_ROW's  | minimal: its bytes| table's full schema         |
 * +----------------------+-------------------------+-------------------+-----------------------------+
 *                        |&lt;------------------- repeated to the end of the data, once or more ------------&gt;|
 * </pre>
 *
 * <p>A TABLE_LATEST answer is the same rows without the query id ({@link #latestAnswer()},
 * {@link #forEachLatest}), and may hold none.
 *
 * <p>A batch is built by {@link #add} of the row a {@link RowEncoder} encoded last, and taken as a message's data
 * by {@link #take()}, which empties it for the next rows. Not thread-safe: one thread at a time (a producer's
 * table, under its lock).
 */
public final class RowBatch {
    /** The application command that carries rows of one query: 0x45. */
    public static final Command COMMAND = Command.application(0x45);

    /** What each row of a batch is given: its insert time and the row, decoded. */
    public interface Rows {
        /** One row, in the order of the batch. */
        void row(long insertMicros, Row row);
    }

    private final int head;
    private byte[] buf;
    private int length;
    private int rows;

    /** An empty batch of the rows of query {@code queryId} (an unsigned 64-bit number). */
    public RowBatch(long queryId) {
        buf = new byte[256];
        head = Varint.write(queryId, buf, 0);
        length = head;
    }

    private RowBatch() {
        buf = new byte[256];
        head = 0;
    }

    /** The rows of a TABLE_LATEST answer: a batch without a query id, which may be taken empty. */
    public static RowBatch latestAnswer() {
        return new RowBatch();
    }

    /** Appends the row {@code encoder} encoded last, inserted at {@code insertMicros}. */
    public void add(RowEncoder encoder, long insertMicros) {
        int row = encoder.length();
        int need = length + 8 + Varint.size(row) + row;
        if (need > buf.length) {
            buf = Arrays.copyOf(buf, Math.max(need, 2 * buf.length));
        }
        RowEncoder.LONG_BE.set(buf, length, insertMicros);
        int p = Varint.write(row, buf, length + 8);
        encoder.copyTo(buf, p);
        length = p + row;
        rows++;
    }

    /** The rows added since the batch was last taken. */
    public int rows() {
        return rows;
    }

    /** The bytes {@link #take()} would return now; with no row, the query id's alone. */
    public int bytes() {
        return length;
    }

    /** The bytes {@link #bytes()} would be once a row of {@code rowBytes} more is added. */
    public int bytesWith(int rowBytes) {
        return length + 8 + Varint.size(rowBytes) + rowBytes;
    }

    /**
     * The data of a TABLE_ROWS message of the rows added since the batch was last taken, which it forgets.
     *
     * @return a new array, the caller's
     * @throws IllegalStateException when it holds no row: a TABLE_ROWS carries one at least (a latest answer may
     *     carry none)
     */
    public byte[] take() {
        if (rows == 0 && head > 0) {
            throw new IllegalStateException("a TABLE_ROWS carries one row at least; this batch holds none");
        }
        byte[] out = Arrays.copyOf(buf, length);
        length = head;
        rows = 0;
        return out;
    }

    /**
     * The query id of the TABLE_ROWS data in {@code data[offset, offset + length)}, read in place.
     *
     * @throws ProtocolException MALFORMED when the data ends inside the query id, or it is longer than 10 bytes or
     *     not minimal, or no row follows it
     */
    public static long queryId(byte[] data, int offset, int length) throws ProtocolException {
        int end = offset + length;
        if (RowEnvelope.idEnd(data, offset, end, "row batch") == end) {
            throw RowCodec.malformed("row batch holds no row after its query id");
        }
        return RowEnvelope.idAt(data, offset);
    }

    /**
     * Decodes the rows of the TABLE_ROWS data in {@code data[offset, offset + length)} with the schema of the table
     * its query reads, and gives each to {@code to}, in order, as it is decoded.
     *
     * @return the rows given
     * @throws ProtocolException MALFORMED as {@link #queryId}, when a row's insert time or length runs past the
     *     data, a length is not minimal, or its bytes are not a row of the schema ({@link RowCodec#decode}); the
     *     rows before it were given
     */
    public static int forEach(TableSchema schema, byte[] data, int offset, int length, Rows to)
            throws ProtocolException {
        int end = offset + length;
        int p = RowEnvelope.idEnd(data, offset, end, "row batch");
        if (p == end) {
            throw RowCodec.malformed("row batch holds no row after its query id");
        }
        return forEach(schema, data, p, end, "row batch", to);
    }

    /**
     * Decodes the rows of the TABLE_LATEST answer in {@code data[offset, offset + length)}, as {@link #forEach}
     * those of a batch after its query id; an empty answer gives none.
     *
     * @return the rows given
     * @throws ProtocolException MALFORMED as {@link #forEach}, for the rows
     */
    public static int forEachLatest(TableSchema schema, byte[] data, int offset, int length, Rows to)
            throws ProtocolException {
        Objects.checkFromIndexSize(offset, length, data.length);
        return forEach(schema, data, offset, offset + length, "latest answer", to);
    }

    /** The rows in {@code data[p, end)}, each given to {@code to}; {@code what} names the data in the sentences. */
    private static int forEach(TableSchema schema, byte[] data, int p, int end, String what, Rows to)
            throws ProtocolException {
        RowReader reader = new RowReader(schema, data, true);
        int n = 0;
        while (p < end) {
            if (end - p < 8) {
                throw RowCodec.malformed(what + "'s row " + (n + 1) + " ends inside its insert time: 8 bytes"
                        + " needed, " + (end - p) + " remain");
            }
            long micros = RowEnvelope.longAt(data, p);
            p += 8;
            int at = p;
            p = Varint.end(data, at, end, 5);
            if (p == Varint.NOT_MINIMAL) {
                int bytes = Varint.length(data, at);
                throw RowCodec.malformed(what + "'s row " + (n + 1) + " has a length that is not minimal: " + bytes
                        + " bytes where " + (bytes - 1) + " would do");
            }
            if (p < 0) {
                throw RowCodec.malformed(what + "'s row " + (n + 1) + " has no length of at most 5 bytes before the"
                        + " end of the data");
            }
            long rowBytes = Varint.valueAt(data, at);
            if (rowBytes > end - p) {
                throw RowCodec.malformed(what + "'s row " + (n + 1) + " is " + rowBytes + " bytes long, past the "
                        + (end - p) + " that remain");
            }
            to.row(micros, reader.read(p, (int) rowBytes));
            p += (int) rowBytes;
            n++;
        }
        return n;
    }
}
