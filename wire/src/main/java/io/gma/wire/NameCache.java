package io.gma.wire;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * Decodes names, remembering recent ones so that decoding the name of a known peer allocates nothing.
 * A connection carries the same few names in every message; the cache turns their decoding into a hash
 * and a compare.
 *
 * <p>Direct-mapped, fixed size: memory is bounded whatever a peer sends, and a name that collides just
 * replaces the one before. Entries are immutable and published through final fields, so the racy reads
 * and writes of the table are safe: a reader sees either a whole entry or an older one or none.
 */
final class NameCache {
    private static final int SIZE = 1024;
    private static final Entry[] TABLE = new Entry[SIZE];

    private NameCache() {
    }

    private static final class Entry {
        final byte[] bytes;
        final String name;

        Entry(byte[] bytes, String name) {
            this.bytes = bytes;
            this.name = name;
        }
    }

    /**
     * The name in {@code b[off, off+len)}, or null when those bytes are not well-formed UTF-8.
     */
    static String decode(byte[] b, int off, int len) {
        if (len == 0) {
            return "";
        }
        int hash = 0x811C9DC5;
        for (int i = off, end = off + len; i < end; i++) {
            hash = (hash ^ b[i]) * 0x01000193;
        }
        int slot = (hash ^ hash >>> 16) & SIZE - 1;
        Entry entry = TABLE[slot];
        if (entry != null && Arrays.equals(entry.bytes, 0, entry.bytes.length, b, off, off + len)) {
            return entry.name;
        }
        if (Utf8.firstInvalid(b, off, len) >= 0) {
            return null;
        }
        String name = new String(b, off, len, StandardCharsets.UTF_8);
        TABLE[slot] = new Entry(Arrays.copyOfRange(b, off, off + len), name);
        return name;
    }
}
