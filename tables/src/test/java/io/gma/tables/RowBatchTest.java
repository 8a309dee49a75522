package io.gma.tables;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.gma.wire.ErrorCode;
import io.gma.wire.ProtocolException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(value = 30, unit = TimeUnit.SECONDS)
class RowBatchTest {
    private static final TableSchema CPU = TableQueryTest.CPU;
    private static final Row ROW = Row.of("cardiff", "node-1", 3L, 0.75, true, 1_714_564_800_000_000L);
    private static final Row OTHER = Row.of("lyon", "node-2", 5L, null, false, 1_714_564_801_000_000L);
    private static final String ROW_HEX = "000763617264696666066e6f64652d31063fe80000000000000180c0c99de7d88b06";
    /** The example of docs/tables.md, "TABLE_ROWS": query 7, the worked example's row, then the same a second later. */
    private static final String HEX = "07" + "0006176339d93000" + "22" + ROW_HEX + "0006176339e87240" + "22" + ROW_HEX;

    /** What forEach gave: insert times and rows, in order. */
    private static final class Got implements RowBatch.Rows {
        final List<Long> micros = new ArrayList<>();
        final List<Row> rows = new ArrayList<>();

        @Override
        public void row(long insertMicros, Row row) {
            micros.add(insertMicros);
            rows.add(row);
        }
    }

    @Test
    void encodesTheDocumentedBytes() {
        RowBatch b = new RowBatch(7);
        RowEncoder e = new RowEncoder();
        e.encode(CPU, ROW);
        b.add(e, 1_714_564_800_000_000L);
        b.add(e, 1_714_564_801_000_000L);
        assertEquals(2, b.rows());
        assertEquals(HEX.length() / 2, b.bytes());
        assertEquals(HEX, HexFormat.of().formatHex(b.take()));
        assertEquals(0x45, RowBatch.COMMAND.code());
    }

    @Test
    void decodesItsRowsInOrderAndStartsAfreshWhenTaken() throws ProtocolException {
        RowBatch b = new RowBatch(1L << 40);
        RowEncoder e = new RowEncoder();
        e.encode(CPU, ROW);
        b.add(e, -5);
        e.encode(CPU, OTHER);
        assertEquals(b.bytes() + 8 + 1 + e.length(), b.bytesWith(e.length()));
        b.add(e, 42);
        byte[] first = b.take();
        assertEquals(0, b.rows());
        e.encode(CPU, ROW);
        b.add(e, 7);
        byte[] second = b.take();

        byte[] within = new byte[first.length + 9]; // at offset 4, other bytes around it
        java.util.Arrays.fill(within, (byte) 0x80);
        System.arraycopy(first, 0, within, 4, first.length);
        assertEquals(1L << 40, RowBatch.queryId(within, 4, first.length));
        Got got = new Got();
        assertEquals(2, RowBatch.forEach(CPU, within, 4, first.length, got));
        assertEquals(List.of(-5L, 42L), got.micros);
        assertEquals(List.of(ROW, OTHER), got.rows);

        Got again = new Got();
        assertEquals(1, RowBatch.forEach(CPU, second, 0, second.length, again));
        assertEquals(List.of(7L), again.micros);
        assertEquals(List.of(ROW), again.rows);
        assertEquals(-1L, RowBatch.queryId(withRow(new RowBatch(-1L)), 0, withRow(new RowBatch(-1L)).length));
    }

