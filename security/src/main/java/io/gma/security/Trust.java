package io.gma.security;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.PublicKey;
import java.security.spec.X509EncodedKeySpec;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Objects;

/**
 * Whom a verifier trusts to sign tokens, and for whom: public keys only, so a verifier cannot mint a token for
 * anyone. Distributed like a CA certificate: one file, the same on every registry, PC servlet and endpoint that
 * checks tokens; domains that trust each other concatenate theirs.
 *
 * <pre>
 * # issuer  key id  public key (Base64, X.509)   subjects it vouches for   until (optional)
 * east      k1      MCowBQYDK2VwAyEA...          east                      until=2026-11-26T10:00:00Z
 * east      k2      MCowBQYDK2VwAyEA...          east
 * alice     k1      MCowBQYDK2VwAyEA...          alice
 * cardiff   k1      MCowBQYDK2VwAyEA...          cardiff,agent-*
 * </pre>
 *
 * <p>A token signed by an issuer's key is taken only for a subject its line names (a glob, a comma-separated
 * list of them, or {@code /regex/}, as in rules): west's key cannot vouch for east or for alice. A key with
 * {@code until} is refused after that instant: the end of a rotation's overlap. Immutable.
 */
public final class Trust {
    /** One issuer's key: who signs with it, under which id, and for which subjects, until when (null: always). */
    public record Key(String issuer, String keyId, PublicKey publicKey, String subjects, Instant until) {
        public Key {
            SigningKey.checkIssuer(issuer);
            KeyRing.checkId(keyId);
            Objects.requireNonNull(publicKey, "publicKey");
            NamePattern.parse(subjects, "subjects of " + issuer + " " + keyId);
        }

        /** Whether the key may still be used at {@code now}. */
        boolean validAt(Instant now) {
            return until == null || !now.isAfter(until);
        }
    }

    /** A key with its subjects parsed, as verification uses it. */
    record Entry(Key key, NamePattern subjects) {
    }

    private final List<Key> keys;
    private final List<Entry> entries;
    private final String origin;

    private Trust(List<Key> keys, String origin) {
        this.keys = List.copyOf(keys);
        List<Entry> parsed = new ArrayList<>();
        for (Key k : keys) {
            parsed.add(new Entry(k, NamePattern.parse(k.subjects(), origin)));
        }
        this.entries = List.copyOf(parsed);
        this.origin = origin;
    }

    /** Trust in these keys. */
    public static Trust of(List<Key> keys) {
        return new Trust(keys, "trust");
    }

    /** Reads a trust file (public: no permission check). */
    public static Trust read(Path file) throws IOException {
        return parse(Files.readString(file, StandardCharsets.UTF_8), file.getFileName().toString());
    }

    /**
     * @param origin where the text comes from, named in errors (a file name)
     * @throws IllegalArgumentException naming the line and what is wrong in it
     */
    public static Trust parse(String text, String origin) {
        List<Key> keys = new ArrayList<>();
        for (ConfigLines.Line line : ConfigLines.of(text, origin)) {
            String where = line.where();
            String[] words = line.words();
            if (words.length != 4 && words.length != 5) {
                throw new IllegalArgumentException(where + ": expected 'issuer keyId publicKey subjects"
                        + " [until=instant]', got " + words.length + " words");
            }
            Instant until = null;
            if (words.length == 5) {
                if (!words[4].startsWith("until=")) {
                    throw new IllegalArgumentException(where + ": the fifth word must be until=<instant>, not \""
                            + words[4] + "\"");
                }
                try {
                    until = Instant.parse(words[4].substring("until=".length()));
                } catch (DateTimeParseException e) {
                    throw new IllegalArgumentException(where + ": \"" + words[4] + "\" is not until=<ISO-8601"
                            + " instant> (2026-11-26T10:00:00Z)");
                }
            }
            try {
                keys.add(new Key(words[0], words[1], publicKey(words[2], where), words[3], until));
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException(e.getMessage().startsWith(where) ? e.getMessage()
                        : where + ": " + e.getMessage());
            }
        }
        Trust t = new Trust(keys, origin);
        for (int i = 0; i < keys.size(); i++) {
            for (int j = 0; j < i; j++) {
                if (keys.get(i).issuer().equals(keys.get(j).issuer()) && keys.get(i).keyId().equals(keys.get(j)
                        .keyId())) {
                    throw new IllegalArgumentException(origin + ": issuer " + keys.get(i).issuer() + " has key "
                            + keys.get(i).keyId() + " twice");
                }
            }
        }
        return t;
    }

