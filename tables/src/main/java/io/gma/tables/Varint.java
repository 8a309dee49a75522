package io.gma.tables;

/**
 * LEB128 varints: 7 bits a byte, least significant group first, the high bit set on every byte but the last.
 * Signed values (INTEGER, TIMESTAMP) are zigzag-mapped first, so that small magnitudes of either sign are short:
 * 0, -1, 1, -2, 2 become 0, 1, 2, 3, 4.
 *
 * <p>Reading is the {@link RowReader}'s, which checks every byte against the end of its input.
 */
final class Varint {
    /** A 64-bit value needs at most 10 groups of 7 bits. */
    static final int MAX_BYTES = 10;

    private Varint() {
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
