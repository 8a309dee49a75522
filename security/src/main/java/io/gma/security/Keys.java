package io.gma.security;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Makes what a domain needs to try GMA with security on: its shared secret and a self-signed CA with a server
 * certificate and client certificates, with the JDK's own keytool (nothing to install). For trying things
 * out; a production domain has its certificates from its own CA.
 *
 * <pre>
 *   domain.keys       the domain's token secret (a KeyRing's keys file)
 *   store.pass        the password of every .p12 below
 *   ca.p12, ca.pem    the CA's key and certificate (keep ca.p12 away from servers)
 *   server.p12        the server's key and its chain (CN and SAN: the host names given)
 *   client-NAME.p12   an identity's key and its chain (CN = NAME, SAN: the host names given), for mutual
 *                     TLS; good for serving too, as every endpoint accepts connections
 *   truststore.p12    the CA's certificate alone, for both sides to trust
 * </pre>
 *
 * Every file is readable by its owner only where the file system allows.
 */
public final class Keys {
    /** How long the certificates are valid, in days. */
    static final int VALIDITY_DAYS = 365;

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
        written.add(privately(dir.resolve("store.pass"), storePass + "\n"));
        written.add(privately(dir.resolve("domain.keys"), KeyRing.generate("k1").toKeysFile()));

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
            ownerOnly(p);
        }
        return written;
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

    private static Path privately(Path file, String text) throws IOException {
        if (Files.exists(file)) {
            throw new IOException(file + " exists already: not overwritten");
        }
        Files.writeString(file, text, StandardCharsets.UTF_8);
        ownerOnly(file);
        return file;
    }

    private static void ownerOnly(Path file) throws IOException {
        try {
            Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-------"));
        } catch (UnsupportedOperationException notPosix) {
            // a file system without POSIX permissions: its own defaults apply
        }
    }
}
