package io.gma.security;

import java.io.IOException;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Locale;
import java.util.Objects;
import java.util.function.Supplier;

/**
 * Everything one process needs to be secure on every hop, handed to each component (endpoint, PC servlet,
 * registry) by its builder: TLS, how it proves who it is, how it checks who others are, and the rules.
 *
 * <ul>
 *   <li>{@link #tls()}: null only with {@link #insecure()}. Security without TLS does not exist: a credential
 *       never crosses the network in plaintext.</li>
 *   <li>Its own credential: a token it signs for its {@link Builder#identity identity} with its
 *       {@link Builder#signingKey Ed25519 key}, one per audience (the registry, a domain, an endpoint), renewed
 *       before it expires; or one made with the domain's shared {@link Builder#keys HMAC keys}; or a token given
 *       to it ({@link Builder#token}). With mutual TLS its certificate may be enough.</li>
 *   <li>Checking others: a bearer token verified with the {@link Builder#trust trust} (public keys: format
 *       {@code gma2}, {@link SignedTokens}) or the HMAC key ring ({@code gma1}, {@link Tokens}), else the CN of
 *       a client certificate.</li>
 *   <li>{@link Rules}: default deny.</li>
 * </ul>
 */
public final class Security {
    /** The identity of every caller when authentication is off. */
    public static final String ANONYMOUS = "anonymous";
    /** The prefix of HELLO data and of the Authorization header that carry a token (protocol.md section 5). */
    public static final String BEARER = "Bearer ";
    /** The audience of tokens shown to the registry; a PC servlet's is its domain, an endpoint's its name. */
    public static final String REGISTRY_AUDIENCE = "registry";
    /**
     * What a caller is told when its token is malformed or does not verify, whichever part was altered: a
     * forger learns nothing of which part failed.
     */
    static final String NOT_VALID = "token refused: it is not a valid token of a trusted issuer";

    private static final Security INSECURE = new Security(null, null, null, null, null, null, true);

    private final Tls tls;
    private final Tokens hmac;
    private final SignedTokens signed;
    private final Credential credential;
    private final String identity;
    private final Rules rules;
    private final boolean open;

    private Security(Tls tls, Tokens hmac, SignedTokens signed, Credential credential, String identity, Rules rules,
            boolean open) {
        this.tls = tls;
        this.hmac = hmac;
        this.signed = signed;
        this.credential = credential;
        this.identity = identity;
        this.rules = rules;
        this.open = open;
    }

    /**
     * No TLS, no authentication, everything allowed: for a laptop or a test. Components that run with it log
     * a warning when they start ({@link #warning}).
     */
    public static Security insecure() {
        return INSECURE;
    }

    public static Builder builder() {
        return new Builder();
    }

