package io.gma.security;

import java.io.IOException;
import java.io.StringReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.PrivateKey;
import java.security.PublicKey;
import java.security.Signature;
import java.security.spec.PKCS8EncodedKeySpec;
import java.security.spec.X509EncodedKeySpec;
import java.util.Base64;
import java.util.Objects;
import java.util.Properties;
import java.util.regex.Pattern;

/**
 * The Ed25519 private key an issuer (a domain, or an identity) signs its tokens with, under a key id. Its
 * public half goes into every verifier's {@link Trust}; the private half stays in one file, readable by its
 * owner only.
 *
 * <pre>
 * # a key file (Java properties)
 * issuer = east
 * current = k2
 * k2.private = MC4CAQAwBQYDK2VwBCIEI...   (Base64 of the PKCS#8 encoding)
 * k2.public = MCowBQYDK2VwAyEA...         (Base64 of the X.509 SubjectPublicKeyInfo)
 * </pre>
 *
 * Rotation ({@link #rotate}) makes a new key under a new id; the old private key is not kept, since nothing
 * signs with it again, while its public half stays in the trust file until the overlap ends. Immutable. The
 * private key never appears in {@link #toString()} or in an exception's text.
 */
public final class SigningKey {
    static final String ALGORITHM = "Ed25519";
    /** Issuers: a domain or an identity, as rules name them. */
    static final Pattern ISSUER = Pattern.compile("[A-Za-z0-9._@-]{1,128}");

    private final String issuer;
    private final String keyId;
    private final PrivateKey privateKey;
    private final PublicKey publicKey;

    private SigningKey(String issuer, String keyId, PrivateKey privateKey, PublicKey publicKey) {
        this.issuer = checkIssuer(issuer);
        this.keyId = KeyRing.checkId(keyId);
        this.privateKey = privateKey;
        this.publicKey = publicKey;
    }

    /** A new random key for {@code issuer} under {@code keyId}. */
    public static SigningKey generate(String issuer, String keyId) {
        try {
            KeyPair pair = KeyPairGenerator.getInstance(ALGORITHM).generateKeyPair();
            return new SigningKey(issuer, keyId, pair.getPrivate(), pair.getPublic());
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("this JDK has no Ed25519 (every JDK since 15 has)", e);
        }
    }

    /**
     * Reads a key file, refusing one that every user of the machine may read.
     *
     * @throws IOException if it cannot be read or is not private (the sentence says how to fix it)
     * @throws IllegalArgumentException naming the field that is missing or wrong (never showing the key)
     */
    public static SigningKey read(Path file) throws IOException {
        KeyFiles.checkPrivate(file);
        Properties p = new Properties();
        p.load(new StringReader(Files.readString(file, StandardCharsets.UTF_8)));
        String issuer = required(p, "issuer", file);
        String current = required(p, "current", file);
        if (!ISSUER.matcher(issuer).matches()) {
            throw new IllegalArgumentException(file + ": issuer \"" + issuer + "\" is not 1..128 of"
                    + " [A-Za-z0-9._@-]");
        }
        try {
            KeyRing.checkId(current);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(file + ": current " + e.getMessage());
        }
        String privateText = required(p, current + ".private", file);
        String publicText = required(p, current + ".public", file);
        PrivateKey priv;
        PublicKey pub;
        try {
            KeyFactory keys = KeyFactory.getInstance(ALGORITHM);
            priv = keys.generatePrivate(new PKCS8EncodedKeySpec(Base64.getDecoder().decode(privateText)));
            pub = keys.generatePublic(new X509EncodedKeySpec(Base64.getDecoder().decode(publicText)));
        } catch (GeneralSecurityException | IllegalArgumentException e) {
            // not echoed: the text may hold the key
            throw new IllegalArgumentException(file + ": the key " + current + " is not a Base64 Ed25519 key pair"
                    + " (PKCS#8 private, X.509 public)");
        }
        SigningKey key = new SigningKey(issuer, current, priv, pub);
        if (!key.matches()) {
            throw new IllegalArgumentException(file + ": the public key of " + current + " is not the half of its"
                    + " private key");
        }
        return key;
    }

    private static String required(Properties p, String name, Path file) {
        String v = p.getProperty(name);
        if (v == null || v.isBlank()) {
            throw new IllegalArgumentException(file + " has no \"" + name + "\" (a line \"" + name + " = ...\")");
        }
        return v.strip();
    }

    static String checkIssuer(String issuer) {
        if (issuer == null || !ISSUER.matcher(issuer).matches()) {
            throw new IllegalArgumentException("issuer \"" + issuer + "\" is not 1..128 of [A-Za-z0-9._@-]");
        }
        return issuer;
    }

    /** Whether the private key signs what the public key verifies. */
    private boolean matches() {
        byte[] probe = "gma key check".getBytes(StandardCharsets.US_ASCII);
        return verify(publicKey, probe, sign(probe));
    }

    /** The key file's text (this writes the private key: {@link KeyFiles} keeps such files private). */
    public String toKeyFile() {
        return "# GMA signing key of issuer \"" + issuer + "\": keep this file private (chmod 600); its public key"
                + " is in the trust file\nissuer = " + issuer + "\ncurrent = " + keyId + "\n" + keyId + ".private = "
                + Base64.getEncoder().encodeToString(privateKey.getEncoded()) + "\n" + keyId + ".public = "
                + publicKeyText() + "\n";
    }

    /** A new key for the same issuer under {@code newKeyId}, which must differ from this one's. */
    public SigningKey rotate(String newKeyId) {
        if (keyId.equals(newKeyId)) {
            throw new IllegalArgumentException("key " + newKeyId + " of " + issuer + " exists already: a rotation"
                    + " takes a new key id, or tokens the old key signed would stop verifying");
        }
        return generate(issuer, newKeyId);
    }

    public String issuer() {
        return issuer;
    }

    public String keyId() {
        return keyId;
    }

    public PublicKey publicKey() {
        return publicKey;
    }

    /** The public key as the trust file writes it: Base64 of its X.509 encoding. */
    public String publicKeyText() {
        return Base64.getEncoder().encodeToString(publicKey.getEncoded());
    }

    byte[] sign(byte[] data) {
        try {
            Signature s = Signature.getInstance(ALGORITHM);
            s.initSign(privateKey);
            s.update(data);
            return s.sign();
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("Ed25519 signing failed", e); // a key of this class always signs
        }
    }

    static boolean verify(PublicKey key, byte[] data, byte[] signature) {
        try {
            Signature s = Signature.getInstance(ALGORITHM);
            s.initVerify(key);
            s.update(data);
            return s.verify(signature);
        } catch (GeneralSecurityException e) {
            return false; // a signature of the wrong length, say: it does not verify
        }
    }

    /** The issuer and key id; never the private key. */
    @Override
    public String toString() {
        return "SigningKey[" + issuer + " " + keyId + "]";
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof SigningKey k && issuer.equals(k.issuer) && keyId.equals(k.keyId)
                && publicKey.equals(k.publicKey);
    }

    @Override
    public int hashCode() {
        return Objects.hash(issuer, keyId);
    }
}
