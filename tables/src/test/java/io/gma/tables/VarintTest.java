package io.gma.tables;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.Arrays;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The 8-byte-at-once varint write and read against the byte-at-a-time one, at every length and its edges. */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class VarintTest {
    @Test
    void wideWriteAndReadAgreeWithTheByteAtATimeForm() {
        Random r = new Random(7);
        for (int bits = 0; bits <= 64; bits++) {
            for (int i = 0; i < 200; i++) {
                long v = bits == 0 ? 0 : (r.nextLong() >>> (64 - bits)) | (i == 0 ? 1L << (bits - 1) : 0);
                if (i == 1) {
                    v = bits == 64 ? -1L : (1L << bits) - 1; // all ones: the edge of each length
                }
                byte[] expected = new byte[16];
                int end = Varint.write(v, expected, 3);
                byte[] wide = new byte[16];
                Arrays.fill(wide, (byte) 0x55);
                assertEquals(end, Varint.writeWide(v, wide, 3), Long.toHexString(v));
                assertArrayEquals(Arrays.copyOfRange(expected, 3, end), Arrays.copyOfRange(wide, 3, end),
                        Long.toHexString(v));
                int n = end - 3;
                long word = (long) Varint.LONG_LE.get(expected, 3);
                if (n <= 8) {
                    assertEquals(n, Varint.wideLength(word), Long.toHexString(v));
                    assertEquals(v, Varint.wideValue(word, n), Long.toHexString(v));
                } else {
                    assertEquals(0, Varint.wideLength(word), Long.toHexString(v));
                }
            }
        }
    }
}
