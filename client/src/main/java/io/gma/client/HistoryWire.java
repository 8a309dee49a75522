package io.gma.client;

import io.gma.tables.Row;
import io.gma.tables.RowCodec;
import io.gma.tables.RowEncoder;
import io.gma.tables.TableSchema;
import io.gma.wire.ErrorCode;
import io.gma.wire.Name;
import io.gma.wire.ProtocolException;
import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * TABLE_HISTORY (0x44), a consumer's history or latest query to one producer or archiver, and its answer;
 * docs/tables.md, "TABLE_HISTORY". Vectors: client/src/test/resources/vectors/history.json.
 *
 * <pre>
 * ask, consumer to producer:
 * +----------+--------------------------+-----------------+----------------------------+
 * | flags    | sinceMicros              | maxRows         | SQL                        |
 * | 1 byte:  | 8 bytes, big-endian,     | LEB128, 1 or    | UTF-8, to the end: a       |
 * | 01 latest| signed, µs since epoch   | more            | history query              |
 * +----------+--------------------------+-----------------+----------------------------+
 *
 * REPLY, producer to consumer:
 * +---------------------+-----------+---------------------------+------------------------------------------+
 * | completeSinceMicros | producers | names: each a LEB128      | rows, to the end, each:                  |
 * | 8 bytes, big-endian | LEB128, n | length, then UTF-8        | producer index LEB128 (0..n-1),          |
 * | signed              |           | (a registered name)       | insertMicros 8 bytes, length LEB128, row |
 * +---------------------+-----------+---------------------------+------------------------------------------+
 * </pre>
 *
 * <p>A LEB128 here is unsigned, 1 to 10 bytes and minimal, as TABLE_ROW's query id; a row is encoded against the
 * table's full schema.
 */
final class HistoryWire {
    /** The flag of a latest query: for each key the newest row since sinceMicros, if it matches. */
    static final int LATEST = 0x01;

    private HistoryWire() {
    }

    /** A decoded ask. */
    record Ask(boolean latest, long sinceMicros, long maxRows, String sql) {
    }

