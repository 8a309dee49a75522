package io.gma.wire;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.util.Arrays;

/**
 * The from and to names a stream decoded last. A connection repeats the same pair in nearly every message,
 * so comparing the two lengths and the names' bytes (adjacent in a message), eight at a time, with the last
 * pair is all most messages cost; other names go to the shared {@link NameCache}. One per stream, not
 * thread-safe.
 */
final class RecentNames {
    /** Eight bytes of an array as one long, at any offset: names of 30-odd bytes are four compares. */
    private static final VarHandle LONGS = MethodHandles.byteArrayViewVarHandle(long[].class,
            ByteOrder.nativeOrder());

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
        if (f == fromLength && t == toLength && sameNames(packed, start)) {
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

    /** Whether {@code packed} holds the last pair's bytes from {@code start}; the caller checked the lengths. */
    private boolean sameNames(byte[] packed, int start) {
        int n = names.length;
        int i = 0;
        for (; i + Long.BYTES <= n; i += Long.BYTES) {
            if ((long) LONGS.get(names, i) != (long) LONGS.get(packed, start + i)) {
                return false;
            }
        }
        for (; i < n; i++) {
            if (names[i] != packed[start + i]) {
                return false;
            }
        }
        return true;
    }

    String from() {
        return from;
    }

    String to() {
        return to;
    }
}
