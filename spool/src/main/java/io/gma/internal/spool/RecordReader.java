package io.gma.internal.spool;

import java.nio.ByteBuffer;
import java.util.function.Consumer;

/**
 * Reads the records of one spool file, whole, checking each ({@link RecordFormat}): a record whose magic, length
 * or CRC is wrong is skipped, and reading goes on at the next place where a whole, intact record starts. So a
 * flipped bit costs the record it is in, not the file, and a record torn by a crash in mid-write is told from
 * the good ones before it. A run of zeros is not damage: the padding of a direct write at the end, or records
 * acknowledged before they were written and so left out ({@link Segment#skipIfAcknowledged}).
 */
final class RecordReader {
    /**
     * What one file held.
     *
     * @param damaged runs of bytes that were not whole, intact records nor zeros, each skipped (a torn end
     *     counts too)
     * @param validEnd where the last intact record ends: an append-only file is cut back to it before it is
     *     written again
     * @param tornEnd whether the bytes after validEnd were a damaged run that reached the end of the file (what
     *     a crash in mid-write leaves); zeros alone there are not torn, but the padding of a direct write
     *     ({@link Segment}), nor counted as damaged
     */
    record Scan(int damaged, long validEnd, boolean tornEnd) {
    }

    private RecordReader() {
    }

    /** Hands {@code each} the body of every intact record of {@code magic} in {@code bytes}, in order. */
    static Scan scan(byte[] bytes, int length, int magic, Consumer<ByteBuffer> each) {
        ByteBuffer b = ByteBuffer.wrap(bytes, 0, length);
        int damaged = 0;
        boolean inDamage = false;
        int damageStart = 0;
        int pos = 0;
        long validEnd = 0;
        while (pos + RecordFormat.HEADER_BYTES <= length) {
            int body = intact(bytes, length, pos, magic, b);
            if (body < 0) {
                if (!inDamage) {
                    damaged++;
                    inDamage = true;
                    damageStart = pos;
                }
                pos++;
                continue;
            }
            if (inDamage && zeros(bytes, damageStart, pos)) {
                damaged--; // records acknowledged before they were written, left out: no damage
            }
            inDamage = false;
            each.accept(ByteBuffer.wrap(bytes, pos + RecordFormat.HEADER_BYTES, body).slice());
            pos += RecordFormat.HEADER_BYTES + body;
            validEnd = pos;
        }
        boolean torn = validEnd < length;
        if (torn && zeros(bytes, inDamage ? damageStart : pos, length)) {
            // the zeros that pad a direct write to its block, past the last record: no damage, nothing torn
            return new Scan(inDamage ? damaged - 1 : damaged, validEnd, false);
        }
        if (torn && !inDamage) {
            damaged++; // a header cut short at the very end
        }
        return new Scan(damaged, validEnd, torn);
    }

    /** Whether {@code bytes} are all zero from {@code from} to {@code to}. */
    private static boolean zeros(byte[] bytes, int from, int to) {
        for (int i = from; i < to; i++) {
            if (bytes[i] != 0) {
                return false;
            }
        }
        return true;
    }

    /** The body length of the intact record at {@code pos}, or -1 when there is none there. */
    private static int intact(byte[] bytes, int length, int pos, int magic, ByteBuffer b) {
        if (b.getInt(pos) != magic) {
            return -1;
        }
        int body = b.getInt(pos + 4);
        if (body < 0 || body > RecordFormat.MAX_BODY_BYTES || pos + RecordFormat.HEADER_BYTES + body > length) {
            return -1;
        }
        return b.getInt(pos + 8) == RecordFormat.crc(bytes, pos, body) ? body : -1;
    }
}