    /**
     * What the command lines' security options give (gma, and the registry's and PC servlet's own jars):
     * {@code --security dir} with {@code --identity}, {@code --client-auth} (none, want or need; null: none)
     * and {@code --rules} (null: {@code dir/rules}), as {@link #fromDirectory} reads them.
     *
     * @throws IllegalArgumentException one line naming the option and the value or file that is wrong
     */
    public static Security fromOptions(Path dir, String identity, String clientAuth, Path rules) {
        Tls.ClientAuth auth;
        try {
            auth = clientAuth == null ? Tls.ClientAuth.NONE
                    : Tls.ClientAuth.valueOf(clientAuth.toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("--client-auth " + clientAuth + " is not none, want or need");
        }
        try {
            Builder b = fromDirectory(dir, identity, auth);
            if (rules != null) {
                b.rules(Rules.read(rules));
            }
            return b.build();
        } catch (IOException | RuntimeException e) {
            throw new IllegalArgumentException("--security " + dir + ": "
                    + (e instanceof NoSuchFileException ? "no file " + e.getMessage() : e.getMessage()), e);
        }
    }

    /**
     * The security of a component given none: {@link #insecure()} while it listens on this machine only (a
     * loopback address), so tests and the demo need no keys; refused when it would listen beyond, where
     * plaintext must be an explicit choice.
     *
     * @param bindHost the address the component listens on
     * @param component what it is, for the refusal ("registry", "endpoint", ...)
     * @throws IllegalStateException naming the component and the address, and the two ways on
     */
    public static Security unlessExposed(String bindHost, String component) {
        boolean loopback;
        try {
            loopback = InetAddress.getByName(bindHost).isLoopbackAddress();
        } catch (UnknownHostException e) {
            loopback = false;
        }
        if (!loopback) {
            throw new IllegalStateException(component + " would listen on " + bindHost + ", beyond this machine,"
                    + " without security: give it one (TLS and tokens, see docs/security.md), or Security.insecure()"
                    + " (--insecure) to run plaintext explicitly");
        }
        return INSECURE;
    }

    /**
     * A builder set up from a directory made by {@link Keys#make} (or laid out the same way): TLS with
     * {@code client-<identity>.p12} when there is one, else {@code server.p12}, trusting
     * {@code truststore.p12}, with the password in {@code store.pass}; tokens signed with
     * {@code <identity>.key} (without one, with the key of an issuer, a domain, that the trust lets vouch for the
     * identity: {@link Keys#vouch}) and checked with {@code trust} (reloaded when it changes), each when present;
     * HMAC tokens with {@code domain.keys} when present; the rules in {@code rules} when present (else nothing
     * is allowed). Files holding secrets that every user may read are refused.
     *
     * @throws IOException naming the file that is missing, cannot be read, or is not private
     * @throws IllegalArgumentException when the identity has no key of its own and the directory holds the keys
     *     of two issuers that may vouch for it (naming them: which one signs is the operator's choice)
     */
    public static Builder fromDirectory(Path dir, String identity, Tls.ClientAuth clientAuth) throws IOException {
        Path pass = dir.resolve("store.pass");
        KeyFiles.checkPrivate(pass);
        char[] password = Files.readString(pass, StandardCharsets.UTF_8).strip().toCharArray();
        Path own = dir.resolve("client-" + identity + ".p12");
        Path keyStore = Files.exists(own) ? own : dir.resolve("server.p12");
        Tls tls = Tls.builder().keyStore(keyStore, password).trustStore(dir.resolve("truststore.p12"), password)
                .clientAuth(clientAuth).build();
        Builder b = builder().tls(tls).identity(identity);
        Supplier<Trust> trust = Files.exists(dir.resolve(Keys.TRUST)) ? trustFile(dir.resolve(Keys.TRUST)) : null;
        SigningKey signingKey = signingKey(dir, identity, trust == null ? null : trust.get());
        if (signingKey != null) {
            b.signingKey(signingKey);
        }
        if (trust != null) {
            b.trust(trust);
        }
        if (Files.exists(dir.resolve("domain.keys"))) {
            b.keys(KeyRing.read(dir.resolve("domain.keys")));
        }
        if (Files.exists(dir.resolve("rules"))) {
            b.rules(Rules.read(dir.resolve("rules")));
        }
        return b;
    }

    /**
     * The key in {@code dir} that signs {@code identity}'s tokens: its own ({@code <identity>.key}), else the key
     * of the one issuer that {@code trust} lets vouch for it and whose key file is in {@code dir}; null: none.
     */
    static SigningKey signingKey(Path dir, String identity, Trust trust) throws IOException {
        Path own = dir.resolve(identity + ".key");
        if (Files.exists(own)) {
            return SigningKey.read(own);
        }
        if (trust == null) {
            return null;
        }
        java.util.List<String> held = trust.issuersVouchingFor(identity).stream()
                .filter(issuer -> Files.exists(dir.resolve(issuer + ".key"))).toList();
        if (held.size() > 1) {
            throw new IllegalArgumentException(identity + " has no key of its own (" + own.getFileName() + ") and"
                    + " the trust lets each of " + String.join(", ", held) + ", whose keys are here, sign for it:"
                    + " keep one of their keys in " + dir + ", or give " + identity + " a key of its own");
        }
        return held.isEmpty() ? null : SigningKey.read(dir.resolve(held.get(0) + ".key"));
    }

    /**
     * A trust file, read again when it changes (checked at most every 10 s): a rotated key's new trust takes
     * effect without a restart; a file that cannot be read keeps the previous trust, logged.
     *
     * @throws IOException if it cannot be read the first time
     */
    public static Supplier<Trust> trustFile(Path file) throws IOException {
        return trustFile(file, Duration.ofSeconds(10));
    }

    /**
     * As {@link #trustFile(Path)}, its size and modification time checked at most every {@code check}.
     *
     * @throws IllegalArgumentException if {@code check} is negative
     */
    public static Supplier<Trust> trustFile(Path file, Duration check) throws IOException {
        if (check.isNegative()) {
            throw new IllegalArgumentException("the trust file's check interval must not be negative: " + check);
        }
        return new Reloading<>(java.util.List.of(file), "trust", check) {
            @Override
            Trust load() throws IOException {
                return Trust.read(file);
            }
        };
    }

    /** TLS for every hop, or null when plaintext. */
    public Tls tls() {
        return tls;
    }

    /** Whether callers must prove who they are (and rules apply): false only when insecure. */
    public boolean authenticates() {
        return !open;
    }

    /**
     * What a component should log at WARN when it starts with this security, naming itself: null when TLS and
     * authentication are both on.
     */
    public String warning(String component) {
        return open ? component + " runs INSECURE: plaintext, no authentication, every caller may do everything"
                : null;
    }

    /**
     * The {@code Authorization} header value (also HELLO's data) that proves this side to {@code audience}, or
     * null: none. Callers send it over TLS only.
     *
     * @param audience whom it is shown to: {@link #REGISTRY_AUDIENCE}, a domain (its PC servlet), or an
     *     endpoint's name; HMAC and given tokens name no audience
     */
    public String bearer(String audience) {
        String t = credential == null ? null : credential.token(audience);
        return t == null ? null : BEARER + t;
    }

    /**
     * Refuses to show this side's credentials over plaintext: a URL that is not https, where security is on.
     *
     * @param url where a call would go
     * @param what what the call is, for the sentence ("registry URL", "domain west's URL")
     * @throws IllegalArgumentException naming the URL and why
     */
    public void requireSecureUrl(String url, String what) {
        if (!open && !url.regionMatches(true, 0, "https://", 0, 8)) {
            int scheme = url.indexOf("://");
            throw new IllegalArgumentException(what + " " + url + ": expected scheme 'https' but was "
                    + (scheme > 0 ? "'" + url.substring(0, scheme) + "'" : "none") + " (security is on: credentials"
                    + " must not cross the network in plaintext)");
        }
    }

    /** The identity this side proves, as rules see it (null: none configured). */
    public String identity() {
        return identity;
    }

    /**
     * Who the caller is: the subject of its bearer token when it sent one, else its certificate's CN.
     *
     * @param authorization the Authorization header, or HELLO's data as text; null or empty when none
     * @param certificateIdentity the CN of the caller's verified client certificate ({@link Tls#identity}), or
     *     null
     * @param audience who is asking: {@link #REGISTRY_AUDIENCE}, this PC servlet's domain, this endpoint's name;
     *     a signed token made for another is refused
     * @throws AuthException UNAUTHORIZED, with a sentence naming what was missing or refused (never which part of
     *     a token was altered)
     */
    public String authenticate(String authorization, String certificateIdentity, String audience)
            throws AuthException {
        if (open) {
            return ANONYMOUS;
        }
        if (authorization != null && !authorization.isEmpty()) {
            if (!authorization.startsWith(BEARER)) {
                throw new AuthException(AuthException.Kind.UNAUTHORIZED,
                        "credentials must be 'Bearer <token>' (PROTOCOL.md section 5)");
            }
            return verify(authorization.substring(BEARER.length()).strip(), audience);
        }
        if (certificateIdentity != null) {
            return certificateIdentity;
        }
        throw new AuthException(AuthException.Kind.UNAUTHORIZED, "no credentials: send 'Bearer <token>'"
                + (tls != null && tls.clientAuth() != Tls.ClientAuth.NONE ? " or a client certificate" : ""));
    }

    /** A token's subject, verified by the format its version names. */
    private String verify(String token, String audience) throws AuthException {
        boolean signedToken = token.startsWith(SignedTokens.VERSION + ".");
        if (!signedToken && !token.startsWith(Tokens.VERSION + ".")) {
            throw new AuthException(AuthException.Kind.UNAUTHORIZED, NOT_VALID);
        }
        if (signedToken ? signed == null : hmac == null) {
            throw new AuthException(AuthException.Kind.UNAUTHORIZED, signedToken
                    ? "signed (" + SignedTokens.VERSION + ") tokens are not accepted here (no trust file): use a"
                    + " client certificate"
                    : "HMAC (" + Tokens.VERSION + ") tokens are not accepted here (no domain keys): use a "
                    + SignedTokens.VERSION + " token or a client certificate");
        }
        try {
            return signedToken ? signed.verify(token, audience).subject() : hmac.verify(token).subject();
        } catch (TokenException e) {
            if (e.reason() == TokenException.Reason.MALFORMED || e.reason() == TokenException.Reason.BAD_SIGNATURE) {
                throw new AuthException(AuthException.Kind.UNAUTHORIZED, NOT_VALID);
            }
            throw new AuthException(AuthException.Kind.UNAUTHORIZED, "token refused (" + e.reason() + "): "
                    + e.getMessage());
        }
    }

    /**
     * @throws AuthException FORBIDDEN, naming the identity, the action and the target
     */
    public void authorize(String identity, Rules.Verb verb, String target) throws AuthException {
        if (open) {
            return;
        }
        String refused = rules.refusal(identity, verb, target);
        if (refused != null) {
            throw new AuthException(AuthException.Kind.FORBIDDEN, refused);
        }
    }

    /** Whether {@code identity} may; never throws. */
    public boolean allows(String identity, Rules.Verb verb, String target) {
        return open || rules.allows(identity, verb, target);
    }

    @Override
    public String toString() {
        if (open) {
            return "Security[insecure]";
        }
        return "Security[tls=" + tls + ", signed tokens=" + (signed != null) + ", hmac tokens=" + (hmac != null)
                + ", identity=" + identity + ", " + rules + "]";
    }

    /** This side's credential for an audience: a token, or null. */
    @FunctionalInterface
    private interface Credential {
        String token(String audience);
    }

    /**
     * Tokens this side makes for itself, one per audience (for signed tokens; HMAC tokens name none), each reused
     * until half its life has passed. At most {@value #AUDIENCES} audiences are remembered.
     */
    private static final class Minted implements Credential {
        static final int AUDIENCES = 256;
        private final java.util.function.BiFunction<String, Instant, String> make;
        private final Duration lifetime;
        private final java.util.Map<String, String> tokens = new java.util.LinkedHashMap<>(16, 0.75f, true) {
            private static final long serialVersionUID = 1L;

            @Override
            protected boolean removeEldestEntry(java.util.Map.Entry<String, String> eldest) {
                return size() > AUDIENCES;
            }
        };
        private final java.util.Map<String, Instant> renewAt = new java.util.HashMap<>();

        /** @param make a token for (audience, expiry) */
        Minted(java.util.function.BiFunction<String, Instant, String> make, Duration lifetime) {
            this.make = make;
            this.lifetime = lifetime;
        }

        @Override
        public synchronized String token(String audience) {
            Instant now = Instant.now();
            String t = tokens.get(audience);
            Instant renew = renewAt.get(audience);
            if (t == null || renew == null || !now.isBefore(renew)) {
                t = make.apply(audience, now.plus(lifetime));
                tokens.put(audience, t);
                renewAt.keySet().retainAll(tokens.keySet());
                renewAt.put(audience, now.plus(lifetime.dividedBy(2)));
            }
            return t;
        }
    }

    public static final class Builder {
        private Tls tls;
        private KeyRing keys;
        private SigningKey signingKey;
        private Supplier<Trust> trust;
        private String identity;
        private java.util.function.Function<String, String> token;
        private Rules rules;
        private Duration tokenLifetime = Duration.ofHours(1);

        private Builder() {
        }

        /** TLS for every hop: required (security without it would show credentials in plaintext). */
        public Builder tls(Tls tls) {
            this.tls = Objects.requireNonNull(tls, "tls");
            return this;
        }

        /**
         * The domain's shared HMAC keys ({@code gma1} tokens, {@link Tokens}): tokens are verified with them and,
         * without a {@link #signingKey}, this side's own are made with them. Whoever holds them can make a token
         * for anyone: for one domain whose processes trust each other, not across domains.
         */
        public Builder keys(KeyRing keys) {
            this.keys = Objects.requireNonNull(keys, "keys");
            return this;
        }

        /** This side's Ed25519 key: it signs its own tokens ({@code gma2}), one per audience. */
        public Builder signingKey(SigningKey key) {
            this.signingKey = Objects.requireNonNull(key, "key");
            return this;
        }

        /** Whose signed tokens are taken, for whom: public keys ({@link Trust}). */
        public Builder trust(Trust trust) {
            Objects.requireNonNull(trust, "trust");
            this.trust = () -> trust;
            return this;
        }

        /** As {@link #trust(Trust)}, asked for on each verification (a file reloaded: {@link #trustFile}). */
        public Builder trust(Supplier<Trust> trust) {
            this.trust = Objects.requireNonNull(trust, "trust");
            return this;
        }

        /** Who this side is: the subject of the tokens it makes (with {@link #signingKey} or {@link #keys}). */
        public Builder identity(String identity) {
            this.identity = Objects.requireNonNull(identity, "identity");
            return this;
        }

        /** A token this side shows as is (one an operator issued it), asked for on each use, whatever the audience. */
        public Builder token(Supplier<String> token) {
            Objects.requireNonNull(token, "token");
            this.token = audience -> token.get();
            return this;
        }

        /** Tokens this side shows as they are, one per audience (operator-issued), asked for on each use. */
        public Builder tokens(java.util.function.Function<String, String> forAudience) {
            this.token = Objects.requireNonNull(forAudience, "forAudience");
            return this;
        }

        /** Who may do what. Default: nothing is allowed. */
        public Builder rules(Rules rules) {
            this.rules = Objects.requireNonNull(rules, "rules");
            return this;
        }

        /** How long the tokens this side makes live (they are renewed at half). Default 1 h. */
        public Builder tokenLifetime(Duration lifetime) {
            if (lifetime.compareTo(Duration.ofSeconds(10)) < 0 || lifetime.compareTo(Duration.ofHours(24)) > 0) {
                throw new IllegalArgumentException("tokenLifetime must be 10 s to 24 h: " + lifetime);
            }
            this.tokenLifetime = lifetime;
            return this;
        }

        /**
         * @throws IllegalStateException without TLS; when there is neither a way to authenticate callers (trust,
         *     keys, client certificates asked for) nor a credential of its own (a signing key or keys with an
         *     identity, a {@link #token}, a certificate to show); or when the trust given does not let the signing
         *     key's issuer vouch for the identity (its tokens would be refused everywhere)
         */
        public Security build() {
            if (tls == null) {
                throw new IllegalStateException("security needs TLS (tls(...)): without it, credentials would cross"
                        + " the network in plaintext");
            }
            boolean certificates = tls.clientAuth() != Tls.ClientAuth.NONE;
            boolean credential = token != null || tls.hasKey() || identity != null && (signingKey != null
                    || keys != null);
            if (keys == null && trust == null && !certificates && !credential) {
                throw new IllegalStateException("security needs a way to authenticate callers (a trust file, the"
                        + " domain's keys, or client certificates: clientAuth WANT or NEED) or a credential to show"
                        + " (a signing key, a token, a certificate)");
            }
            if (signingKey != null && identity != null && trust != null
                    && !trust.get().vouches(signingKey.issuer(), identity)) {
                throw new IllegalStateException("the trust does not let issuer " + signingKey.issuer() + " vouch for"
                        + " identity " + identity + ": add " + identity + " to the subjects of its line (gma keys"
                        + " writes them), or sign with " + identity + "'s own key");
            }
            Tokens hmac = keys == null ? null : Tokens.with(keys).build();
            SignedTokens signed = trust == null ? null : SignedTokens.verifier(trust).build();
            Credential own = null;
            if (token != null) {
                own = token::apply;
            } else if (identity != null && signingKey != null) {
                SigningKey key = signingKey;
                String subject = identity;
                own = new Minted((audience, expiry) -> SignedTokens.issue(key, subject, audience, expiry),
                        tokenLifetime);
            } else if (identity != null && hmac != null) {
                String subject = identity;
                Duration lifetime = tokenLifetime;
                Minted one = new Minted((audience, expiry) -> hmac.issue(subject, lifetime), tokenLifetime);
                own = audience -> one.token(""); // an HMAC token names no audience: one serves them all
            }
            return new Security(tls, hmac, signed, own, identity, rules == null ? Rules.denyAll() : rules, false);
        }
    }
}
