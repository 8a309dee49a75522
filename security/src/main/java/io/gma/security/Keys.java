package io.gma.security;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Makes what a domain needs to try GMA with security on: an Ed25519 signing key per identity and the trust file
 * that lists their public keys, and a self-signed CA with a server certificate and client certificates, with
 * the JDK's own keytool (nothing to install); rotates signing keys, and lets a domain's key sign for its
 * identities ({@link #vouch}). For trying things out; a production domain has its certificates from its own CA.
 *
 * <pre>
 *   NAME.key          an identity's signing key (a domain's PC servlet is the identity named after it)
 *   trust             every signing key's public half, and whom it vouches for (itself; a domain's key also
 *                     the identities {@link #vouch} names): public
 *   domain.keys       only when asked for ({@link #writeDomainKeys}): an HMAC secret shared by a domain
 *   store.pass        the password of every .p12 below
 *   ca.p12, ca.pem    the CA's key and certificate (keep ca.p12 away from servers)
 *   server.p12        the server's key and its chain (CN and SAN: the host names given)
 *   client-NAME.p12   an identity's key and its chain (CN = NAME, SAN: the host names given), for mutual
 *                     TLS; good for serving too, as every endpoint accepts connections
 *   truststore.p12    the CA's certificate alone, for both sides to trust
 * </pre>
 *
 * Every file that holds a secret is readable by its owner only, from its first byte, where the file system
 * allows; the trust file, ca.pem and truststore.p12 are public.
 */
public final class Keys {
    /** How long the certificates are valid, in days. */
    static final int VALIDITY_DAYS = 365;
    /** The trust file's name in a keys directory. */
    public static final String TRUST = "trust";

    private Keys() {
    }

    /**
     * Writes the files above into {@code dir} (created if need be; existing files are not overwritten).
     *
     * @param hosts the server's names and addresses (localhost, 127.0.0.1, ...); the first is its CN
     * @param clients the clients' names, one certificate each
     * @return the files written
     * @throws IOException if a file exists already, cannot be written, or keytool fails (its output in the
     *     message)
     */
    public static List<Path> make(Path dir, List<String> hosts, List<String> clients) throws IOException {
        if (hosts.isEmpty()) {
            throw new IllegalArgumentException("the server needs at least one host name or address");
        }
        Files.createDirectories(dir);
        List<Path> written = new ArrayList<>();
        byte[] pass = new byte[18];
        new SecureRandom().nextBytes(pass);
        String storePass = Base64.getUrlEncoder().withoutPadding().encodeToString(pass);
        written.add(KeyFiles.writeNew(dir.resolve("store.pass"), storePass + "\n"));

        Path ca = dir.resolve("ca.p12");
        Path caPem = dir.resolve("ca.pem");
        keytool(storePass, "-genkeypair", "-alias", "ca", "-keyalg", "EC", "-groupname", "secp256r1", "-dname",
                "CN=GMA test CA", "-ext", "bc:c", "-validity", Integer.toString(VALIDITY_DAYS), "-keystore",
                ca.toString(), "-storetype", "PKCS12");
        keytool(storePass, "-exportcert", "-rfc", "-alias", "ca", "-keystore", ca.toString(), "-file",
                caPem.toString());
        written.add(ca);
        written.add(caPem);
        Path trust = dir.resolve("truststore.p12");
        keytool(storePass, "-importcert", "-noprompt", "-alias", "ca", "-file", caPem.toString(), "-keystore",
                trust.toString(), "-storetype", "PKCS12");
        written.add(trust);

        StringBuilder san = new StringBuilder();
        for (String h : hosts) {
            san.append(san.length() == 0 ? "" : ",").append(h.matches("[0-9.]+|.*:.*") ? "ip:" : "dns:").append(h);
        }
        written.add(signed(dir, storePass, ca, caPem, "server", hosts.get(0), "serverAuth,clientAuth",
                "san=" + san));
        for (String client : clients) {
            // an identity's certificate serves both ways: an endpoint accepts connections as well as opens them
            written.add(signed(dir, storePass, ca, caPem, "client-" + client, client, "serverAuth,clientAuth",
                    "san=" + san));
        }
        for (Path p : written) {
            if (!p.equals(caPem) && !p.equals(trust)) {
                KeyFiles.restrict(p);
            }
        }
        written.addAll(addIdentities(dir, clients));
        return written;
    }

    /**
     * Gives each of {@code names} a signing key of its own ({@code NAME.key}, key id k1) and lists its public
     * half in the trust file (made if need be), vouching for itself alone.
     *
     * @return the files written
     * @throws IOException if a key file exists already, or a file cannot be written
     */
    public static List<Path> addIdentities(Path dir, List<String> names) throws IOException {
        Files.createDirectories(dir);
        Path trustFile = dir.resolve(TRUST);
        Trust trust = Files.exists(trustFile) ? Trust.read(trustFile) : Trust.of(List.of());
        List<Path> written = new ArrayList<>();
        for (String name : names) {
            SigningKey key = SigningKey.generate(name, "k1");
            written.add(KeyFiles.writeNew(dir.resolve(name + ".key"), key.toKeyFile()));
            trust = trust.with(new Trust.Key(name, key.keyId(), key.publicKey(), name, null));
        }
        if (!names.isEmpty()) {
            Files.writeString(trustFile, trust.toText(), StandardCharsets.UTF_8);
            written.add(trustFile);
        }
        return written;
    }

    /**
     * Writes {@code domain.keys}: a secret for HMAC tokens, shared by every process of one domain (whoever holds
     * it can make a token for anyone: for a domain whose processes trust each other, not across domains).
     */
    public static Path writeDomainKeys(Path dir) throws IOException {
        Files.createDirectories(dir);
        return KeyFiles.writeNew(dir.resolve("domain.keys"), KeyRing.generate("k1").toKeysFile());
    }

    /**
     * Rotates {@code issuer}'s signing key: a new key under the next key id replaces {@code ISSUER.key}, and the
     * trust file lists it (vouching for the same subjects); the issuer's older keys stay trusted for
     * {@code overlap} more (tokens they signed live at most 24 h), then are refused.
     *
     * @return the new key id
     * @throws IOException if the key file or the trust file cannot be read or written
     */
    public static String rotate(Path dir, String issuer, java.time.Duration overlap) throws IOException {
        Path keyFile = dir.resolve(issuer + ".key");
        SigningKey old = SigningKey.read(keyFile);
        Path trustFile = dir.resolve(TRUST);
        Trust trust = Trust.read(trustFile);
        String subjects = trust.keys().stream().filter(k -> k.issuer().equals(issuer) && k.keyId().equals(
                old.keyId())).map(Trust.Key::subjects).findFirst().orElse(issuer);
        int n = 2;
        while (true) {
            String candidate = "k" + n;
            if (trust.keys().stream().noneMatch(k -> k.issuer().equals(issuer) && k.keyId().equals(candidate))) {
                break;
            }
            n++;
        }
        SigningKey next = old.rotate("k" + n);
        trust = trust.with(new Trust.Key(issuer, next.keyId(), next.publicKey(), subjects, null))
                .retiring(issuer, next.keyId(), java.time.Instant.now().plus(overlap));
        // the trust first: a verifier must know the new key before any token it signs is shown
        KeyFiles.replace(trustFile, trust.toText());
        KeyFiles.replace(keyFile, next.toKeyFile());
        return next.keyId();
    }

    /**
     * Lets {@code issuer}'s keys (a domain's) sign for {@code subjects} too: each of its lines in the trust file
     * then vouches for the issuer itself and for {@code subjects}, in place of what it named; a rotation keeps
     * them. A process that is one of those identities and has no key of its own signs its tokens with the
     * issuer's key when it holds it ({@link Security#fromDirectory}).
     *
     * @param subjects identities or globs of them ({@code alice}, {@code agent-*})
     * @return the trust file
     * @throws IOException if the trust file cannot be read or written
     * @throws IllegalArgumentException if the trust holds no key of {@code issuer}, or a subject is empty or has a
     *     space, a comma or a slash
     */
    public static Path vouch(Path dir, String issuer, List<String> subjects) throws IOException {
        List<String> all = new ArrayList<>(List.of(issuer));
        for (String subject : subjects) {
            if (!subject.matches("[^\\s,/]+")) {
                // a /regex/ cannot share a line with the issuer's own name: it goes into the trust file by hand
                throw new IllegalArgumentException("\"" + subject + "\" is not an identity or a glob for " + issuer
                        + " to vouch for (no space, comma or slash)");
            }
            if (!all.contains(subject)) {
                all.add(subject);
            }
        }
        Path trustFile = dir.resolve(TRUST);
        return KeyFiles.replace(trustFile, Trust.read(trustFile).withSubjects(issuer, String.join(",", all))
                .toText());
    }

    /** Drops key {@code keyId} of {@code issuer} from the trust file now: its tokens are refused at once. */
    public static void retire(Path dir, String issuer, String keyId) throws IOException {
        Path trustFile = dir.resolve(TRUST);
        KeyFiles.replace(trustFile, Trust.read(trustFile).without(issuer, keyId).toText());
    }

    /** A key pair in NAME.p12, its certificate signed by the CA, the chain imported after it. */
    private static Path signed(Path dir, String storePass, Path ca, Path caPem, String name, String cn,
            String usage, String san) throws IOException {
        Path store = dir.resolve(name + ".p12");
        Path csr = dir.resolve(name + ".csr");
        Path pem = dir.resolve(name + ".pem");
        keytool(storePass, "-genkeypair", "-alias", name, "-keyalg", "EC", "-groupname", "secp256r1", "-dname",
                "CN=" + cn, "-validity", Integer.toString(VALIDITY_DAYS), "-keystore", store.toString(),
                "-storetype", "PKCS12");
        keytool(storePass, "-certreq", "-alias", name, "-keystore", store.toString(), "-file", csr.toString());
        List<String> gencert = new ArrayList<>(List.of("-gencert", "-rfc", "-alias", "ca", "-keystore",
                ca.toString(), "-infile", csr.toString(), "-outfile", pem.toString(), "-validity",
                Integer.toString(VALIDITY_DAYS), "-ext", "ku:c=digitalSignature,keyAgreement", "-ext", "eku=" + usage));
        if (san != null) {
            gencert.add("-ext");
            gencert.add(san);
        }
        keytool(storePass, gencert.toArray(new String[0]));
        keytool(storePass, "-importcert", "-noprompt", "-alias", "ca", "-file", caPem.toString(), "-keystore",
                store.toString());
        keytool(storePass, "-importcert", "-noprompt", "-alias", name, "-file", pem.toString(), "-keystore",
                store.toString());
        Files.delete(csr);
        Files.delete(pem);
        return store;
    }

    private static void keytool(String storePass, String... args) throws IOException {
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "keytool").toString());
        // a short-lived JVM: no JIT beyond C1, one GC thread (half the CPU of keytool's defaults)
        command.addAll(List.of("-J-XX:+UseSerialGC", "-J-XX:TieredStopAtLevel=1"));
        command.addAll(List.of(args));
        command.add("-storepass:env");
        command.add("GMA_KEYS_STOREPASS"); // never on a command line other processes can read
        ProcessBuilder pb = new ProcessBuilder(command).redirectErrorStream(true);
        pb.environment().put("GMA_KEYS_STOREPASS", storePass);
        Process p = pb.start();
        byte[] output = p.getInputStream().readAllBytes();
        try {
            if (!p.waitFor(60, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new IOException("keytool " + args[0] + " did not finish in 60 s");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            p.destroyForcibly();
            throw new IOException("interrupted while keytool " + args[0] + " ran", e);
        }
        if (p.exitValue() != 0) {
            throw new IOException("keytool " + args[0] + " failed (exit " + p.exitValue() + "): "
                    + new String(output, StandardCharsets.UTF_8).strip());
        }
    }
}