    @Test
    void anEmptyBatchIsNotTaken() {
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> new RowBatch(3).take());
        assertEquals("a TABLE_ROWS carries one row at least; this batch holds none", e.getMessage());
    }

    @Test
    void refusesBrokenBatchesAfterGivingTheRowsBeforeTheFault() {
        assertEquals("row batch ends inside its query id after 0 bytes", refused(""));
        assertEquals("row batch's query id is not minimal: 2 bytes where 1 would do", refused("8700"));
        assertEquals("row batch's query id is longer than 10 bytes or overflows 64 bits: its 10th byte is 0x80",
                refused("ffffffffffffffffff80"));
        assertEquals("row batch holds no row after its query id", refused("07"));
        assertEquals("row batch's row 1 ends inside its insert time: 8 bytes needed, 3 remain", refused("07000102"));
        assertEquals("row batch's row 1 has no length of at most 5 bytes before the end of the data",
                refused("07" + "0006176339d93000"));
        assertEquals("row batch's row 1 has a length that is not minimal: 2 bytes where 1 would do",
                refused("07" + "0006176339d93000" + "a200" + ROW_HEX));
        assertEquals("row batch's row 1 is 35 bytes long, past the 34 that remain",
                refused("07" + "0006176339d93000" + "23" + ROW_HEX));
        // the second row is a byte short: the first was given before the fault was found
        String broken = "07" + "0006176339d93000" + "22" + ROW_HEX + "0006176339e87240" + "21"
                + ROW_HEX.substring(0, ROW_HEX.length() - 2);
        Got got = new Got();
        byte[] bytes = HexFormat.of().parseHex(broken);
        ProtocolException e = assertThrows(ProtocolException.class,
                () -> RowBatch.forEach(CPU, bytes, 0, bytes.length, got));
        assertEquals(ErrorCode.MALFORMED, e.code());
        assertEquals(List.of(ROW), got.rows);
    }

    @Test
    void theQueryIdAloneIsRefusedAsForEachRefusesIt() {
        for (String hex : new String[] {"", "80", "8700", "ffffffffffffffffff80", "07"}) {
            byte[] bytes = HexFormat.of().parseHex(hex);
            assertEquals(refused(hex), assertThrows(ProtocolException.class,
                    () -> RowBatch.queryId(bytes, 0, bytes.length)).getMessage(), hex);
        }
    }

    private static byte[] withRow(RowBatch b) {
        RowEncoder e = new RowEncoder();
        e.encode(CPU, ROW);
        b.add(e, 0);
        return b.take();
    }

    private static String refused(String hex) {
        byte[] bytes = HexFormat.of().parseHex(hex);
        ProtocolException e = assertThrows(ProtocolException.class,
                () -> RowBatch.forEach(CPU, bytes, 0, bytes.length, new Got()));
        assertEquals(ErrorCode.MALFORMED, e.code());
        return e.getMessage();
    }

    @Test
    void aBatchDecodesToTheRowsEachEnvelopeWouldCarry() throws ProtocolException {
        RowEncoder e = new RowEncoder();
        e.encode(CPU, ROW);
        byte[] envelope = e.envelope(7, 1_714_564_800_000_000L);
        RowBatch b = new RowBatch(7);
        b.add(e, 1_714_564_800_000_000L);
        byte[] batch = b.take();
        Got got = new Got();
        RowBatch.forEach(CPU, batch, 0, batch.length, got);
        assertEquals(RowEnvelope.decode(envelope).row(CPU), got.rows.get(0));
        assertArrayEquals(HexFormat.of().parseHex("07" + "0006176339d93000" + "22" + ROW_HEX), batch);
    }

    @Test
    void rowsOfABatchShareTheStringsTheyRepeatAndNoOthers() throws ProtocolException {
        Row cardiffNode1 = Row.of("cardiff", "node-1", 3L, 0.75, true, 1L);
        Row cardiffNode2 = Row.of("cardiff", "node-2", 3L, 0.75, true, 2L);
        Row zurichNode2 = Row.of("z\u00fcrich", "node-2", 3L, 0.75, true, 3L); // not ASCII: decoded each time
        Row zurichAgain = Row.of("z\u00fcrich", "node-2", 4L, 0.5, false, 4L);
        Row[] rows = {cardiffNode1, cardiffNode2, zurichNode2, zurichAgain, cardiffNode1};
        RowBatch b = new RowBatch(3);
        RowEncoder e = new RowEncoder();
        for (Row r : rows) {
            e.encode(CPU, r);
            b.add(e, 0);
        }
        byte[] data = b.take();
        Got got = new Got();
        RowBatch.forEach(CPU, data, 0, data.length, got);
        assertEquals(List.of(rows), got.rows);
        List<Row> r = got.rows;
        assertSame(r.get(0).get(0), r.get(1).get(0), "cardiff, twice in a row");
        assertNotSame(r.get(0).get(1), r.get(1).get(1), "node-1, then node-2");
        assertSame(r.get(1).get(1), r.get(2).get(1), "node-2, twice in a row");
        assertNotSame(r.get(2).get(0), r.get(3).get(0), "z\u00fcrich is not ASCII: not kept");
        assertNotSame(r.get(3).get(0), r.get(4).get(0), "cardiff again, after another value");

        // a row decoded alone keeps nothing for another
        byte[] one = RowCodec.encode(CPU, cardiffNode1);
        assertNotSame(RowCodec.decode(CPU, one).get(0), RowCodec.decode(CPU, one).get(0));
    }

    @Test
    void aLatestAnswerIsTheRowsWithoutAQueryIdAndMayBeEmpty() throws ProtocolException {
        RowBatch answer = RowBatch.latestAnswer();
        assertEquals(0, answer.take().length);
        RowEncoder e = new RowEncoder();
        e.encode(CPU, ROW);
        answer.add(e, 1_714_564_800_000_000L);
        answer.add(e, 1_714_564_801_000_000L);
        byte[] data = answer.take();
        assertEquals(HEX.substring(2), HexFormat.of().formatHex(data));
        Got got = new Got();
        assertEquals(2, RowBatch.forEachLatest(CPU, data, 0, data.length, got));
        assertEquals(List.of(ROW, ROW), got.rows);
        assertEquals(0, RowBatch.forEachLatest(CPU, data, 0, 0, new Got()));
        ProtocolException ex = assertThrows(ProtocolException.class,
                () -> RowBatch.forEachLatest(CPU, data, 0, 3, new Got()));
        assertEquals("latest answer's row 1 ends inside its insert time: 8 bytes needed, 3 remain", ex.getMessage());
    }
}
