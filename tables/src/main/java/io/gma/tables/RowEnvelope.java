package io.gma.tables;

import io.gma.wire.Command;
import io.gma.wire.ProtocolException;
import java.nio.ByteBuffer;
import java.util.Objects;

/**
 * A row as it travels: the data of a {@link #COMMAND} message (application command 0x40, TABLE_ROW) that a
 * producer sends to a consumer for each row that matches one of the consumer's queries (docs/tables.md, "On
 * the wire"). The message's {@code from} is the producer's name; its {@code to} the consumer's.
 *
 * <pre>
 * +----------------------+-------------------------+--------------------------------------+
 * | queryId              | insertMicros            | row                                  |
 * | unsigned LEB128,     | 8 bytes, big-endian,    | {@link RowCodec} bytes of the table's     |
 * | 1..10 bytes, minimal | signed, microseconds    | full schema, to the end of the data  |
 * |                      | since the epoch, UTC    |                                      |
 * +----------------------+-------------------------+--------------------------------------+
 * </pre>
 *
 * The query id is the consumer's, given when it subscribed; it tells the consumer which query the row answers,
 * hence which table's schema decodes it. The insert time is the producer's clock when the row was inserted.
 *
 * @param queryId the consumer's id of the query the row answers, an unsigned 64-bit number
 * @param insertMicros when the producer inserted the row, in microseconds since 1970-01-01T00:00:00Z
 * @param row the encoded row: a read-only view of the bytes decoded from, not a copy
 */
public record RowEnvelope(long queryId, long insertMicros, ByteBuffer row) {
    /** The application command that carries a row: 0x40. */
    public static final Command COMMAND = Command.application(0x40);

    /** @throws NullPointerException if row is null */
    public RowEnvelope {
        Objects.requireNonNull(row, "row");
    }

    /**
     * Encodes a row's envelope: the data of a {@link #COMMAND} message. A producer that sends a row to several
     * queries encodes it once with a {@link RowEncoder} and takes each envelope from it.
     *
     * @return a new array, the caller's
     * @throws TableException as {@link RowCodec#encode}
     */
    public static byte[] encode(long queryId, long insertMicros, TableSchema schema, Row row) {
        RowEncoder encoder = new RowEncoder();
        encoder.encode(schema, row);
        return encoder.envelope(queryId, insertMicros);
    }

    /** The envelope of the encoded row {@code row[0, length)}: a new array. */
    static byte[] wrap(long queryId, long insertMicros, byte[] row, int length) {
        byte[] out = new byte[Varint.size(queryId) + 8 + length];
        int p = Varint.write(queryId, out, 0);
        for (int k = 56; k >= 0; k -= 8) {
            out[p++] = (byte) (insertMicros >>> k);
        }
        System.arraycopy(row, 0, out, p, length);
        return out;
    }

    /**
     * Reads an envelope's header; the row is decoded by {@link #row(TableSchema)}, once the query id has told
     * which schema to use.
     *
     * @param data all of a message's data, from its position to its limit; not changed, kept as a view
     * @throws ProtocolException MALFORMED when the data ends before the row begins, or the query id is longer
     *     than 10 bytes or not minimal
     */
    public static RowEnvelope decode(ByteBuffer data) throws ProtocolException {
        int start = data.position();
        byte[] head = new byte[Math.min(Varint.MAX_BYTES + 8, data.remaining())];
        data.get(start, head); // absolute: the buffer's position stays
        int time = timeAt(head, 0, head.length);
        ByteBuffer row = data.duplicate().position(start + time + 8).limit(data.limit()).slice().asReadOnlyBuffer();
        return new RowEnvelope(idAt(head, 0), longAt(head, time), row);
    }

    /** As {@link #decode(ByteBuffer)}, from all of an array (kept as a view, not copied). */
    public static RowEnvelope decode(byte[] data) throws ProtocolException {
        return decode(ByteBuffer.wrap(data));
    }

