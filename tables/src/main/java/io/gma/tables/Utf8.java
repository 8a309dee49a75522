package io.gma.tables;

/**
 * Strict UTF-8 (RFC 3629: no overlong forms, no surrogates, nothing above U+10FFFF), as the wire module checks
 * names: Java's decoder would turn bad bytes into U+FFFD and its encoder a lone surrogate into '?', so that two
 * different rows would read alike. Encoding writes into the caller's array, allocating nothing.
 */
final class Utf8 {
    private Utf8() {
    }

    /** The index of the first byte that starts an ill-formed sequence, or -1 when all is well-formed. */
    static int firstInvalid(byte[] b, int off, int len) {
        int end = off + len;
        int i = off;
        while (i < end) {
            int b0 = b[i] & 0xFF;
            if (b0 < 0x80) {
                i++;
                continue;
            }
            int trailing;
            int lo = 0x80;
            int hi = 0xBF;
            if (b0 >= 0xC2 && b0 <= 0xDF) {
                trailing = 1;
            } else if (b0 >= 0xE0 && b0 <= 0xEF) {
                trailing = 2;
                lo = b0 == 0xE0 ? 0xA0 : 0x80; // no overlong 3-byte forms
                hi = b0 == 0xED ? 0x9F : 0xBF; // no UTF-16 surrogates
            } else if (b0 >= 0xF0 && b0 <= 0xF4) {
                trailing = 3;
                lo = b0 == 0xF0 ? 0x90 : 0x80; // no overlong 4-byte forms
                hi = b0 == 0xF4 ? 0x8F : 0xBF; // nothing above U+10FFFF
            } else {
                return i;
            }
            if (end - i <= trailing) {
                return i;
            }
            int b1 = b[i + 1] & 0xFF;
            if (b1 < lo || b1 > hi) {
                return i;
            }
            for (int k = 2; k <= trailing; k++) {
                if ((b[i + k] & 0xC0) != 0x80) {
                    return i;
                }
            }
            i += trailing + 1;
        }
        return -1;
    }

    /**
     * The length of a string in UTF-8, or -1 - index of its first unpaired surrogate (which has no UTF-8 form).
     */
    static long encodedLength(String s) {
        long n = 0;
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c < 0x80) {
                n++;
            } else if (c < 0x800) {
                n += 2;
            } else if (!Character.isSurrogate(c)) {
                n += 3;
            } else if (Character.isHighSurrogate(c) && i + 1 < s.length()
                    && Character.isLowSurrogate(s.charAt(i + 1))) {
                n += 4;
                i++;
            } else {
                return -1 - i;
            }
        }
        return n;
    }

    /** Writes a string whose {@link #encodedLength} was checked; returns the offset after it. */
    static int encode(String s, byte[] out, int at) {
        int p = at;
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c < 0x80) {
                out[p++] = (byte) c;
            } else if (c < 0x800) {
                out[p++] = (byte) (0xC0 | c >> 6);
                out[p++] = (byte) (0x80 | c & 0x3F);
            } else if (!Character.isSurrogate(c)) {
                out[p++] = (byte) (0xE0 | c >> 12);
                out[p++] = (byte) (0x80 | c >> 6 & 0x3F);
                out[p++] = (byte) (0x80 | c & 0x3F);
            } else {
                int cp = Character.toCodePoint(c, s.charAt(++i));
                out[p++] = (byte) (0xF0 | cp >> 18);
                out[p++] = (byte) (0x80 | cp >> 12 & 0x3F);
                out[p++] = (byte) (0x80 | cp >> 6 & 0x3F);
                out[p++] = (byte) (0x80 | cp & 0x3F);
            }
        }
        return p;
    }
}
