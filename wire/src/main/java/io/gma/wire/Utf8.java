package io.gma.wire;

import java.nio.charset.StandardCharsets;

/**
 * Strict UTF-8 for names. Java's own decoder replaces bad input with U+FFFD and its encoder turns a lone
 * surrogate into '?', which would let two different byte strings name the same endpoint; names are
 * checked here instead and refused when they are not well-formed (RFC 3629: no overlong forms, no
 * surrogates, nothing above U+10FFFF).
 */
public final class Utf8 {
    private Utf8() {
    }

    /**
     * The index of the first byte that starts an ill-formed sequence, or -1 when all is well-formed. Public for
     * the tables module's strings, which are checked as names are.
     */
    public static int firstInvalid(byte[] b, int off, int len) {
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
     * Encodes a name, refusing a lone surrogate rather than letting it become '?'.
     *
     * @throws IllegalArgumentException naming the field and the position
     */
    static byte[] encodeName(String field, String name) {
        for (int i = 0; i < name.length(); i++) {
            char c = name.charAt(i);
            if (Character.isHighSurrogate(c) && i + 1 < name.length()
                    && Character.isLowSurrogate(name.charAt(i + 1))) {
                i++;
            } else if (Character.isSurrogate(c)) {
                throw new IllegalArgumentException(String.format(
                        "%s has an unpaired surrogate U+%04X at index %d", field, (int) c, i));
            }
        }
        byte[] bytes = name.getBytes(StandardCharsets.UTF_8);
        if (bytes.length > Layout.MAX_NAME_BYTES) {
            throw new IllegalArgumentException(String.format(
                    "%s is %d bytes in UTF-8, over the limit of %d", field, bytes.length, Layout.MAX_NAME_BYTES));
        }
        return bytes;
    }
}
