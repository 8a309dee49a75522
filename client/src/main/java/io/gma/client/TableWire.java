package io.gma.client;

import io.gma.tables.RowBatch;
import io.gma.wire.Command;
import io.gma.wire.ErrorCode;
import io.gma.wire.ProtocolException;
import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;

/**
 * The application commands of monitoring tables between a consumer (the mediator) and a producer, after
 * {@link io.gma.tables.RowEnvelope#COMMAND} (0x40, TABLE_ROW); docs/tables.md, "On the wire":
 *
 * <pre>
 * TABLE_QUERY  0x41  consumer to producer   +---------------+-----------------------------+
 *                                           | queryId LEB128 | SQL, UTF-8, to the end     |
 *                                           +---------------+-----------------------------+
 *                    answered REPLY (empty: subscribed) or ERROR (a sentence naming the problem)
 * TABLE_CANCEL 0x42  consumer to producer   | queryId LEB128 |   not answered
 * TABLE_LATEST 0x43  consumer to producer   | SQL, UTF-8, to the end |
 *                    answered ERROR, or REPLY of rows, each:
 *                                           +---------------------+------------------+-----------+
 *                                           | insertMicros, 8 B,  | length, LEB128   | the row's |
 *                                           | big-endian, signed  | (bytes of row)   | encoding  |
 *                                           +---------------------+------------------+-----------+
 * TABLE_HISTORY 0x44 consumer to producer or archiver: {@link HistoryWire}
 * TABLE_ROWS   0x45  producer to consumer: rows of one query that went together, {@link RowBatch}
 * </pre>
 *
 * <p>A LEB128 here is unsigned, 1 to 10 bytes and minimal, as TABLE_ROW's query id.
 */
final class TableWire {
    static final Command TABLE_ROW = Command.application(0x40);
    static final Command TABLE_QUERY = Command.application(0x41);
    static final Command TABLE_CANCEL = Command.application(0x42);
    static final Command TABLE_LATEST = Command.application(0x43);
    static final Command TABLE_HISTORY = Command.application(0x44);
    static final Command TABLE_ROWS = RowBatch.COMMAND;

    private TableWire() {
    }

    /** Whether {@code c} is one of the table commands, 0x40..0x45. */
    static boolean isTableCommand(Command c) {
        return c.code() >= TABLE_ROW.code() && c.code() <= TABLE_ROWS.code();
    }

    /** Whether {@code c} carries rows of a continuous query: TABLE_ROW or TABLE_ROWS. */
    static boolean isRows(Command c) {
        return c == TABLE_ROW || c == TABLE_ROWS;
    }

    /** TABLE_QUERY's data. */
    static byte[] query(long queryId, String sql) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        writeVarint(out, queryId);
        out.writeBytes(sql.getBytes(StandardCharsets.UTF_8));
        return out.toByteArray();
    }

    /** TABLE_CANCEL's data. */
    static byte[] cancel(long queryId) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        writeVarint(out, queryId);
        return out.toByteArray();
    }

    static void writeVarint(ByteArrayOutputStream out, long v) {
        while ((v & ~0x7FL) != 0) {
            out.write((int) (v & 0x7F) | 0x80);
            v >>>= 7;
        }
        out.write((int) v);
    }

    /** Reads a minimal unsigned LEB128 of at most 10 bytes, as TABLE_ROW's query id. */
    static long readVarint(ByteBuffer in, String what) throws ProtocolException {
        long v = 0;
        for (int i = 0; i < 10; i++) {
            if (!in.hasRemaining()) {
                throw new ProtocolException(ErrorCode.MALFORMED, what + " ends after " + i + " bytes of its varint");
            }
            int b = in.get() & 0xFF;
            if (i == 9 && b > 1) {
                throw new ProtocolException(ErrorCode.MALFORMED, what + ": the varint overflows 64 bits");
            }
            v |= (long) (b & 0x7F) << (7 * i);
            if ((b & 0x80) == 0) {
                if (b == 0 && i > 0) {
                    throw new ProtocolException(ErrorCode.MALFORMED, what + ": the varint is not minimal");
                }
                return v;
            }
        }
        throw new ProtocolException(ErrorCode.MALFORMED, what + ": the varint is longer than 10 bytes");
    }

    /** The rest of {@code in} as well-formed UTF-8. */
    static String readText(ByteBuffer in, String what) throws ProtocolException {
        try {
            return StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT).decode(in).toString();
        } catch (CharacterCodingException ex) {
            throw new ProtocolException(ErrorCode.MALFORMED, what + ": the SQL is not well-formed UTF-8");
        }
    }
}
