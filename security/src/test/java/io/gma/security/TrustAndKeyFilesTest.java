package io.gma.security;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The trust file's form, signing key files, their permissions, and rotation with {@link Keys}. */
class TrustAndKeyFilesTest {
    @TempDir
    Path dir;

    @Test
    void aTrustFileNamesTheLineAndWhatIsWrongInIt() {
        String key = SigningKey.generate("east", "k1").publicKeyText();
        assertEquals(1, Trust.parse("# comment\n\neast k1 " + key + " east,agent-*  # trailing\n", "trust").keys()
                .size());
        String[][] bad = {
            {"east k1 " + key, "trust line 1: expected 'issuer keyId publicKey subjects [until=instant]', got 3 words"},
            {"east k1 bm90IGEga2V5 east", "trust line 1: the public key is not Base64 of an X.509 Ed25519 key"},
            {"east k1 " + key + " east when=now", "trust line 1: the fifth word must be until=<instant>, not"
                    + " \"when=now\""},
            {"east k1 " + key + " east until=tomorrow", "trust line 1: \"until=tomorrow\" is not until=<ISO-8601"
                    + " instant> (2026-11-26T10:00:00Z)"},
            {"ea st", "trust line 1: expected"},
            {"east k1 " + key + " east\neast k1 " + key + " east", "trust: issuer east has key k1 twice"},
            {"east! k1 " + key + " east", "trust line 1: issuer \"east!\" is not 1..128 of [A-Za-z0-9._@-]"}};
        for (String[] b : bad) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Trust.parse(b[0],
                    "trust"), b[0]);
            assertTrue(e.getMessage().startsWith(b[1]), e.getMessage());
        }
    }

    @Test
    void keyFilesAreOwnerOnlyAndAWorldReadableOneIsRefusedWithTheFix() throws Exception {
        Path file = dir.resolve("east.key");
        SigningKey east = SigningKey.generate("east", "k1");
        KeyFiles.writeNew(file, east.toKeyFile());
        assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(file)));
        assertEquals(east, SigningKey.read(file));
        assertThrows(java.nio.file.FileAlreadyExistsException.class, () -> KeyFiles.writeNew(file, "x"));
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-r--r--"));
        IOException e = assertThrows(IOException.class, () -> SigningKey.read(file));
        assertEquals(file + " holds a secret and is readable by every user of this machine (rw-r--r--): make it"
                + " private with chmod 600 " + file, e.getMessage());
        // the same for the other secrets a --security directory holds
        Files.writeString(dir.resolve("store.pass"), "secret\n");
        Files.setPosixFilePermissions(dir.resolve("store.pass"), PosixFilePermissions.fromString("rw-rw-r--"));
        IOException pass = assertThrows(IOException.class, () -> Security.fromDirectory(dir, "east",
                Tls.ClientAuth.NONE));
        assertTrue(pass.getMessage().endsWith("chmod 600 " + dir.resolve("store.pass")), pass.getMessage());
    }

    @Test
    void aKeyFileNeverShowsItsPrivateKeyInErrorsOrToString() throws Exception {
        SigningKey east = SigningKey.generate("east", "k1");
        String text = east.toKeyFile();
        String privateLine = text.lines().filter(l -> l.startsWith("k1.private")).findFirst().orElseThrow();
        String secret = privateLine.substring(privateLine.indexOf('=') + 1).strip();
        assertFalse(east.toString().contains(secret));
        Path broken = dir.resolve("broken.key");
        KeyFiles.writeNew(broken, text.replace(secret, secret.substring(0, 20) + "!!" + secret.substring(22)));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> SigningKey.read(broken));
        assertFalse(e.getMessage().contains(secret.substring(0, 20)), e.getMessage());
        assertTrue(e.getMessage().endsWith("the key k1 is not a Base64 Ed25519 key pair (PKCS#8 private, X.509"
                + " public)"), e.getMessage());
        Path mismatched = dir.resolve("mismatched.key");
        String otherPublic = SigningKey.generate("east", "k1").publicKeyText();
        KeyFiles.writeNew(mismatched, text.replace(east.publicKeyText(), otherPublic));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> SigningKey.read(mismatched)).getMessage()
                .endsWith("the public key of k1 is not the half of its private key"));
    }

    @Test
    void rotatingAnIdentityTrustsItsNewKeyAtOnceAndItsOldOneForTheOverlap() throws Exception {
        Keys.addIdentities(dir, List.of("east", "alice"));
        SigningKey k1 = SigningKey.read(dir.resolve("east.key"));
        Instant before = Instant.now();
        assertEquals("k2", Keys.rotate(dir, "east", Duration.ofHours(25)));
        SigningKey k2 = SigningKey.read(dir.resolve("east.key"));
        assertEquals("k2", k2.keyId());
        Trust trust = Trust.read(dir.resolve("trust"));
        Trust.Key old = trust.keys().stream().filter(k -> k.issuer().equals("east") && k.keyId().equals("k1"))
                .findFirst().orElseThrow();
        assertEquals(k1.publicKey(), old.publicKey());
        assertFalse(old.until().isBefore(before.plus(Duration.ofHours(25))));
        assertTrue(trust.keys().stream().anyMatch(k -> k.keyId().equals("k2") && k.until() == null
                && k.publicKey().equals(k2.publicKey())));
        assertTrue(trust.keys().stream().anyMatch(k -> k.issuer().equals("alice") && k.until() == null),
                "other issuers untouched");
        assertEquals("k3", Keys.rotate(dir, "east", Duration.ofHours(25)));
        Keys.retire(dir, "east", "k1");
        assertTrue(Trust.read(dir.resolve("trust")).keys().stream().noneMatch(k -> k.issuer().equals("east")
                && k.keyId().equals("k1")));
        assertEquals("the trust holds no key k1 of issuer east", assertThrows(IllegalArgumentException.class,
                () -> Keys.retire(dir, "east", "k1")).getMessage());
        assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(
                dir.resolve("east.key"))));
    }

    @Test
    void aDomainsKeySignsForTheIdentitiesItVouchesForThatHaveNoKeyOfTheirOwn() throws Exception {
        Keys.addIdentities(dir, List.of("east", "west", "bob"));
        Keys.vouch(dir, "east", List.of("alice", "agent-*", "east"));
        Trust trust = Trust.read(dir.resolve(Keys.TRUST));
        assertEquals("east,alice,agent-*", trust.keys().stream().filter(k -> k.issuer().equals("east")).findFirst()
                .orElseThrow().subjects());
        SigningKey forAlice = Security.signingKey(dir, "alice", trust);
        assertEquals("east", forAlice.issuer());
        assertEquals("east", Security.signingKey(dir, "agent-7", trust).issuer());
        assertEquals("bob", Security.signingKey(dir, "bob", trust).issuer(), "an identity's own key first");
        assertEquals(null, Security.signingKey(dir, "carol", trust), "nobody here may sign for carol");
        SignedTokens verifier = SignedTokens.verifier(() -> trust).build();
        Instant inAnHour = Instant.now().plusSeconds(3600);
        assertEquals("east", verifier.verify(SignedTokens.issue(forAlice, "alice", "west", inAnHour), "west")
                .issuer());
        assertEquals(TokenException.Reason.FOREIGN_SUBJECT, assertThrows(TokenException.class, () -> verifier
                .verify(SignedTokens.issue(forAlice, "carol", "west", inAnHour), "west")).reason());

        Keys.rotate(dir, "east", Duration.ofHours(1));
        assertTrue(Trust.read(dir.resolve(Keys.TRUST)).keys().stream().filter(k -> k.issuer().equals("east"))
                .allMatch(k -> k.subjects().equals("east,alice,agent-*")), "a rotation keeps whom a key vouches for");
        Keys.vouch(dir, "west", List.of("alice"));
        IllegalArgumentException two = assertThrows(IllegalArgumentException.class, () -> Security.signingKey(dir,
                "alice", Trust.read(dir.resolve(Keys.TRUST))));
        assertEquals("alice has no key of its own (alice.key) and the trust lets each of east, west, whose keys are"
                + " here, sign for it: keep one of their keys in " + dir + ", or give alice a key of its own",
                two.getMessage());
        assertEquals("the trust holds no key of issuer north", assertThrows(IllegalArgumentException.class,
                () -> Keys.vouch(dir, "north", List.of("alice"))).getMessage());
        assertEquals("\"/agent-[0-9]+/\" is not an identity or a glob for east to vouch for (no space, comma or"
                + " slash)", assertThrows(IllegalArgumentException.class, () -> Keys.vouch(dir, "east",
                        List.of("/agent-[0-9]+/"))).getMessage());
    }

    @Test
    void aTrustFileIsReadAgainWhenItChangesAndOneThatCannotBeReadKeepsThePrevious() throws Exception {
        Keys.addIdentities(dir, List.of("east"));
        Path file = dir.resolve(Keys.TRUST);
        java.util.function.Supplier<Trust> trust = Security.trustFile(file, Duration.ZERO); // checked on each get
        Trust first = trust.get();
        assertEquals(List.of("k1"), first.keys().stream().map(Trust.Key::keyId).toList());
        assertTrue(first == trust.get(), "unchanged: not read again");
        Keys.rotate(dir, "east", Duration.ofHours(1));
        Trust rotated = trust.get();
        assertEquals(List.of("k1", "k2"), rotated.keys().stream().map(Trust.Key::keyId).toList());
        String good = Files.readString(file);
        Files.writeString(file, good.replace(" east\n", "\n")); // half a line: refused, the rotated trust stays
        assertTrue(rotated == trust.get());
        Files.writeString(file, good);
        Keys.retire(dir, "east", "k1");
        assertEquals(List.of("k2"), trust.get().keys().stream().map(Trust.Key::keyId).toList());
        assertThrows(IllegalArgumentException.class, () -> Security.trustFile(file, Duration.ofSeconds(-1)));
    }
}
