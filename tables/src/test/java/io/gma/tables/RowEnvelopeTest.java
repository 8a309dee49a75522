package io.gma.tables;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.gma.wire.ErrorCode;
import io.gma.wire.Message;
import io.gma.wire.ProtocolException;
import io.gma.wire.WireCodec;
import java.nio.ByteBuffer;
import java.util.HexFormat;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(value = 30, unit = TimeUnit.SECONDS)
class RowEnvelopeTest {
    private static final TableSchema CPU = TableQueryTest.CPU;
    private static final Row ROW = Row.of("cardiff", "node-1", 3L, 0.75, true, 1_714_564_800_000_000L);
    /** The worked example of docs/tables.md, "On the wire". */
    private static final String HEX = "07" + "0006176339d93000"
            + "000763617264696666066e6f64652d31063fe80000000000000180c0c99de7d88b06";

    @Test
    void encodesTheDocumentedBytes() {
        assertEquals(HEX, HexFormat.of().formatHex(RowEnvelope.encode(7, 1_714_564_800_000_000L, CPU, ROW)));
        assertEquals(0x40, RowEnvelope.COMMAND.code());
    }

    @Test
    void travelsInAMessageAndDecodesFromItsDataBuffer() throws Exception {
        byte[] data = RowEnvelope.encode(1L << 40, -5, CPU, ROW);
        Message m = Message.of(RowEnvelope.COMMAND, "cpu-abc234@cardiff", "top-xyz567@lyon", 1, data);
        Message back = WireCodec.standard().decode(WireCodec.standard().encode(m));
        RowEnvelope e = RowEnvelope.decode(back.dataBuffer());
        assertEquals(1L << 40, e.queryId());
        assertEquals(-5, e.insertMicros());
        assertEquals(ROW, e.row(CPU));
        assertEquals(ROW, e.row(CPU)); // the view is not consumed
        assertEquals(-1L, RowEnvelope.decode(RowEnvelope.encode(-1L, 0, CPU, ROW)).queryId()); // unsigned 2^64-1
    }

    @Test
    void refusesBrokenHeaders() {
        assertEquals("row envelope ends inside its query id after 0 bytes", refused(""));
        assertEquals("row envelope ends inside its query id after 1 bytes", refused("80"));
        assertEquals("row envelope's query id is not minimal: 2 bytes where 1 would do", refused("8700"));
        assertEquals("row envelope's query id is longer than 10 bytes or overflows 64 bits: its 10th byte is 0x80",
                refused("ffffffffffffffffff80"));
        assertEquals("row envelope ends inside its insert time at offset 1: 8 bytes needed, 3 remain",
                refused("07000102"));
        ProtocolException e = assertThrows(ProtocolException.class,
                () -> RowEnvelope.decode(HexFormat.of().parseHex(HEX + "00")).row(CPU));
        assertEquals(ErrorCode.MALFORMED, e.code());
        assertEquals("row has 1 bytes after its last column, from offset 34", e.getMessage());
    }

    @Test
    void readsTheInsertTimeBigEndianWhateverTheBufferOrder() throws ProtocolException {
        ByteBuffer b = ByteBuffer.wrap(HexFormat.of().parseHex(HEX)).order(java.nio.ByteOrder.LITTLE_ENDIAN);
        assertEquals(1_714_564_800_000_000L, RowEnvelope.decode(b).insertMicros());
    }

    @Test
    void readInPlaceTheHeadersAreRefusedAlike() {
        for (String hex : new String[] {"", "80", "8700", "ffffffffffffffffff80", "07000102", HEX + "00"}) {
            byte[] bytes = HexFormat.of().parseHex(hex);
            byte[] within = new byte[bytes.length + 7]; // at offset 4, other bytes around it
            java.util.Arrays.fill(within, (byte) 0x80);
            System.arraycopy(bytes, 0, within, 4, bytes.length);
            String expected = assertThrows(ProtocolException.class, () -> RowEnvelope.decode(bytes).row(CPU))
                    .getMessage();
            assertEquals(expected, assertThrows(ProtocolException.class,
                    () -> RowEnvelope.row(CPU, within, 4, bytes.length)).getMessage(), hex);
            if (!hex.startsWith(HEX)) {
                assertEquals(expected, assertThrows(ProtocolException.class,
                        () -> RowEnvelope.queryId(within, 4, bytes.length)).getMessage(), hex);
                assertEquals(expected, assertThrows(ProtocolException.class,
                        () -> RowEnvelope.insertMicros(within, 4, bytes.length)).getMessage(), hex);
            }
        }
    }

    private static String refused(String hex) {
        return assertThrows(ProtocolException.class, () -> RowEnvelope.decode(HexFormat.of().parseHex(hex)))
                .getMessage();
    }
}
