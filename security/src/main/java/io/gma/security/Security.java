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
 *   <li>{@link #tls()}: null only with {@link #insecure()} or an explicit {@link Builder#plaintext()}.</li>
 *   <li>Its own credential: a token it mints for its {@link Builder#identity identity} with the domain's
 *       keys, renewed before it expires, or a token given to it ({@link Builder#token}); with mutual TLS its
 *       certificate may be enough.</li>
 *   <li>Checking others: a bearer token verified with the key ring, else the CN of a client certificate.</li>
 *   <li>{@link Rules}: default deny.</li>
 * </ul>
 */
public final class Security {
    /** The identity of every caller when authentication is off. */
    public static final String ANONYMOUS = "anonymous";
    /** The prefix of HELLO data and of the Authorization header that carry a token (PROTOCOL.md section 5). */
    public static final String BEARER = "Bearer ";

    private static final Security INSECURE = new Security(null, null, null, null, null, true);

    private final Tls tls;
    private final Tokens verifier;
    private final Supplier<String> token;
    private final String identity;
    private final Rules rules;
    private final boolean open;

    private Security(Tls tls, Tokens verifier, Supplier<String> token, String identity, Rules rules, boolean open) {
        this.tls = tls;
        this.verifier = verifier;
        this.token = token;
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
     * {@code truststore.p12}, with the password in {@code store.pass}; tokens with {@code domain.keys} when
     * present; the rules in {@code rules} when present (else nothing is allowed).
     *
     * @throws IOException naming the file that is missing or cannot be read
     */
    public static Builder fromDirectory(Path dir, String identity, Tls.ClientAuth clientAuth) throws IOException {
        char[] password = Files.readString(dir.resolve("store.pass"), StandardCharsets.UTF_8).strip().toCharArray();
        Path own = dir.resolve("client-" + identity + ".p12");
        Tls tls = Tls.builder().keyStore(Files.exists(own) ? own : dir.resolve("server.p12"), password)
                .trustStore(dir.resolve("truststore.p12"), password).clientAuth(clientAuth).build();
        Builder b = builder().tls(tls).identity(identity);
        if (Files.exists(dir.resolve("domain.keys"))) {
            b.keys(KeyRing.read(dir.resolve("domain.keys")));
        }
        if (Files.exists(dir.resolve("rules"))) {
            b.rules(Rules.read(dir.resolve("rules")));
        }
        return b;
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
        if (open) {
            return component + " runs INSECURE: plaintext, no authentication, every caller may do everything";
        }
        if (tls == null) {
            return component + " runs without TLS: tokens and data cross the network in plaintext";
        }
        return null;
    }

    /** The {@code Authorization} header value (also HELLO's data) that proves this side, or null: none. */
    public String bearer() {
        String t = token == null ? null : token.get();
        return t == null ? null : BEARER + t;
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
     * @throws AuthException UNAUTHORIZED, with a sentence naming what was missing or refused (never which part of
     *     a secret was wrong)
     */
    public String authenticate(String authorization, String certificateIdentity) throws AuthException {
        if (open) {
            return ANONYMOUS;
        }
        if (authorization != null && !authorization.isEmpty()) {
            if (!authorization.startsWith(BEARER)) {
                throw new AuthException(AuthException.Kind.UNAUTHORIZED,
                        "credentials must be 'Bearer <token>' (PROTOCOL.md section 5)");
            }
            if (verifier == null) {
                throw new AuthException(AuthException.Kind.UNAUTHORIZED,
                        "tokens are not accepted here (no domain keys): use a client certificate");
            }
            try {
                return verifier.verify(authorization.substring(BEARER.length()).strip()).subject();
            } catch (TokenException e) {
                throw new AuthException(AuthException.Kind.UNAUTHORIZED, "token refused (" + e.reason() + "): "
                        + e.getMessage());
            }
        }
        if (certificateIdentity != null) {
            return certificateIdentity;
        }
        throw new AuthException(AuthException.Kind.UNAUTHORIZED, "no credentials: send 'Bearer <token>'"
                + (tls != null && tls.clientAuth() != Tls.ClientAuth.NONE ? " or a client certificate" : ""));
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
        return "Security[tls=" + tls + ", tokens=" + (verifier != null) + ", identity=" + identity + ", " + rules
                + "]";
    }

    /** Tokens minted with the domain's keys for one identity, each reused until half its life has passed. */
    private static final class Minted implements Supplier<String> {
        private final Tokens tokens;
        private final String subject;
        private final Duration lifetime;
        private String current;
        private Instant renewAt = Instant.MIN;

        Minted(Tokens tokens, String subject, Duration lifetime) {
            this.tokens = tokens;
            this.subject = subject;
            this.lifetime = lifetime;
        }

        @Override
        public synchronized String get() {
            Instant now = Instant.now();
            if (!now.isBefore(renewAt)) {
                current = tokens.issue(subject, lifetime);
                renewAt = now.plus(lifetime.dividedBy(2));
            }
            return current;
        }
    }

    public static final class Builder {
        private Tls tls;
        private boolean plaintext;
        private KeyRing keys;
        private String identity;
        private Supplier<String> token;
        private Rules rules;
        private Duration tokenLifetime = Duration.ofHours(1);

        private Builder() {
        }

        public Builder tls(Tls tls) {
            this.tls = Objects.requireNonNull(tls, "tls");
            return this;
        }

        /** Authentication and rules without TLS: tokens cross the network in clear. Logged at start. */
        public Builder plaintext() {
            this.plaintext = true;
            return this;
        }

        /** The domain's keys: tokens are verified with them, and this side's own are minted with them. */
        public Builder keys(KeyRing keys) {
            this.keys = Objects.requireNonNull(keys, "keys");
            return this;
        }

        /** Who this side is: the subject of the tokens it mints (with {@link #keys}). */
        public Builder identity(String identity) {
            this.identity = Objects.requireNonNull(identity, "identity");
            return this;
        }

        /** A token this side shows as is (one an operator issued it), asked for on each use. */
        public Builder token(Supplier<String> token) {
            this.token = Objects.requireNonNull(token, "token");
            return this;
        }

        /** Who may do what. Default: nothing is allowed. */
        public Builder rules(Rules rules) {
            this.rules = Objects.requireNonNull(rules, "rules");
            return this;
        }

        /** How long the tokens this side mints live (they are renewed at half). Default 1 h. */
        public Builder tokenLifetime(Duration lifetime) {
            if (lifetime.compareTo(Duration.ofSeconds(10)) < 0 || lifetime.compareTo(Duration.ofHours(24)) > 0) {
                throw new IllegalArgumentException("tokenLifetime must be 10 s to 24 h: " + lifetime);
            }
            this.tokenLifetime = lifetime;
            return this;
        }

        /**
         * @throws IllegalStateException when neither TLS nor {@link #plaintext()} is chosen, or there is neither a
         *     way to authenticate callers (keys, client certificates asked for) nor a credential of its own (a
         *     {@link #token}, a certificate to show): a client may hold only the latter
         */
        public Security build() {
            if (tls == null && !plaintext) {
                throw new IllegalStateException("security needs TLS (tls(...)) or an explicit plaintext()");
            }
            boolean certificates = tls != null && tls.clientAuth() != Tls.ClientAuth.NONE;
            boolean credential = token != null || tls != null && tls.hasKey();
            if (keys == null && !certificates && !credential) {
                throw new IllegalStateException("security needs a way to authenticate callers (the domain's keys or"
                        + " client certificates: clientAuth WANT or NEED) or a credential to show (a token, a"
                        + " certificate)");
            }
            Tokens verifier = keys == null ? null : Tokens.with(keys).build();
            Supplier<String> own = token;
            if (own == null && identity != null && verifier != null) {
                own = new Minted(verifier, identity, tokenLifetime);
            }
            return new Security(tls, verifier, own, identity, rules == null ? Rules.denyAll() : rules, false);
        }
    }
}
