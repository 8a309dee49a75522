package io.gma.security;

import java.io.IOException;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.Arrays;
import java.util.Base64;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Properties;
import java.util.regex.Pattern;

/**
 * The secrets a domain shares, each under a key id, and the one new tokens are signed with. Rotation: add the
 * new key, make it current, and drop the old one once the tokens it signed have expired; tokens name their
 * key, so old and new verify side by side meanwhile.
 *
 * <pre>
 * # a keys file (Java properties): key id = Base64 of at least 32 random bytes; "current" names the signer
 * current = k2
 * k1 = 3q2+7w...
 * k2 = u9Fh0A...
 * </pre>
 *
 * Immutable. A secret never appears in {@link #toString()}, nor in any exception text.
 */
public final class KeyRing {
    /** The fewest secret bytes: HMAC-SHA256's own block of security. */
    public static final int MIN_SECRET_BYTES = 32;
    private static final Pattern KEY_ID = Pattern.compile("[A-Za-z0-9_-]{1,32}");
    private static final SecureRandom RANDOM = new SecureRandom();

    private final Map<String, byte[]> secrets;
    private final String current;

    private KeyRing(Map<String, byte[]> secrets, String current) {
        this.secrets = secrets;
        this.current = current;
    }

    /**
     * A ring of these secrets (copied), signing with {@code current}.
     *
     * @throws IllegalArgumentException if a key id is not 1..32 of [A-Za-z0-9_-], a secret is shorter than
     *     {@value #MIN_SECRET_BYTES} bytes, or {@code current} is not among the ids
     */
    public static KeyRing of(Map<String, byte[]> secrets, String current) {
        Map<String, byte[]> copy = new LinkedHashMap<>();
        for (Map.Entry<String, byte[]> e : secrets.entrySet()) {
            checkId(e.getKey());
            if (e.getValue().length < MIN_SECRET_BYTES) {
                throw new IllegalArgumentException("the secret of key " + e.getKey() + " is " + e.getValue().length
                        + " bytes, under the minimum of " + MIN_SECRET_BYTES);
            }
            copy.put(e.getKey(), e.getValue().clone());
        }
        if (!copy.containsKey(Objects.requireNonNull(current, "current"))) {
            throw new IllegalArgumentException("current key " + current + " is not among the keys " + copy.keySet());
        }
        return new KeyRing(Collections.unmodifiableMap(copy), current);
    }

    /** A ring of one new random secret of {@value #MIN_SECRET_BYTES} bytes under {@code id}. */
    public static KeyRing generate(String id) {
        byte[] secret = new byte[MIN_SECRET_BYTES];
        RANDOM.nextBytes(secret);
        return of(Map.of(checkId(id), secret), id);
    }

    /**
     * Reads a keys file (see the class comment), refusing one that every user of the machine may read.
     *
     * @throws IOException if it cannot be read, or is not private (the sentence says how to fix it)
     * @throws IllegalArgumentException naming the key or line that is wrong (never showing a secret)
     */
    public static KeyRing read(Path file) throws IOException {
        KeyFiles.checkPrivate(file);
        Properties p = new Properties();
        try (Reader in = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
            p.load(in);
        }
        String current = p.getProperty("current");
        if (current == null) {
            throw new IllegalArgumentException(file + " names no current key (a line \"current = <key id>\")");
        }
        Map<String, byte[]> secrets = new LinkedHashMap<>();
        for (String id : p.stringPropertyNames()) {
            if (id.equals("current")) {
                continue;
            }
            if (!KEY_ID.matcher(id).matches()) {
                // not echoed: a secret pasted without its id would be read as one
                throw new IllegalArgumentException(file + " has a key id of " + id.length() + " characters that is"
                        + " not 1..32 of [A-Za-z0-9_-] (lines are <key id> = <Base64 secret>)");
            }
            try {
                secrets.put(id, Base64.getDecoder().decode(p.getProperty(id).trim()));
            } catch (IllegalArgumentException notBase64) {
                throw new IllegalArgumentException("the secret of key " + id + " in " + file + " is not Base64");
            }
        }
        return of(secrets, current);
    }

    /** The ring as a keys file's text (this writes secrets: keep the file private). */
    public String toKeysFile() {
        StringBuilder b = new StringBuilder("# GMA domain keys: keep this file private\ncurrent = ").append(current)
                .append('\n');
        secrets.forEach((id, s) -> b.append(id).append(" = ").append(Base64.getEncoder().encodeToString(s))
                .append('\n'));
        return b.toString();
    }

    /** A ring with one more key, made current (the others still verify); its id must be new. */
    public KeyRing rotateTo(String id, byte[] secret) {
        if (secrets.containsKey(id)) {
            throw new IllegalArgumentException("key " + id + " is in the ring already: a rotation takes a new id,"
                    + " or tokens it signed would stop verifying");
        }
        Map<String, byte[]> more = new LinkedHashMap<>(secrets);
        more.put(id, secret);
        return of(more, id);
    }

    /** A ring without {@code id} (tokens it signed stop verifying); it must not be the current one. */
    public KeyRing without(String id) {
        Map<String, byte[]> fewer = new LinkedHashMap<>(secrets);
        fewer.remove(id);
        return of(fewer, current);
    }

    public String current() {
        return current;
    }

    /** The secret of a key id (a copy), or null when the ring has no such key. */
    byte[] secret(String id) {
        byte[] s = secrets.get(id);
        return s == null ? null : s.clone();
    }

    static String checkId(String id) {
        if (id == null || !KEY_ID.matcher(id).matches()) {
            throw new IllegalArgumentException("key id \"" + id + "\" is not 1..32 of [A-Za-z0-9_-]");
        }
        return id;
    }

    /** The key ids and the current one; never a secret. */
    @Override
    public String toString() {
        return "KeyRing" + secrets.keySet() + " current " + current;
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof KeyRing)) {
            return false;
        }
        KeyRing k = (KeyRing) o;
        if (!current.equals(k.current) || !secrets.keySet().equals(k.secrets.keySet())) {
            return false;
        }
        for (Map.Entry<String, byte[]> e : secrets.entrySet()) {
            if (!Arrays.equals(e.getValue(), k.secrets.get(e.getKey()))) {
                return false;
            }
        }
        return true;
    }

    @Override
    public int hashCode() {
        return Objects.hash(current, secrets.keySet());
    }
}
