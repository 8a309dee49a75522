package io.gma.security;

import java.io.IOException;
import java.io.InputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.KeyStore;
import java.security.Principal;
import java.security.PrivateKey;
import java.security.cert.Certificate;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.security.spec.PKCS8EncodedKeySpec;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Collection;
import java.util.List;
import java.util.Objects;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.naming.InvalidNameException;
import javax.naming.ldap.LdapName;
import javax.naming.ldap.Rdn;
import javax.net.ssl.KeyManager;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLPeerUnverifiedException;
import javax.net.ssl.SSLSession;
import javax.net.ssl.SSLSocketFactory;
import javax.net.ssl.TrustManager;
import javax.net.ssl.TrustManagerFactory;
import javax.net.ssl.X509ExtendedKeyManager;
import javax.net.ssl.X509ExtendedTrustManager;
import javax.net.ssl.X509TrustManager;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The TLS side of one process: its own key and certificate chain, the CAs it trusts, and whether it asks its
 * clients for certificates. One {@link SSLContext} serves every hop (endpoint sockets, uplinks, HTTPS), with
 * TLS 1.3 preferred, 1.2 allowed, nothing older, and host names verified on every client side.
 *
 * <p>Stores are PKCS12 ({@code .p12}, {@code .pfx}) or PEM (a certificate chain and an unencrypted PKCS#8
 * key). They are read again when a file changes, checked at most every {@link Builder#reloadCheck}: new
 * handshakes use the new certificate and trust, connections already open keep theirs. A reload that fails
 * (a half-written file, a wrong password) is logged and the previous material stays in use.
 */
public final class Tls {
    private static final Logger LOG = LoggerFactory.getLogger(Tls.class);
    private static final String[] PROTOCOLS = {"TLSv1.3", "TLSv1.2"};
    /**
     * AEAD suites only, AES-128-GCM first: as safe as AES-256 for this use and about a third cheaper per byte
     * (the JDK's default order puts AES-256 first).
     */
    private static final String[] CIPHER_SUITES = {"TLS_AES_128_GCM_SHA256", "TLS_AES_256_GCM_SHA384",
        "TLS_CHACHA20_POLY1305_SHA256", "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256",
        "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256", "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384",
        "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384", "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256",
        "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256"};

    /** Whether a server asks its clients for a certificate. */
    public enum ClientAuth {
        /** It does not: clients authenticate with tokens. */
        NONE,
        /** It asks; a client without one may still authenticate with a token. */
        WANT,
        /** It requires one, from a CA it trusts (mutual TLS). */
        NEED
    }

    private final SSLContext context;
    private final ReloadingKeys keys;
    private final ReloadingTrust trust;
    private final ClientAuth clientAuth;

    private Tls(Builder b) throws IOException {
        this.clientAuth = b.clientAuth;
        this.keys = b.keySource == null ? null : new ReloadingKeys(b.keySource, b.reloadCheck);
        this.trust = new ReloadingTrust(b.trustSource, b.reloadCheck);
        try {
            context = SSLContext.getInstance("TLS");
            context.init(keys == null ? null : new KeyManager[] {keys}, new TrustManager[] {trust}, null);
        } catch (GeneralSecurityException e) {
            throw new IOException("cannot set up TLS: " + e.getMessage(), e);
        }
    }

    public static Builder builder() {
        return new Builder();
    }

    /** The context, with the reloading key and trust managers; for Jetty and OkHttp. */
    public SSLContext context() {
        return context;
    }

    public ClientAuth clientAuth() {
        return clientAuth;
    }

    /** Whether this side has a certificate of its own (a server must; a client needs one for mutual TLS). */
    public boolean hasKey() {
        return keys != null;
    }

    /** The protocols allowed, most preferred first. */
    public static String[] protocols() {
        return PROTOCOLS.clone();
    }

    /** The cipher suites allowed, most preferred first (servers choose in this order). */
    public static String[] cipherSuites() {
        return CIPHER_SUITES.clone();
    }

    /** An engine for the accepting side of a connection. */
    public SSLEngine serverEngine() {
        if (keys == null) {
            throw new IllegalStateException("a TLS server needs a key store: none is configured");
        }
        SSLEngine e = context.createSSLEngine();
        e.setUseClientMode(false);
        SSLParameters p = e.getSSLParameters();
        p.setProtocols(PROTOCOLS);
        p.setCipherSuites(CIPHER_SUITES);
        p.setUseCipherSuitesOrder(true);
        p.setNeedClientAuth(clientAuth == ClientAuth.NEED);
        if (clientAuth == ClientAuth.WANT) {
            p.setWantClientAuth(true);
        }
        e.setSSLParameters(p);
        return e;
    }

    /** An engine for the connecting side, which checks that the server's certificate names {@code host}. */
    public SSLEngine clientEngine(String host, int port) {
        SSLEngine e = context.createSSLEngine(host, port);
        e.setUseClientMode(true);
        SSLParameters p = e.getSSLParameters();
        p.setProtocols(PROTOCOLS);
        p.setCipherSuites(CIPHER_SUITES);
        p.setEndpointIdentificationAlgorithm("HTTPS");
        e.setSSLParameters(p);
        return e;
    }

    /** For HTTP clients (OkHttp) that take a socket factory and its trust manager. */
    public SSLSocketFactory socketFactory() {
        return context.getSocketFactory();
    }

    public X509TrustManager trustManager() {
        return trust;
    }

    /**
     * The identity a peer proved with its certificate: the CN of its subject, or null when it showed none.
     */
    public static String identity(SSLSession session) {
        if (session == null) {
            return null;
        }
        Certificate[] chain;
        try {
            chain = session.getPeerCertificates();
        } catch (SSLPeerUnverifiedException none) {
            return null;
        }
        return identity(chain);
    }

    /** The CN of the first certificate's subject, or null when there is none (as a servlet container gives it). */
    public static String identity(Certificate[] chain) {
        return chain != null && chain.length > 0 && chain[0] instanceof X509Certificate x ? commonName(x) : null;
    }

    static String commonName(X509Certificate cert) {
        try {
            List<Rdn> rdns = new LdapName(cert.getSubjectX500Principal().getName()).getRdns();
            for (int i = rdns.size() - 1; i >= 0; i--) { // the most specific first: "CN=alice,CN=users" is alice
                if (rdns.get(i).getType().equalsIgnoreCase("CN")) {
                    return rdns.get(i).getValue().toString();
                }
            }
        } catch (InvalidNameException e) {
            return null;
        }
        return null;
    }

    @Override
    public String toString() {
        return "Tls[key=" + (keys == null ? "none" : keys.source.describe()) + ", trust="
                + (trust.source == null ? "the JDK's CAs" : trust.source.describe())
                + ", clientAuth=" + clientAuth + "]";
    }

    // ---------------------------------------------------------------- stores

    /** Where key or trust material comes from, and how to read it. */
    private record Source(List<Path> files, char[] password, boolean pem) {
        String describe() {
            return files.size() == 1 ? files.get(0).toString() : files.toString(); // paths only: never a password
        }

        KeyStore keyStore(boolean withKey) throws IOException {
            try {
                if (!pem) {
                    KeyStore ks = KeyStore.getInstance("PKCS12");
                    try (InputStream in = Files.newInputStream(files.get(0))) {
                        ks.load(in, password);
                    }
                    return ks;
                }
                KeyStore ks = KeyStore.getInstance("PKCS12");
                ks.load(null, null);
                List<X509Certificate> certs = certificates(files.get(0));
                if (withKey) {
                    ks.setKeyEntry("key", privateKey(files.get(1)), PEM_PASSWORD, certs.toArray(new Certificate[0]));
                } else {
                    for (int i = 0; i < certs.size(); i++) {
                        ks.setCertificateEntry("ca-" + i, certs.get(i));
                    }
                }
                return ks;
            } catch (GeneralSecurityException e) {
                throw new IOException("cannot read " + describe() + ": " + e.getMessage(), e);
            } catch (IOException e) {
                // a wrong PKCS12 password comes as an IOException whose message says so
                throw new IOException("cannot read " + describe() + ": "
                        + (e.getMessage() != null ? e.getMessage() : "not a " + (pem ? "PEM file" : "PKCS12 store")),
                        e);
            }
        }
    }

    /** The password of the in-memory store a PEM key is put in; it never leaves the process. */
    private static final char[] PEM_PASSWORD = "in-memory".toCharArray();

    private static List<X509Certificate> certificates(Path pem) throws IOException, CertificateException {
        Collection<? extends Certificate> read;
        try (InputStream in = Files.newInputStream(pem)) {
            read = CertificateFactory.getInstance("X.509").generateCertificates(in);
        }
        if (read.isEmpty()) {
            throw new IOException(pem + " holds no certificate");
        }
        List<X509Certificate> certs = new ArrayList<>();
        for (Certificate c : read) {
            certs.add((X509Certificate) c);
        }
        return certs;
    }

    private static final Pattern PKCS8 = Pattern.compile(
            "-----BEGIN PRIVATE KEY-----([A-Za-z0-9+/=\\s]+)-----END PRIVATE KEY-----");

    private static PrivateKey privateKey(Path pem) throws IOException, GeneralSecurityException {
        String text = Files.readString(pem, StandardCharsets.US_ASCII);
        Matcher m = PKCS8.matcher(text);
        if (!m.find()) {
            throw new IOException(pem + " holds no unencrypted PKCS#8 key (-----BEGIN PRIVATE KEY-----); convert"
                    + " one with: openssl pkcs8 -topk8 -nocrypt -in KEY -out " + pem.getFileName());
        }
        byte[] der = Base64.getMimeDecoder().decode(m.group(1));
        PKCS8EncodedKeySpec spec = new PKCS8EncodedKeySpec(der);
        GeneralSecurityException last = null;
        for (String algorithm : new String[] {"EC", "RSA", "Ed25519", "RSASSA-PSS"}) {
            try {
                return KeyFactory.getInstance(algorithm).generatePrivate(spec);
            } catch (GeneralSecurityException e) {
                last = e;
            }
        }
        throw new IOException(pem + ": not an EC, RSA or Ed25519 key", last);
    }

    private static final class ReloadingKeys extends X509ExtendedKeyManager {
        private final Source source;
        private final Reloading<X509ExtendedKeyManager> delegate;

        ReloadingKeys(Source source, Duration check) throws IOException {
            this.source = source;
            this.delegate = new Reloading<>(source == null ? List.of() : source.files(), "TLS", check) {
                @Override
                X509ExtendedKeyManager load() throws IOException {
                    try {
                        // PKIX picks a certificate by its key usage (server or client); SunX509 ignores it
                        KeyManagerFactory f = KeyManagerFactory.getInstance("PKIX");
                        f.init(source.keyStore(true), source.pem() ? PEM_PASSWORD : source.password());
                        for (KeyManager km : f.getKeyManagers()) {
                            if (km instanceof X509ExtendedKeyManager x) {
                                return x;
                            }
                        }
                        throw new IOException("no X.509 key manager for " + source.describe());
                    } catch (GeneralSecurityException e) {
                        throw new IOException("cannot use the key in " + source.describe() + ": " + e.getMessage(), e);
                    }
                }
            };
        }

        private X509ExtendedKeyManager km() {
            return delegate.get();
        }

        @Override
        public String[] getClientAliases(String keyType, Principal[] issuers) {
            return km().getClientAliases(keyType, issuers);
        }

        @Override
        public String chooseClientAlias(String[] keyType, Principal[] issuers, Socket socket) {
            return km().chooseClientAlias(keyType, issuers, socket);
        }

        @Override
        public String chooseEngineClientAlias(String[] keyType, Principal[] issuers, SSLEngine engine) {
            return km().chooseEngineClientAlias(keyType, issuers, engine);
        }

        @Override
        public String[] getServerAliases(String keyType, Principal[] issuers) {
            return km().getServerAliases(keyType, issuers);
        }

        @Override
        public String chooseServerAlias(String keyType, Principal[] issuers, Socket socket) {
            return km().chooseServerAlias(keyType, issuers, socket);
        }

        @Override
        public String chooseEngineServerAlias(String keyType, Principal[] issuers, SSLEngine engine) {
            return km().chooseEngineServerAlias(keyType, issuers, engine);
        }

        @Override
        public X509Certificate[] getCertificateChain(String alias) {
            return km().getCertificateChain(alias);
        }

        @Override
        public PrivateKey getPrivateKey(String alias) {
            return km().getPrivateKey(alias);
        }
    }

    private static final class ReloadingTrust extends X509ExtendedTrustManager {
        private final Source source;
        private final Reloading<X509ExtendedTrustManager> delegate;

        ReloadingTrust(Source source, Duration check) throws IOException {
            this.source = source;
            this.delegate = new Reloading<>(source == null ? List.of() : source.files(), "TLS", check) {
                @Override
                X509ExtendedTrustManager load() throws IOException {
                    try {
                        TrustManagerFactory f =
                                TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
                        f.init(source == null ? null : source.keyStore(false));
                        for (TrustManager tm : f.getTrustManagers()) {
                            if (tm instanceof X509ExtendedTrustManager x) {
                                return x;
                            }
                        }
                        throw new IOException("no X.509 trust manager for " + source.describe());
                    } catch (GeneralSecurityException e) {
                        throw new IOException("cannot use the trust in " + source.describe() + ": " + e.getMessage(),
                                e);
                    }
                }
            };
        }

        private X509ExtendedTrustManager tm() {
            return delegate.get();
        }

        @Override
        public void checkClientTrusted(X509Certificate[] chain, String authType, Socket socket)
                throws CertificateException {
            tm().checkClientTrusted(chain, authType, socket);
        }

        @Override
        public void checkServerTrusted(X509Certificate[] chain, String authType, Socket socket)
                throws CertificateException {
            tm().checkServerTrusted(chain, authType, socket);
        }

        @Override
        public void checkClientTrusted(X509Certificate[] chain, String authType, SSLEngine engine)
                throws CertificateException {
            tm().checkClientTrusted(chain, authType, engine);
        }

        @Override
        public void checkServerTrusted(X509Certificate[] chain, String authType, SSLEngine engine)
                throws CertificateException {
            tm().checkServerTrusted(chain, authType, engine);
        }

        @Override
        public void checkClientTrusted(X509Certificate[] chain, String authType) throws CertificateException {
            tm().checkClientTrusted(chain, authType);
        }

        @Override
        public void checkServerTrusted(X509Certificate[] chain, String authType) throws CertificateException {
            tm().checkServerTrusted(chain, authType);
        }

        @Override
        public X509Certificate[] getAcceptedIssuers() {
            return tm().getAcceptedIssuers();
        }
    }

    // ---------------------------------------------------------------- builder

    public static final class Builder {
        private Source keySource;
        private Source trustSource;
        private ClientAuth clientAuth = ClientAuth.NONE;
        private Duration reloadCheck = Duration.ofSeconds(10);

        private Builder() {
        }

        /** This side's key and chain from a PKCS12 store, or PEM files when {@code file} ends in .pem. */
        public Builder keyStore(Path file, char[] password) {
            this.keySource = new Source(List.of(file), password.clone(), false);
            return this;
        }

        /** This side's certificate chain and its unencrypted PKCS#8 key, both PEM. */
        public Builder pem(Path certificateChain, Path privateKey) {
            this.keySource = new Source(List.of(certificateChain, privateKey), new char[0], true);
            return this;
        }

        /** The CAs trusted, from a PKCS12 store. Default: the JDK's. */
        public Builder trustStore(Path file, char[] password) {
            this.trustSource = new Source(List.of(file), password.clone(), false);
            return this;
        }

        /** The CAs trusted, from a PEM file of certificates. Default: the JDK's. */
        public Builder trustPem(Path certificates) {
            this.trustSource = new Source(List.of(certificates), new char[0], true);
            return this;
        }

        /**
         * A store given by file name: PEM when it ends in .pem (a chain, with its key in the file named like it
         * with .key), PKCS12 otherwise.
         */
        public Builder keyStoreFile(Path file, char[] password) {
            String n = file.getFileName().toString();
            if (n.endsWith(".pem")) {
                return pem(file, file.resolveSibling(n.substring(0, n.length() - 4) + ".key"));
            }
            return keyStore(file, password);
        }

        /** A trust store given by file name: PEM when it ends in .pem, PKCS12 otherwise. */
        public Builder trustStoreFile(Path file, char[] password) {
            return file.getFileName().toString().endsWith(".pem") ? trustPem(file) : trustStore(file, password);
        }

        public Builder clientAuth(ClientAuth clientAuth) {
            this.clientAuth = Objects.requireNonNull(clientAuth, "clientAuth");
            return this;
        }

        /** How often, at most, the store files are checked for changes. Default 10 s. */
        public Builder reloadCheck(Duration interval) {
            if (interval.isNegative()) {
                throw new IllegalArgumentException("reloadCheck must not be negative: " + interval);
            }
            this.reloadCheck = interval;
            return this;
        }

        /**
         * @throws IOException if a store cannot be read or used; the message names the file, never a password
         */
        public Tls build() throws IOException {
            if (clientAuth != ClientAuth.NONE && trustSource == null) {
                // the JDK's public CAs would make any publicly issued certificate an identity
                throw new IllegalStateException("client certificates (clientAuth " + clientAuth + ") need a trust"
                        + " store of the CA that issues them: trustStore(...) or trustPem(...)");
            }
            if (keySource != null) {
                // a key store, or a PEM key (the last file): a private key every user of the machine may read is
                // refused
                KeyFiles.checkPrivate(keySource.files().get(keySource.files().size() - 1));
            }
            return new Tls(this);
        }
    }
}
