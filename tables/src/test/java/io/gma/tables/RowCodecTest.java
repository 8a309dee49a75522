package io.gma.tables;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gma.wire.ProtocolException;
import java.util.HexFormat;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(value = 30, unit = TimeUnit.SECONDS)
class RowCodecTest {
    private static final TableSchema CPU = TableQueryTest.CPU;
    private static final TableSchema ONE = TableSchema.builder("one").column("k", ColumnType.STRING)
            .primaryKey("k").build();

    private static String refused(Row row) {
        return assertThrows(TableException.class, () -> RowCodec.encode(CPU, row)).getMessage();
    }

    @Test
    void decodeNamesWhereAVarintGoesWrong() {
        java.util.function.Function<String, String> refusal = hex -> assertThrows(ProtocolException.class,
                () -> RowCodec.decode(CPU, java.util.HexFormat.of().parseHex(hex))).getMessage();
        // site "a", host "b", then the varint of cpu at offset 5
        assertEquals("row ends inside the varint of column cpu (INTEGER) at offset 5 after 3 bytes",
                refusal.apply("0001610162ffffff"));
        assertEquals("row ends inside the varint of column cpu (INTEGER) at offset 5 after 10 bytes",
                refusal.apply("0001610162" + "ff".repeat(10)));
        assertEquals("the varint of column cpu (INTEGER) at offset 5 is longer than 10 bytes",
                refusal.apply("0001610162" + "ff".repeat(10) + "01"));
        assertEquals("the varint of column cpu (INTEGER) at offset 5 overflows 64 bits: its 10th byte is 0x02",
                refusal.apply("0001610162" + "ff".repeat(9) + "02"));
        assertEquals("the varint of column cpu (INTEGER) at offset 5 is not minimal: 3 bytes where 2 would do",
                refusal.apply("0001610162ff8000"));
    }

    @Test
    void encodeRefusesRowsThatDoNotFit() {
        assertEquals("column cpu is INTEGER, but the row holds a Double (3.0)",
                refused(Row.of("a", "b", 3.0, null, null, null)));
        assertEquals("column up is BOOLEAN, but the row holds a Long (1)",
                refused(Row.of("a", "b", 3, null, 1, null)));
        assertEquals("key column site is NULL; a key column needs a value",
                refused(Row.of(null, "b", 3, null, null, null)));
        assertEquals("the row has 7 values, but table host_cpu has 6 columns",
                refused(Row.of("a", "b", 3, null, null, null, null)));
        assertEquals("column host has an unpaired surrogate U+D800 at index 1, which UTF-8 cannot carry",
                refused(Row.of("a", "x\ud800", 3, null, null, null)));
        assertEquals("column host is 65536 bytes in UTF-8, over the limit of 65535",
                refused(Row.of("a", "\u00e9".repeat(32_768), 3, null, null, null)));
        RowCodec.encode(CPU, Row.of("a", "x".repeat(65_535), 3, null, null, null));
        assertEquals("value 2 is a java.math.BigDecimal; a row holds Long, Double, String, Boolean or null",
                assertThrows(TableException.class, () -> Row.of("a", "b", java.math.BigDecimal.ONE))
                        .getMessage());
    }

    @Test
    void rowsReadBackTheirValuesUnboxed() throws ProtocolException {
        Row r = RowCodec.decode(CPU, RowCodec.encode(CPU, TableQueryTest.CARDIFF));
        assertEquals("cardiff", r.getString(0));
        assertEquals(3, r.getLong(2));
        assertEquals(4.5, r.getDouble(3));
        assertTrue(r.getBoolean(4));
        assertEquals(1_714_564_800_000_000L, r.getLong(5));
        assertEquals("value 3 is a Double, not a Long", assertThrows(IllegalStateException.class,
                () -> r.getLong(3)).getMessage());
        assertEquals("['cardiff', 'node-1', 3, 4.5, true, 1714564800000000]", r.toString());
    }

    @Test
    void aLengthLongerThanTheInputIsRefusedBeforeAllocating() {
        // a 6-byte row that announces a string of 65,535 bytes
        byte[] hostile = HexFormat.of().parseHex("00ffff036162");
        com.sun.management.ThreadMXBean mx =
                (com.sun.management.ThreadMXBean) java.lang.management.ManagementFactory.getThreadMXBean();
        long id = Thread.currentThread().getId();
        for (int i = 0; i < 1000; i++) {
            assertThrows(ProtocolException.class, () -> RowCodec.decode(ONE, hostile));
        }
        long before = mx.getThreadAllocatedBytes(id);
        ProtocolException e = assertThrows(ProtocolException.class, () -> RowCodec.decode(ONE, hostile));
        long allocated = mx.getThreadAllocatedBytes(id) - before;
        assertEquals("column k (STRING) at offset 1 has length 65535, but only 2 bytes remain", e.getMessage());
        assertTrue(allocated < 32 * 1024, allocated + " bytes allocated for a 6-byte input");
    }

    @Test
    void encodeAndDecodeAreAllocationLight() throws ProtocolException {
        // a row of about 64 bytes: encode allocates its array, decode the row, its 3 arrays and its strings
        Row row = Row.of("cardiff", "node-0042.grid.cf.ac.uk", 3L, 4.5, true, 1_714_564_800_000_000L);
        byte[] bytes = RowCodec.encode(CPU, row);
        com.sun.management.ThreadMXBean mx =
                (com.sun.management.ThreadMXBean) java.lang.management.ManagementFactory.getThreadMXBean();
        long id = Thread.currentThread().getId();
        for (int i = 0; i < 20_000; i++) {
            RowCodec.decode(CPU, RowCodec.encode(CPU, row));
        }
        long before = mx.getThreadAllocatedBytes(id);
        int n = 10_000;
        long start = System.nanoTime();
        for (int i = 0; i < n; i++) {
            RowCodec.decode(CPU, RowCodec.encode(CPU, row));
        }
        long nanos = System.nanoTime() - start;
        long perRow = (mx.getThreadAllocatedBytes(id) - before) / n;
        // measured once on the 2-core build machine, warm, for this 51-byte row: encode ~110 ns, 72 bytes (its
        // array); decode ~110 ns, 304 bytes (the row, its 3 arrays, 2 strings); a 3-part filter ~22 ns, 0 bytes
        assertTrue(perRow < 1024, perRow + " bytes allocated per row of " + bytes.length + " bytes, "
                + nanos / n + " ns");
    }
}
