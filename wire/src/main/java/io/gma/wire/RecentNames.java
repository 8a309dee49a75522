package io.gma.wire;

import java.util.Arrays;

/**
 * The from and to names a stream decoded last. A connection repeats the same pair in nearly every message,
 * so comparing the bytes with the last pair (a vectorised compare) is all most messages cost; other names go
 * to the shared {@link NameCache}. One per stream, not thread-safe.
 */
final class RecentNames {
    private final byte[][] bytes = {new byte[0], new byte[0]};
    private final String[] names = {"", ""};

    /** The name in {@code b[off, off+len)} for field 0 (from) or 1 (to). */
    String decode(int field, byte[] b, int off, int len) throws ProtocolException {
        byte[] last = bytes[field];
        if (Arrays.equals(last, 0, last.length, b, off, off + len)) {
            return names[field];
        }
        String name = Message.decodeName(field == 0 ? "from" : "to", b, off, len);
        bytes[field] = Arrays.copyOfRange(b, off, off + len);
        names[field] = name;
        return name;
    }
}
