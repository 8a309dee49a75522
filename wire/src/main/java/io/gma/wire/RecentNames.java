package io.gma.wire;

import java.util.Arrays;

/**
 * The from and to names a stream decoded last. A connection repeats the same pair in nearly every message,
 * so comparing the two lengths and the names' bytes (adjacent in a message: one vectorised compare) with the
 * last pair is all most messages cost; other names go to the shared {@link NameCache}. One per stream, not
 * thread-safe.
 */
final class RecentNames {
    private int fromLength;
    private int toLength;
    /** The last pair's bytes, from then to, as they follow the header. */
    private byte[] names = new byte[0];
    private String from = "";
    private String to = "";

    /** Makes {@link #from()} and {@link #to()} the names of {@code packed}, a message whose header passed. */
    void decode(byte[] packed) throws ProtocolException {
        int f = packed[Layout.OFF_FROM_LENGTH] & 0xFF;
        int t = packed[Layout.OFF_TO_LENGTH] & 0xFF;
        int start = Layout.HEADER_BYTES;
        if (f == fromLength && t == toLength && Arrays.equals(names, 0, names.length, packed, start, start + f + t)) {
            return;
        }
        String newFrom = Message.decodeName("from", packed, start, f);
        String newTo = Message.decodeName("to", packed, start + f, t);
        names = Arrays.copyOfRange(packed, start, start + f + t);
        fromLength = f;
        toLength = t;
        from = newFrom;
        to = newTo;
    }

    String from() {
        return from;
    }

    String to() {
        return to;
    }
}