    private static PublicKey publicKey(String base64, String where) {
        try {
            return KeyFactory.getInstance(SigningKey.ALGORITHM).generatePublic(new X509EncodedKeySpec(
                    Base64.getDecoder().decode(base64)));
        } catch (GeneralSecurityException | IllegalArgumentException e) {
            throw new IllegalArgumentException(where + ": the public key is not Base64 of an X.509 Ed25519 key");
        }
    }

    /** The key {@code keyId} of {@code issuer} if it is trusted at {@code now}, else null. */
    Entry entry(String issuer, String keyId, Instant now) {
        for (Entry e : entries) {
            if (e.key().issuer().equals(issuer) && e.key().keyId().equals(keyId)) {
                return e.key().validAt(now) ? e : null;
            }
        }
        return null;
    }

    /** Whether some key of {@code issuer} vouches for {@code subject} (a check of a setup, at start). */
    public boolean vouches(String issuer, String subject) {
        for (Entry e : entries) {
            if (e.key().issuer().equals(issuer) && e.subjects().matches(subject)) {
                return true;
            }
        }
        return false;
    }

    /** The issuers, in the file's order, with a key that vouches for {@code subject}, {@code subject} itself aside. */
    List<String> issuersVouchingFor(String subject) {
        List<String> issuers = new ArrayList<>();
        for (Entry e : entries) {
            String issuer = e.key().issuer();
            if (!issuer.equals(subject) && e.subjects().matches(subject) && !issuers.contains(issuer)) {
                issuers.add(issuer);
            }
        }
        return issuers;
    }

    public List<Key> keys() {
        return keys;
    }

    /** Trust with one more key (its issuer and id must be new here). */
    public Trust with(Key key) {
        if (keys.stream().anyMatch(k -> k.issuer().equals(key.issuer()) && k.keyId().equals(key.keyId()))) {
            throw new IllegalArgumentException("issuer " + key.issuer() + " has a key " + key.keyId() + " already");
        }
        List<Key> more = new ArrayList<>(keys);
        more.add(key);
        return new Trust(more, origin);
    }

    /** Trust in which every key of {@code issuer} but {@code keep} ends at {@code until} (a rotation's overlap). */
    public Trust retiring(String issuer, String keep, Instant until) {
        List<Key> next = new ArrayList<>();
        for (Key k : keys) {
            boolean retire = k.issuer().equals(issuer) && !k.keyId().equals(keep)
                    && (k.until() == null || k.until().isAfter(until));
            next.add(retire ? new Key(k.issuer(), k.keyId(), k.publicKey(), k.subjects(), until) : k);
        }
        return new Trust(next, origin);
    }

    /**
     * Trust in which every key of {@code issuer} vouches for {@code subjects} (a pattern, as a trust line writes
     * it), in place of what it vouched for.
     *
     * @throws IllegalArgumentException if the trust holds no key of {@code issuer}, or the pattern is malformed
     */
    public Trust withSubjects(String issuer, String subjects) {
        if (keys.stream().noneMatch(k -> k.issuer().equals(issuer))) {
            throw new IllegalArgumentException("the trust holds no key of issuer " + issuer);
        }
        List<Key> next = new ArrayList<>();
        for (Key k : keys) {
            next.add(k.issuer().equals(issuer) ? new Key(issuer, k.keyId(), k.publicKey(), subjects, k.until()) : k);
        }
        return new Trust(next, origin);
    }

    /** Trust without the key {@code keyId} of {@code issuer}: its tokens are refused at once. */
    public Trust without(String issuer, String keyId) {
        List<Key> fewer = new ArrayList<>(keys);
        if (!fewer.removeIf(k -> k.issuer().equals(issuer) && k.keyId().equals(keyId))) {
            throw new IllegalArgumentException("the trust holds no key " + keyId + " of issuer " + issuer);
        }
        return new Trust(fewer, origin);
    }

    /** The trust file's text. */
    public String toText() {
        StringBuilder b = new StringBuilder(String.join("\n",
                "# GMA trust: who may sign tokens, and for whom (docs/security.md). Public keys only: distribute",
                "# it like a CA certificate, to every registry, PC servlet and endpoint that checks tokens.",
                "# issuer  key id  public key (Base64, X.509)  subjects it vouches for  [until=instant]", ""));
        for (Key k : keys) {
            b.append(k.issuer()).append(' ').append(k.keyId()).append(' ')
                    .append(Base64.getEncoder().encodeToString(k.publicKey().getEncoded())).append(' ')
                    .append(k.subjects());
            if (k.until() != null) {
                b.append(" until=").append(k.until());
            }
            b.append('\n');
        }
        return b.toString();
    }

    @Override
    public String toString() {
        return "Trust[" + origin + ", " + keys.size() + " keys]";
    }
}
