package io.gma.wire;

/**
 * The fixed header of a GMA/1 message and the checks every reader applies to it, in the order a stream
 * reveals the bytes: magic, version, command, then the lengths. Every path that reads bytes from a peer
 * (decode of an array, the stream decoder, the packed-array getters) goes through these methods.
 *
 * <pre>
 *  0      2     3       4     5     6     7        8                16           20
 * +------+-----+-------+-----+-----+-----+--------+----------------+------------+------+----+------+
 * | 'GM' | ver | cmd   | flg | F   | T   | rsvd   | sequence (u64) | D (u32)    | from | to | data |
 * +------+-----+-------+-----+-----+-----+--------+----------------+------------+------+----+------+
 *                                                                               F bytes T    D bytes
 * </pre>
 */
final class Layout {
    static final int MAGIC = 0x474D;
    static final int VERSION = 1;
    static final int HEADER_BYTES = 20;
    static final int MAX_NAME_BYTES = 255;
    /** The largest data a message can carry: its packed array must still fit a Java array. */
    static final int MAX_DATA_BYTES = Integer.MAX_VALUE - 8 - HEADER_BYTES - 2 * MAX_NAME_BYTES;
    static final int ACK_DATA_BYTES = 8;

    static final int OFF_VERSION = 2;
    static final int OFF_COMMAND = 3;
    static final int OFF_FLAGS = 4;
    static final int OFF_FROM_LENGTH = 5;
    static final int OFF_TO_LENGTH = 6;
    static final int OFF_RESERVED = 7;
    static final int OFF_SEQUENCE = 8;
    static final int OFF_DATA_LENGTH = 16;

    private Layout() {
    }

    /**
     * Checks the first {@code available} header bytes (fewer than 20 are allowed), so that a stream refuses
     * a bad magic, version or command as soon as those bytes arrive.
     */
    static void checkPrefix(byte[] b, int off, int available) throws ProtocolException {
        if (available >= 1 && b[off] != (byte) (MAGIC >>> 8)
                || available >= 2 && b[off + 1] != (byte) MAGIC) {
            int seen = available >= 2 ? u16(b, off) : (b[off] & 0xFF) << 8;
            throw new ProtocolException(ErrorCode.MALFORMED, String.format(
                    "magic 0x%04X is not 0x%04X (\"GM\"): %s", seen, MAGIC, notGma(available >= 2 ? seen : -1)));
        }
        if (available > OFF_VERSION && (b[off + OFF_VERSION] & 0xFF) != VERSION) {
            throw new ProtocolException(ErrorCode.UNSUPPORTED_VERSION, String.format(
                    "version %d is not supported (this side speaks version %d)",
                    b[off + OFF_VERSION] & 0xFF, VERSION));
        }
        if (available > OFF_COMMAND && Command.lookup(b[off + OFF_COMMAND] & 0xFF) == null) {
            throw new ProtocolException(ErrorCode.MALFORMED, String.format(
                    "command 0x%02X is reserved", b[off + OFF_COMMAND] & 0xFF));
        }
    }

    /**
     * What a stream that does not begin with the magic is, when its first two bytes tell: an HTTP server's answer
     * ("HT", a PC servlet's HTTP port given for its uplink port, say) or a TLS record (a TLS peer, this side
     * plaintext); else just not GMA.
     */
    static String notGma(int firstTwo) {
        if (firstTwo == ('H' << 8 | 'T')) {
            return "this is an HTTP server, not a GMA stream (a PC servlet's uplinks are on its --uplink-port, not"
                    + " its --http-port)";
        }
        if ((firstTwo >>> 8 == 0x15 || firstTwo >>> 8 == 0x16) && (firstTwo & 0xFF) == 0x03) {
            return "this is TLS, not a plaintext GMA stream (this side needs TLS too: --security DIR, or"
                    + " Security with TLS)";
        }
        return "this is not a GMA stream";
    }

    /**
     * Checks a whole 20-byte header against the protocol and the receiver's limit, before anything is
     * allocated for the message.
     *
     * @return the message's total length, 20 + F + T + D
     */
    static int checkHeader(byte[] b, int off, int maxDataBytes) throws ProtocolException {
        return checkHeader(b, off, maxDataBytes, false);
    }

    /**
     * As {@link #checkHeader(byte[], int, int)}; with {@code handshake}, maxDataBytes is the smaller limit of
     * a stream whose handshake is not over, and a TOO_LARGE sentence says so.
     */
    static int checkHeader(byte[] b, int off, int maxDataBytes, boolean handshake) throws ProtocolException {
        checkPrefix(b, off, HEADER_BYTES);
        Command command = Command.lookup(b[off + OFF_COMMAND] & 0xFF);
        long dataLength = u32(b, off + OFF_DATA_LENGTH);
        if (dataLength > maxDataBytes) {
            throw new ProtocolException(ErrorCode.TOO_LARGE, String.format(handshake
                    ? "dataLength %d exceeds %d, the limit until the handshake is over"
                    : "dataLength %d exceeds maxMessageBytes %d", dataLength, maxDataBytes));
        }
        int fromLength = b[off + OFF_FROM_LENGTH] & 0xFF;
        int toLength = b[off + OFF_TO_LENGTH] & 0xFF;
        checkFields(command, fromLength, toLength, (int) dataLength, ProtocolException::malformed);
        return HEADER_BYTES + fromLength + toLength + (int) dataLength;
    }

    /** Turns a broken rule into the caller's exception: MALFORMED on receipt, misuse on sending. */
    interface Refusal<X extends Exception> {
        X refuse(String sentence);
    }

    /** The per-command rules on name and data lengths; docs/protocol.md lists them. */
    static <X extends Exception> void checkFields(Command command, int fromLength, int toLength, int dataLength,
            Refusal<X> refusal) throws X {
        if (command.requiresNames()) {
            if (fromLength == 0) {
                throw refusal.refuse(command + " needs a sender name, but fromLength is 0");
            }
            if (toLength == 0) {
                throw refusal.refuse(command + " needs a destination name, but toLength is 0");
            }
        }
        if (command == Command.HELLO && toLength != 0) {
            throw refusal.refuse("HELLO must have an empty destination, but toLength is " + toLength);
        }
        if (command == Command.ACK && dataLength != ACK_DATA_BYTES) {
            throw refusal.refuse("ACK dataLength " + dataLength + " is not " + ACK_DATA_BYTES);
        }
    }

    static int u16(byte[] b, int off) {
        return (b[off] & 0xFF) << 8 | b[off + 1] & 0xFF;
    }

    static long u32(byte[] b, int off) {
        return (long) (b[off] & 0xFF) << 24 | (b[off + 1] & 0xFF) << 16 | (b[off + 2] & 0xFF) << 8
                | b[off + 3] & 0xFF;
    }

    static long u64(byte[] b, int off) {
        return u32(b, off) << 32 | u32(b, off + 4);
    }

    static void putU32(byte[] b, int off, long v) {
        b[off] = (byte) (v >>> 24);
        b[off + 1] = (byte) (v >>> 16);
        b[off + 2] = (byte) (v >>> 8);
        b[off + 3] = (byte) v;
    }

    static void putU64(byte[] b, int off, long v) {
        putU32(b, off, v >>> 32);
        putU32(b, off + 4, v);
    }
}
