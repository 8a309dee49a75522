package io.gma.tables;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;

/**
 * LEB128 varints: 7 bits a byte, least significant group first, the high bit set on every byte but the last.
 * Signed values (INTEGER, TIMESTAMP) are zigzag-mapped first, so that small magnitudes of either sign are short:
 * 0, -1, 1, -2, 2 become 0, 1, 2, 3, 4.
 *
 * <p>Reading is checked by {@link #end}, which every reader of a varint in tables/ calls and words its own
 * sentence from, then {@link #valueAt}.
 */
final class Varint {
    /** A 64-bit value needs at most 10 groups of 7 bits. */
    static final int MAX_BYTES = 10;

    /** {@link #end}: the input ends inside the varint. */
    static final int ENDS = -1;
    /** {@link #end}: longer than allowed, or a 10th byte over 1 (past 64 bits). */
    static final int TOO_LONG = -2;
    /** {@link #end}: a last byte of 0 after others: a shorter varint says the same. */
    static final int NOT_MINIMAL = -3;

    private Varint() {
    }

    /**
     * Checks the varint at {@code in[at]}, which may take {@code maxBytes} bytes (at most {@link #MAX_BYTES}) and
     * must end before {@code end}: the offset after it, or {@link #ENDS}, {@link #TOO_LONG} or
     * {@link #NOT_MINIMAL}.
     */
    static int end(byte[] in, int at, int end, int maxBytes) {
        for (int k = 0; k < maxBytes; k++) {
            if (at + k >= end) {
                return ENDS;
            }
            int b = in[at + k] & 0xFF;
            if (k == MAX_BYTES - 1 && b > 1) {
                return TOO_LONG;
            }
            if ((b & 0x80) == 0) {
                return b == 0 && k > 0 ? NOT_MINIMAL : at + k + 1;
            }
        }
        return TOO_LONG;
    }

    /** The bytes of the varint at {@code in[at]}, which has a last byte (one {@link #end} found not minimal). */
    static int length(byte[] in, int at) {
        int k = at;
        while (in[k] < 0) {
            k++;
        }
        return k - at + 1;
    }

    /** The value of the varint at {@code in[at]}, which {@link #end} found whole. */
    static long valueAt(byte[] in, int at) {
        long v = 0;
        for (int k = 0; ; k++) {
            int b = in[at + k];
            v |= (long) (b & 0x7F) << 7 * k;
            if (b >= 0) {
                return v;
            }
        }
    }

    static long zigzag(long v) {
        return v << 1 ^ v >> 63;
    }

    static long unzigzag(long z) {
        return z >>> 1 ^ -(z & 1);
    }

    /** The bytes the unsigned value takes: 1..10. */
    static int size(long unsigned) {
        int bits = 64 - Long.numberOfLeadingZeros(unsigned | 1);
        return (bits + 6) / 7;
    }

    /** 8 bytes of an array as a little-endian long: a varint of up to 8 bytes in one load or store. */
    static final VarHandle LONG_LE = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);
    private static final long HIGH_BITS = 0x8080808080808080L;

    /**
     * Writes the unsigned value at {@code at} with one 8-byte store when it takes 8 bytes or fewer: the caller
     * has room for 8 bytes there, and the bytes past the varint are garbage that it writes over (or leaves
     * past its end). Returns the offset after the varint.
     */
    static int writeWide(long unsigned, byte[] out, int at) {
        if (unsigned >>> 56 != 0) {
            return write(unsigned, out, at);
        }
        int n = size(unsigned);
        long v = unsigned;
        long w = v & 0x7F | v << 1 & 0x7F00 | v << 2 & 0x7F0000 | v << 3 & 0x7F000000L | v << 4 & 0x7F00000000L
                | v << 5 & 0x7F0000000000L | v << 6 & 0x7F000000000000L | v << 7 & 0x7F00000000000000L;
        LONG_LE.set(out, at, w | HIGH_BITS >>> 8 >>> 8 * (8 - n)); // the high bit on every byte but the last
        return at + n;
    }

    /**
     * The length of the varint whose first 8 bytes, read little-endian, are {@code word}, when it takes 8 bytes
     * or fewer; 0 when it goes on past them.
     */
    static int wideLength(long word) {
        long stops = ~word & HIGH_BITS;
        return stops == 0 ? 0 : (Long.numberOfTrailingZeros(stops) >>> 3) + 1;
    }

    /** The value of the varint of {@code n} bytes (1 to 8) that begins {@code word}, read little-endian. */
    static long wideValue(long word, int n) {
        long x = n == 8 ? word : word & (1L << 8 * n) - 1;
        return x & 0x7F | x >>> 1 & 0x7FL << 7 | x >>> 2 & 0x7FL << 14 | x >>> 3 & 0x7FL << 21
                | x >>> 4 & 0x7FL << 28 | x >>> 5 & 0x7FL << 35 | x >>> 6 & 0x7FL << 42 | x >>> 7 & 0x7FL << 49;
    }

    /** Writes the unsigned value at {@code at}; returns the offset after it. */
    static int write(long unsigned, byte[] out, int at) {
        long v = unsigned;
        int p = at;
        while ((v & ~0x7FL) != 0) {
            out[p++] = (byte) (v & 0x7F | 0x80);
            v >>>= 7;
        }
        out[p++] = (byte) v;
        return p;
    }
}
