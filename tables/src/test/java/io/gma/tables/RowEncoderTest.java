package io.gma.tables;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.gma.wire.ProtocolException;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.HexFormat;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The one-walk encoder against a reference written here from docs/tables.md alone (the string's length first,
 * computed by the JDK), including the lengths whose prefix the encoder reserves too long and moves back; reuse of
 * one encoder for rows of other sizes and NULLs; and the envelopes it makes for several queries from one
 * encoding.
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class RowEncoderTest {
    private static final TableSchema CPU = TableQueryTest.CPU;
    private static final TableSchema ONE = TableSchema.builder("one").column("k", ColumnType.STRING)
            .column("n", ColumnType.INTEGER).primaryKey("k").build();

    /** The encoding as docs/tables.md gives it, for a row of STRING and INTEGER columns (NULL allowed). */
    private static byte[] reference(Row row) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        int bitmap = 0;
        for (int i = 0; i < row.size(); i++) {
            bitmap |= row.isNull(i) ? 1 << i : 0;
        }
        out.write(bitmap);
        for (int i = 0; i < row.size(); i++) {
            Object v = row.get(i);
            if (v instanceof String s) {
                byte[] utf8 = s.getBytes(StandardCharsets.UTF_8);
                varint(out, utf8.length);
                out.writeBytes(utf8);
            } else if (v instanceof Long n) {
                varint(out, n << 1 ^ n >> 63);
            }
        }
        return out.toByteArray();
    }

    private static void varint(ByteArrayOutputStream out, long v) {
        while ((v & ~0x7FL) != 0) {
            out.write((int) (v & 0x7F | 0x80));
            v >>>= 7;
        }
        out.write((int) v);
    }

    @Test
    void everyStringLengthAroundTheVarintStepsEncodesAsTheReference() throws ProtocolException {
        RowEncoder encoder = new RowEncoder();
        // 1-byte chars, 2-byte, 3-byte and pairs: lengths whose prefix is 1, 2 or 3 bytes, reserved for 3 a char
        String[] units = {"a", "\u00e9", "\u8282", "\ud83d\ude00"};
        int[] lengths = {0, 1, 42, 43, 127, 128, 129, 5461, 5462, 16_383, 16_384, 21_845, 21_846, 65_535};
        for (String unit : units) {
            for (int chars : lengths) {
                String s = unit.repeat(Math.max(0, chars / unit.length()));
                if (s.getBytes(StandardCharsets.UTF_8).length > RowCodec.MAX_STRING_BYTES) {
                    continue;
                }
                Row row = Row.of(s, (long) chars);
                byte[] expected = reference(row);
                assertEquals(expected.length, encoder.encode(ONE, row), unit + " x " + chars);
                assertArrayEquals(expected, encoder.toArray(), unit + " x " + chars);
                assertArrayEquals(expected, RowCodec.encode(ONE, row), unit + " x " + chars);
                assertEquals(row, RowCodec.decode(ONE, encoder.toArray()));
            }
        }
    }

    @Test
    void aShortStringWithOneCharNotAsciiAnywhereEncodesAsTheReference() throws ProtocolException {
        RowEncoder encoder = new RowEncoder();
        for (String other : new String[] {"\u00e9", "\u8282", "\ud83d\ude00", "\u007f"}) {
            for (int length : new int[] {1, 2, 40, 126, 127, 128}) {
                for (int at = 0; at < length; at += Math.max(1, length / 7)) {
                    String s = "x".repeat(at) + other + "y".repeat(Math.max(0, length - at - 1));
                    Row row = Row.of(s, 5L);
                    assertArrayEquals(reference(row), RowCodec.encode(ONE, row), s);
                    encoder.encode(ONE, row);
                    assertArrayEquals(reference(row), encoder.toArray(), s);
                    assertEquals(row, RowCodec.decode(ONE, encoder.toArray()));
                }
            }
        }
        assertEquals("column k has an unpaired surrogate U+D800 at index 5, which UTF-8 cannot carry",
                assertThrows(TableException.class, () -> encoder.encode(ONE, Row.of("abcde\ud800fg", 1L)))
                        .getMessage());
    }

    @Test
    void oneEncoderReusedForRowsOfOtherSizesAndNullsEncodesEachAlone() {
        RowEncoder encoder = new RowEncoder();
        Random r = new Random(23);
        for (int i = 0; i < 2_000; i++) {
            TableSchema s = RowCodecFuzzTest.randomSchema(r);
            Row row = RowCodecFuzzTest.randomRow(r, s);
            encoder.encode(s, row);
            assertArrayEquals(RowCodec.encode(s, row), encoder.toArray(), s + " " + row);
        }
        // a row with NULLs, then one without: the bitmap is the new row's alone
        encoder.encode(CPU, TableQueryTest.LYON_NULLS);
        encoder.encode(CPU, TableQueryTest.CARDIFF);
        assertArrayEquals(RowCodec.encode(CPU, TableQueryTest.CARDIFF), encoder.toArray());
        // a row larger than the buffer kept, then a small one
        encoder.encode(ONE, Row.of("x".repeat(60_000), 1L));
        assertEquals(1 + 3 + 60_000 + 1, encoder.length());
        encoder.encode(ONE, Row.of("y", 2L));
        assertEquals("00" + "0179" + "04", HexFormat.of().formatHex(encoder.toArray()));
    }

    @Test
    void stringsThatComeAgainAsTheSameObjectEncodeAsTheReference() {
        // a pool of strings, each the same object whenever a row takes it again, among others made afresh: ASCII,
        // beyond ASCII, longer than a one-byte length, empty; NULLs; refused rows; and a second schema in between
        String[] pool = {"node-0042.cardiff.gma", "z\u00fcrich", "x".repeat(130), "", "\ud83d\ude00", "lyon"};
        TableSchema two = TableSchema.builder("two").column("a", ColumnType.STRING).column("b", ColumnType.STRING)
                .primaryKey("a").build();
        RowEncoder encoder = new RowEncoder();
        Random r = new Random(29);
        for (int i = 0; i < 5_000; i++) {
            String a = r.nextInt(4) == 0 ? new String(pool[r.nextInt(pool.length)]) : pool[r.nextInt(pool.length)];
            String b = r.nextInt(5) == 0 ? null : pool[r.nextInt(pool.length)];
            if (r.nextInt(10) == 0) {
                Row other = Row.of(pool[r.nextInt(pool.length)], (long) i);
                encoder.encode(ONE, other);
                assertArrayEquals(RowCodec.encode(ONE, other), encoder.toArray(), other.toString());
            }
            if (r.nextInt(50) == 0) {
                assertThrows(TableException.class, () -> encoder.encode(two, Row.of(a, "bad\udc00")));
            }
            Row row = Row.of(a, b);
            encoder.encode(two, row);
            assertArrayEquals(RowCodec.encode(two, row), encoder.toArray(), row.toString());
        }
    }

    @Test
    void aRefusedRowLeavesNothingEncoded() {
        RowEncoder encoder = new RowEncoder();
        encoder.encode(ONE, Row.of("a", 1L));
        assertEquals("column k has an unpaired surrogate U+DC00 at index 2, which UTF-8 cannot carry",
                assertThrows(TableException.class, () -> encoder.encode(ONE, Row.of("ab\udc00", 1L))).getMessage());
        assertEquals(0, encoder.length());
        assertEquals("column k has an unpaired surrogate U+D800 at index 70000, which UTF-8 cannot carry",
                assertThrows(TableException.class, () -> encoder.encode(ONE, Row.of("a".repeat(70_000) + "\ud800",
                        1L))).getMessage());
        assertEquals("column k is 70000 bytes in UTF-8, over the limit of 65535",
                assertThrows(TableException.class, () -> encoder.encode(ONE, Row.of("a".repeat(70_000), 1L)))
                        .getMessage());
        assertEquals("column n is INTEGER, but the row holds a String ('1')",
                assertThrows(TableException.class, () -> encoder.encode(ONE, Row.of("a", "1"))).getMessage());
        assertEquals(0, encoder.length());
    }

    @Test
    void envelopesForSeveralQueriesCarryTheSameRowBytes() throws ProtocolException {
        RowEncoder encoder = new RowEncoder();
        encoder.encode(CPU, TableQueryTest.CARDIFF);
        byte[] row = RowCodec.encode(CPU, TableQueryTest.CARDIFF);
        long[] ids = {0, 7, 127, 128, 1L << 40, -1L};
        for (long id : ids) {
            byte[] data = encoder.envelope(id, 1_714_564_800_000_000L);
            assertArrayEquals(RowEnvelope.encode(id, 1_714_564_800_000_000L, CPU, TableQueryTest.CARDIFF), data);
            byte[] within = new byte[data.length + 5]; // read in place, between other bytes
            System.arraycopy(data, 0, within, 3, data.length);
            assertEquals(id, RowEnvelope.queryId(within, 3, data.length));
            assertEquals(1_714_564_800_000_000L, RowEnvelope.insertMicros(within, 3, data.length));
            assertEquals(TableQueryTest.CARDIFF, RowEnvelope.row(CPU, within, 3, data.length));
            assertArrayEquals(row, java.util.Arrays.copyOfRange(data, data.length - row.length, data.length));
        }
    }
}
