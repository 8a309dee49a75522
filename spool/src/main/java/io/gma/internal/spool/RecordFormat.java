package io.gma.internal.spool;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.zip.CRC32C;

/**
 * The bytes of one record in a spool file, framed so that a reader can tell a whole, intact record from a torn
 * or damaged one, and find the next record after damage:
 *
 * <pre>
 *   offset  size  field
 *   0       4     magic: "GSP1" in a data file, "GSA1" in an acknowledgement file
 *   4       4     length N of the body, unsigned, big-endian
 *   8       4     CRC32C of the length's 4 bytes and the body's N
 *   12      N     body
 *
 *   data body: seq u64 | arrival (ms since the epoch) u64 | lane u8 | identity length u8 | identity UTF-8 |
 *              payload (the rest)
 *   acknowledgement body: seq u64, repeated
 * </pre>
 *
 * A reader checks the magic, that the length is within bounds, and the CRC; any of them wrong, it looks for the
 * next magic one byte further on.
 */
final class RecordFormat {
    static final int DATA_MAGIC = 0x47535031; // "GSP1"
    static final int ACK_MAGIC = 0x47534131; // "GSA1"
    static final int HEADER_BYTES = 12;
    /** The data body's fixed part: seq, arrival, lane, identity length. */
    static final int DATA_FIXED_BYTES = 8 + 8 + 1 + 1;
    /** The largest body a reader believes: a message of 16 MiB and its names, with room to spare. */
    static final int MAX_BODY_BYTES = 32 << 20;

    private RecordFormat() {
    }

    /**
     * A data record's size, framed.
     *
     * @throws IllegalArgumentException if the identity is over 255 bytes or the body over {@link #MAX_BODY_BYTES}
     */
    static int dataBytes(int identityLength, int payloadLength) {
        if (identityLength > 255) {
            throw new IllegalArgumentException("an identity of " + identityLength + " UTF-8 bytes exceeds the 255"
                    + " a spool keeps");
        }
        long body = (long) DATA_FIXED_BYTES + identityLength + payloadLength;
        if (body > MAX_BODY_BYTES) {
            throw new IllegalArgumentException("a record of " + body + " bytes exceeds the spool's "
                    + MAX_BODY_BYTES);
        }
        return HEADER_BYTES + (int) body;
    }

    /**
     * Writes a whole data record, framed, at {@code into}'s position (which moves past it); {@code into} has room
     * for {@link #dataBytes} of it.
     */
    static void writeData(ByteBuffer into, long seq, long arrivalMillis, byte lane, byte[] identity, byte[] payload) {
        int start = into.position();
        int body = DATA_FIXED_BYTES + identity.length + payload.length;
        into.putInt(DATA_MAGIC).putInt(body).putInt(0);
        into.putLong(seq).putLong(arrivalMillis).put(lane).put((byte) identity.length).put(identity).put(payload);
        int end = into.position();
        int limit = into.limit();
        CRC32C c = new CRC32C();
        into.position(start + 4).limit(start + 8);
        c.update(into); // the length field
        into.limit(end).position(start + HEADER_BYTES);
        c.update(into); // the body
        into.limit(limit).position(end);
        into.putInt(start + 8, (int) c.getValue());
    }

    /** A whole acknowledgement record, framed: the sequence numbers acknowledged. */
    static ByteBuffer acks(long[] seqs, int count) {
        ByteBuffer b = ByteBuffer.allocate(HEADER_BYTES + 8 * count);
        b.putInt(ACK_MAGIC).putInt(8 * count).putInt(0);
        for (int i = 0; i < count; i++) {
            b.putLong(seqs[i]);
        }
        return seal(b);
    }

    /** Writes the CRC into a framed record whose other bytes are in place; ready to write. */
    private static ByteBuffer seal(ByteBuffer b) {
        b.flip();
        b.putInt(8, crc(b.array(), 0, b.getInt(4)));
        return b;
    }

    /**
     * The CRC32C of a record's length field and body: the record's header starts at {@code at} in {@code bytes},
     * and its body is {@code bodyLength} long.
     */
    static int crc(byte[] bytes, int at, int bodyLength) {
        CRC32C c = new CRC32C();
        c.update(bytes, at + 4, 4);
        c.update(bytes, at + HEADER_BYTES, bodyLength);
        return (int) c.getValue();
    }

    /** A data record's body, read back. */
    static SpoolRecord readData(ByteBuffer body) {
        long seq = body.getLong();
        long arrival = body.getLong();
        byte lane = body.get();
        int idLength = body.get() & 0xFF;
        if (idLength > body.remaining()) {
            return null;
        }
        byte[] id = new byte[idLength];
        body.get(id);
        byte[] payload = new byte[body.remaining()];
        body.get(payload);
        return new SpoolRecord(seq, arrival, lane, new String(id, StandardCharsets.UTF_8), payload);
    }
}
