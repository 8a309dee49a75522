package io.gma.tables;

/**
 * Strict UTF-8 (RFC 3629: no overlong forms, no surrogates, nothing above U+10FFFF), as the wire module checks
 * names: Java's decoder would turn bad bytes into U+FFFD and its encoder a lone surrogate into '?', so that two
 * different rows would read alike. Encoding writes into the caller's array in one pass, allocating nothing;
 * decoding is checked by the wire module's {@link io.gma.wire.Utf8#firstInvalid}.
 */
final class Utf8 {
    private Utf8() {
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

    /**
     * Writes {@code chars[0, length)} at {@code at}, one byte a char, if each is ASCII; returns the offset after
     * them, or -1 at the first that is not (having written those before it).
     */
    static int encodeAscii(char[] chars, int length, byte[] out, int at) {
        for (int i = 0; i < length; i++) {
            char c = chars[i];
            if (c >= 0x80) {
                return -1;
            }
            out[at + i] = (byte) c;
        }
        return at + length;
    }

    /**
     * Writes a string in UTF-8 at {@code at}, room for 3 bytes a char given; returns the offset after it, or
     * -1 - index of its first unpaired surrogate (which has no UTF-8 form), having written some of it.
     */
    static int encode(String s, byte[] out, int at) {
        int p = at;
        int n = s.length();
        for (int i = 0; i < n; i++) {
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
            } else if (Character.isHighSurrogate(c) && i + 1 < n && Character.isLowSurrogate(s.charAt(i + 1))) {
                int cp = Character.toCodePoint(c, s.charAt(++i));
                out[p++] = (byte) (0xF0 | cp >> 18);
                out[p++] = (byte) (0x80 | cp >> 12 & 0x3F);
                out[p++] = (byte) (0x80 | cp >> 6 & 0x3F);
                out[p++] = (byte) (0x80 | cp & 0x3F);
            } else {
                return -1 - i;
            }
        }
        return p;
    }
}