    /** The ask's data. */
    static byte[] ask(boolean latest, long sinceMicros, long maxRows, String sql) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.write(latest ? LATEST : 0);
        out.writeBytes(ByteBuffer.allocate(8).putLong(0, sinceMicros).array());
        TableWire.writeVarint(out, maxRows);
        out.writeBytes(sql.getBytes(StandardCharsets.UTF_8));
        return out.toByteArray();
    }

    /**
     * Reads an ask.
     *
     * @throws ProtocolException MALFORMED naming the field: data that ends early, flags other than 01, a maxRows
     *     of 0 or a varint out of form, SQL that is not well-formed UTF-8
     */
    static Ask readAsk(ByteBuffer in) throws ProtocolException {
        if (in.remaining() < 9) {
            throw new ProtocolException(ErrorCode.MALFORMED, "TABLE_HISTORY is " + in.remaining() + " bytes; its"
                    + " flags and sinceMicros take 9");
        }
        int flags = in.get() & 0xFF;
        if ((flags & ~LATEST) != 0) {
            throw new ProtocolException(ErrorCode.MALFORMED, String.format("TABLE_HISTORY's flags are 0x%02x; only"
                    + " 0x01 (latest) is defined", flags));
        }
        long since = in.getLong();
        long maxRows = TableWire.readVarint(in, "TABLE_HISTORY's maxRows");
        if (maxRows < 1) {
            throw new ProtocolException(ErrorCode.MALFORMED, "TABLE_HISTORY's maxRows is " + Long.toUnsignedString(
                    maxRows) + "; it is 1 or more");
        }
        return new Ask(flags == LATEST, since, maxRows, TableWire.readText(in, "TABLE_HISTORY"));
    }

    /**
     * The answer's data, or null when it would be longer than {@code maxBytes}.
     *
     * @param rows rows of {@code schema} (every column), each with its producer
     */
    static byte[] answer(TableSchema schema, TableHistory history, int maxBytes) {
        Map<String, Integer> producers = new LinkedHashMap<>();
        for (TableRow r : history.rows()) {
            producers.putIfAbsent(r.producer(), producers.size());
        }
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.writeBytes(ByteBuffer.allocate(8).putLong(0, history.completeSinceMicros()).array());
        TableWire.writeVarint(out, producers.size());
        for (String p : producers.keySet()) {
            byte[] name = p.getBytes(StandardCharsets.UTF_8);
            TableWire.writeVarint(out, name.length);
            out.writeBytes(name);
        }
        ByteBuffer micros = ByteBuffer.allocate(8);
        RowEncoder encoder = new RowEncoder();
        for (TableRow r : history.rows()) {
            int length = encoder.encode(schema, r.row());
            TableWire.writeVarint(out, producers.get(r.producer()));
            out.writeBytes(micros.putLong(0, r.insertMicros()).array());
            TableWire.writeVarint(out, length);
            encoder.writeTo(out);
            if (out.size() > maxBytes) {
                return null;
            }
        }
        return out.size() > maxBytes ? null : out.toByteArray();
    }

    /**
     * Reads an answer from {@code from}: each row says its producer, and {@code from} as its archiver when that is
     * another.
     *
     * @throws ProtocolException MALFORMED naming what is out of form: data that ends early, a producer name that is
     *     not a registered name, an index past the names, a row that does not decode against {@code schema}
     */
    static TableHistory readAnswer(ByteBuffer in, TableSchema schema, String from) throws ProtocolException {
        if (in.remaining() < 8) {
            throw new ProtocolException(ErrorCode.MALFORMED, "the answer is " + in.remaining() + " bytes; its"
                    + " completeSinceMicros takes 8");
        }
        long complete = in.getLong();
        long count = TableWire.readVarint(in, "the answer's producers");
        if (count < 0 || count > in.remaining() / 2) {
            // each name takes a length and at least 1 byte: checked before anything is allocated
            throw new ProtocolException(ErrorCode.MALFORMED, "the answer names " + Long.toUnsignedString(count)
                    + " producers in " + in.remaining() + " bytes");
        }
        List<String> names = new ArrayList<>((int) count);
        for (int i = 0; i < count; i++) {
            long length = TableWire.readVarint(in, "the answer's producer name");
            if (length > in.remaining()) {
                throw new ProtocolException(ErrorCode.MALFORMED, "producer name " + i + " is " + length
                        + " bytes, past the " + in.remaining() + " that remain");
            }
            String name = utf8(in.slice(in.position(), (int) length));
            in.position(in.position() + (int) length);
            if (!Name.isName(name)) {
                throw new ProtocolException(ErrorCode.MALFORMED, "producer name " + i + " \"" + name + "\" is not "
                        + Name.NAME_RULE);
            }
            names.add(name);
        }
        List<TableRow> rows = new ArrayList<>();
        while (in.hasRemaining()) {
            long index = TableWire.readVarint(in, "the answer's producer index");
            if (index >= names.size() || index < 0) {
                throw new ProtocolException(ErrorCode.MALFORMED, "a row names producer " + Long.toUnsignedString(
                        index) + " of " + names.size());
            }
            if (in.remaining() < 8) {
                throw new ProtocolException(ErrorCode.MALFORMED, "the answer ends inside an insert time");
            }
            long micros = in.getLong();
            long length = TableWire.readVarint(in, "the answer's row length");
            if (length > in.remaining()) {
                throw new ProtocolException(ErrorCode.MALFORMED, "a row of " + length + " bytes, past the "
                        + in.remaining() + " that remain");
            }
            Row row = RowCodec.decode(schema, in.slice(in.position(), (int) length));
            in.position(in.position() + (int) length);
            String producer = names.get((int) index);
            rows.add(new TableRow(producer, micros, row, producer.equals(from) ? null : from));
        }
        return new TableHistory(rows, complete);
    }

    private static String utf8(ByteBuffer bytes) throws ProtocolException {
        try {
            return StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT).decode(bytes).toString();
        } catch (CharacterCodingException ex) {
            throw new ProtocolException(ErrorCode.MALFORMED, "a producer name is not well-formed UTF-8");
        }
    }
}
