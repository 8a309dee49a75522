package io.gma.tables;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.fail;

import io.gma.wire.ErrorCode;
import io.gma.wire.ProtocolException;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Random schemas and rows round-trip; random and mutated bytes are either a row that encodes back to the same
 * bytes (the encoding is canonical) or a ProtocolException MALFORMED, and nothing else. Seeded, bounded in time.
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class RowCodecFuzzTest {
    private static final long SEED = Long.getLong("gma.fuzz.seed", 23);
    private static final long BUDGET_NANOS = 3_000_000_000L;
    private static final ColumnType[] TYPES = ColumnType.values();
    private static final String[] SAMPLES = {"", "a", "cardiff", "z\u00fcrich", "\u8282\u70b9", "\ud83d\ude00",
        "'", "%_"};

    static TableSchema randomSchema(Random r) {
        int n = 1 + r.nextInt(r.nextInt(8) == 0 ? TableSchema.MAX_COLUMNS : 12);
        TableSchema.Builder b = TableSchema.builder("t" + r.nextInt(1000));
        for (int i = 0; i < n; i++) {
            b.column("c" + i, TYPES[r.nextInt(TYPES.length)]);
        }
        List<String> key = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            if (key.isEmpty() && i == n - 1 || r.nextInt(4) == 0) {
                key.add("c" + i);
            }
        }
        return b.primaryKey(key.toArray(new String[0])).build();
    }

    static Row randomRow(Random r, TableSchema s) {
        Row.Builder b = Row.builder(s.columns().size());
        for (int i = 0; i < s.columns().size(); i++) {
            if (!s.isKey(i) && r.nextInt(4) == 0) {
                continue;
            }
            switch (s.columns().get(i).type()) {
                case INTEGER:
                case TIMESTAMP:
                    long v = r.nextLong();
                    b.setLong(i, r.nextBoolean() ? v >> r.nextInt(64) : v);
                    break;
                case DOUBLE:
                    b.setDouble(i, r.nextInt(10) == 0 ? Double.longBitsToDouble(r.nextLong()) : r.nextGaussian());
                    break;
                case BOOLEAN:
                    b.setBoolean(i, r.nextBoolean());
                    break;
                default:
                    b.setString(i, r.nextBoolean() ? SAMPLES[r.nextInt(SAMPLES.length)] : randomString(r));
                    break;
            }
        }
        return b.build();
    }

    private static String randomString(Random r) {
        StringBuilder s = new StringBuilder();
        int n = r.nextInt(r.nextInt(20) == 0 ? 3000 : 20);
        for (int i = 0; i < n; i++) {
            int cp = r.nextInt(4) == 0 ? r.nextInt(0x10FFFF) : 0x20 + r.nextInt(0x5F);
            if (cp >= 0xD800 && cp <= 0xDFFF) {
                cp = 'x';
            }
            s.appendCodePoint(cp);
        }
        return s.toString();
    }

    @Test
    void randomRowsRoundTrip() throws ProtocolException {
        Random r = new Random(SEED);
        long end = System.nanoTime() + BUDGET_NANOS;
        int rows = 0;
        while (System.nanoTime() < end || rows < 1000) {
            TableSchema s = randomSchema(r);
            for (int k = 0; k < 20; k++, rows++) {
                Row row = randomRow(r, s);
                byte[] bytes = RowCodec.encode(s, row);
                Row back = RowCodec.decode(s, bytes);
                assertEquals(row, back, "seed " + SEED);
                assertArrayEquals(bytes, RowCodec.encode(s, back));
            }
        }
    }

    @Test
    void randomAndMutatedBytesGiveARowOrMalformed() {
        Random r = new Random(SEED + 1);
        long end = System.nanoTime() + BUDGET_NANOS;
        int tries = 0;
        while (System.nanoTime() < end || tries < 10_000) {
            TableSchema s = randomSchema(r);
            byte[] valid = RowCodec.encode(s, randomRow(r, s));
            for (int k = 0; k < 20; k++, tries++) {
                byte[] input = r.nextInt(5) == 0 ? randomBytes(r) : mutate(r, valid);
                try {
                    Row row = RowCodec.decode(s, input);
                    // what decodes is canonical: it encodes back to the very same bytes (NaN payloads aside,
                    // which decode as NaN and encode as 7FF8000000000000)
                    if (!hasNaN(row)) {
                        assertArrayEquals(input, RowCodec.encode(s, row));
                    } else {
                        assertEquals(row, RowCodec.decode(s, RowCodec.encode(s, row)));
                    }
                } catch (ProtocolException e) {
                    assertEquals(ErrorCode.MALFORMED, e.code());
                } catch (RuntimeException | Error e) {
                    fail("decoding " + java.util.HexFormat.of().formatHex(input) + " with " + s + " threw " + e, e);
                }
            }
        }
    }

    private static boolean hasNaN(Row row) {
        for (int i = 0; i < row.size(); i++) {
            if (row.get(i) instanceof Double && ((Double) row.get(i)).isNaN()) {
                return true;
            }
        }
        return false;
    }

    private static byte[] randomBytes(Random r) {
        byte[] b = new byte[r.nextInt(40)];
        r.nextBytes(b);
        return b;
    }

    private static byte[] mutate(Random r, byte[] valid) {
        byte[] b = valid.clone();
        switch (r.nextInt(5)) {
            case 0: // flip a bit
                if (b.length > 0) {
                    int i = r.nextInt(b.length);
                    b[i] ^= (byte) (1 << r.nextInt(8));
                }
                return b;
            case 1: // truncate
                return java.util.Arrays.copyOf(b, b.length == 0 ? 0 : r.nextInt(b.length));
            case 2: // extend
                byte[] longer = java.util.Arrays.copyOf(b, b.length + 1 + r.nextInt(4));
                longer[b.length] = (byte) r.nextInt(256);
                return longer;
            case 3: // set a byte to a boundary value
                if (b.length > 0) {
                    int[] edges = {0x00, 0x01, 0x02, 0x7F, 0x80, 0xC0, 0xED, 0xF4, 0xFF};
                    b[r.nextInt(b.length)] = (byte) edges[r.nextInt(edges.length)];
                }
                return b;
            default: // a huge varint length in the middle
                if (b.length > 2) {
                    int i = 1 + r.nextInt(b.length - 2);
                    b[i] = (byte) 0xFF;
                    b[i + 1] = (byte) 0xFF;
                }
                return b;
        }
    }
}