    /**
     * The query id of the envelope in {@code data[offset, offset + length)}, read in place (a message's own bytes:
     * {@code Packed.shared}, or the data a message keeps apart: {@code Message.sharedData}): a consumer's hot path
     * reads the id, then {@link #insertMicros(byte[], int, int)} and {@link #row(TableSchema, byte[], int, int)},
     * each checking the header, without a copy or a view.
     *
     * @param data not changed, not kept
     * @throws ProtocolException as {@link #decode(ByteBuffer)}
     */
    public static long queryId(byte[] data, int offset, int length) throws ProtocolException {
        timeAt(data, offset, offset + length);
        return idAt(data, offset);
    }

    /**
     * The insert time of the envelope in {@code data[offset, offset + length)}.
     *
     * @throws ProtocolException as {@link #decode(ByteBuffer)}
     */
    public static long insertMicros(byte[] data, int offset, int length) throws ProtocolException {
        return longAt(data, timeAt(data, offset, offset + length));
    }

    /**
     * The row of the envelope in {@code data[offset, offset + length)}, decoded with the schema of the table the
     * query reads, straight from the array.
     *
     * @throws ProtocolException as {@link #decode(ByteBuffer)} and {@link RowCodec#decode(TableSchema, byte[])}
     */
    public static Row row(TableSchema schema, byte[] data, int offset, int length) throws ProtocolException {
        int row = timeAt(data, offset, offset + length) + 8;
        return RowCodec.decode(schema, data, row, offset + length - row);
    }

    /**
     * Checks the header at {@code data[start, end)}, which holds all of the envelope or at least its first 18
     * bytes (which hold every header): returns the offset of the insert time.
     */
    private static int timeAt(byte[] data, int start, int end) throws ProtocolException {
        int p = idEnd(data, start, end, "row envelope");
        if (end - p < 8) {
            throw RowCodec.malformed("row envelope ends inside its insert time at offset " + (p - start) + ": 8"
                    + " bytes needed, " + (end - p) + " remain");
        }
        return p;
    }

    /**
     * Checks the query id at {@code data[start, end)} (unsigned LEB128, 1 to 10 bytes, minimal); returns the offset
     * after it. {@code what} names the data in the sentence of the error.
     */
    static int idEnd(byte[] data, int start, int end, String what) throws ProtocolException {
        Objects.checkFromToIndex(start, end, data.length);
        int p = Varint.end(data, start, end, Varint.MAX_BYTES);
        if (p == Varint.ENDS) {
            throw RowCodec.malformed(what + " ends inside its query id after " + (end - start) + " bytes");
        }
        if (p == Varint.TOO_LONG) {
            throw RowCodec.malformed(String.format("%s's query id is longer than 10 bytes or overflows 64 bits:"
                    + " its 10th byte is 0x%02X", what, data[start + Varint.MAX_BYTES - 1] & 0xFF));
        }
        if (p == Varint.NOT_MINIMAL) {
            int n = Varint.length(data, start);
            throw RowCodec.malformed(what + "'s query id is not minimal: " + n + " bytes where " + (n - 1)
                    + " would do");
        }
        return p;
    }

    /** The query id at {@code data[start]}, of a header {@link #timeAt} checked. */
    static long idAt(byte[] data, int start) {
        return Varint.valueAt(data, start);
    }

    /** 8 bytes big-endian at {@code p}. */
    static long longAt(byte[] data, int p) {
        long v = 0;
        for (int k = 0; k < 8; k++) {
            v = v << 8 | data[p + k] & 0xFF;
        }
        return v;
    }

    /**
     * Decodes the row with the schema of the table the query reads.
     *
     * @throws ProtocolException as {@link RowCodec#decode(TableSchema, ByteBuffer)}
     */
    public Row row(TableSchema schema) throws ProtocolException {
        return RowCodec.decode(schema, row.duplicate());
    }
}
