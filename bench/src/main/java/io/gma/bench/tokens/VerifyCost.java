package io.gma.bench.tokens;

import io.gma.security.KeyRing;
import io.gma.security.Keys;
import io.gma.security.Security;
import io.gma.security.SignedTokens;
import io.gma.security.SigningKey;
import io.gma.security.Tokens;
import io.gma.security.Trust;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.function.Consumer;

/**
 * What checking a token costs, one verification at a time, on the receiving side of a POST (west checking what
 * east shows it) and on the sending side ({@link Security#bearer}, what a PC servlet adds to each POST). Plain
 * timing loops on the calling thread, no JMH: the figures must come from the same JVM and run as the secure round
 * trips they explain. Each case warms up for {@link Settings#warmUpMillis}, then the cases take turns for
 * {@link Settings#passes} passes of {@link Settings#passMillis} each (so that a change in the machine's speed
 * falls on all of them); a pass's cost is its time over its verifications, and the median pass counts.
 *
 * <ul>
 *   <li>HMAC ({@code gma1}): {@link Tokens#verify}, the same token again (there is no cache: every call checks
 *       the MAC).</li>
 *   <li>Ed25519 ({@code gma2}), uncached: a fresh verifier each pass, shown a different token each call (as many
 *       as {@link Settings#distinctTokens}, each signed by east for audience west): every call checks the
 *       signature and stores the token in the verifier's bounded cache.</li>
 *   <li>Ed25519 ({@code gma2}), cached: the same token again, as a PC servlet shows its token on every POST
 *       until it renews it at half its 1 h life: a look-up in the cache.</li>
 *   <li>Each of them end to end: {@link Security#authenticate} of a {@code Bearer} header by a Security made by
 *       {@code Security.fromDirectory} (the trust file behind its reloading supplier; uncached: a new Security
 *       each pass).</li>
 * </ul>
 */
public final class VerifyCost {
    public static final String HMAC_VERIFY = "HMAC gma1: Tokens.verify";
    public static final String HMAC_AUTHENTICATE = "HMAC gma1: Security.authenticate";
    public static final String HMAC_BEARER = "HMAC gma1: Security.bearer (sender)";
    public static final String SIGNED_VERIFY_UNCACHED = "Ed25519 gma2: SignedTokens.verify, uncached";
    public static final String SIGNED_AUTHENTICATE_UNCACHED = "Ed25519 gma2: Security.authenticate, uncached";
    public static final String SIGNED_VERIFY_CACHED = "Ed25519 gma2: SignedTokens.verify, cached";
    public static final String SIGNED_AUTHENTICATE_CACHED = "Ed25519 gma2: Security.authenticate, cached";
    public static final String SIGNED_BEARER = "Ed25519 gma2: Security.bearer (sender)";

    /** The audience every token here is made for: west's PC servlet, shown it by east's. */
    static final String AUDIENCE = "west";
    /** Verifications between two looks at the clock. */
    private static final int CHUNK = 16;

    /** Keeps results alive, so that the JIT cannot drop the work. */
    private static long sink;

    /**
     * How long to measure.
     *
     * @param warmUpMillis each case runs passes this long first, unmeasured
     * @param passMillis one measured pass of a case, at least (or until its distinct tokens run out)
     * @param passes measured passes of each case, the cases taking turns
     * @param distinctTokens the gma2 tokens an uncached pass may check, each once
     */
    public record Settings(long warmUpMillis, long passMillis, int passes, int distinctTokens) {
        public Settings {
            if (passMillis < 1 || warmUpMillis < 0 || passes < 1 || distinctTokens < 1) {
                throw new IllegalArgumentException("settings " + warmUpMillis + " ms, " + passMillis + " ms, "
                        + passes + " passes, " + distinctTokens + " tokens: all must be positive");
            }
        }
    }

    /**
     * One case's cost: the median pass's nanoseconds a verification, the fastest and slowest passes', and the
     * verifications measured in all.
     */
    public record Cost(String name, double nanos, double minNanos, double maxNanos, int passes, long operations) {
    }

    /** One pass of a case, set up outside the timing: the verification number {@code i}. */
    @FunctionalInterface
    private interface Op {
        int run(int i) throws Exception;
    }

    /** A case: how to set up a pass, and the most verifications a pass can make. */
    private record Case(String name, int limit, PassSetup setup) {
    }

    @FunctionalInterface
    private interface PassSetup {
        Op pass() throws Exception;
    }

    private VerifyCost() {
    }

    /**
     * Measures every case in the order of the constants above.
     *
     * @param step told each case's name before it warms up (for a progress bar); may do nothing
     */
    public static List<Cost> measure(TokenKeys keys, Settings s, Consumer<String> step) throws Exception {
        List<Case> cases = cases(keys, s.distinctTokens());
        long warmUp = s.warmUpMillis() * 1_000_000L;
        long pass = s.passMillis() * 1_000_000L;
        for (Case c : cases) {
            step.accept(c.name());
            long start = System.nanoTime();
            do {
                timed(c, pass);
            } while (System.nanoTime() - start < warmUp);
        }
        double[][] nanos = new double[cases.size()][s.passes()];
        long[] ops = new long[cases.size()];
        for (int p = 0; p < s.passes(); p++) {
            for (int i = 0; i < cases.size(); i++) {
                double[] r = timed(cases.get(i), pass);
                nanos[i][p] = r[0];
                ops[i] += (long) r[1];
            }
        }
        List<Cost> costs = new ArrayList<>();
        for (int i = 0; i < cases.size(); i++) {
            double[] sorted = nanos[i].clone();
            Arrays.sort(sorted);
            costs.add(new Cost(cases.get(i).name(), sorted[sorted.length / 2], sorted[0], sorted[sorted.length - 1],
                    s.passes(), ops[i]));
        }
        return costs;
    }

    /** The cost named {@code name} in {@code costs}. */
    public static Cost find(List<Cost> costs, String name) {
        return costs.stream().filter(c -> c.name().equals(name)).findFirst()
                .orElseThrow(() -> new IllegalArgumentException("no cost " + name + " was measured"));
    }

    /** One pass: nanoseconds a verification, and the verifications made. */
    private static double[] timed(Case c, long passNanos) throws Exception {
        Op op = c.setup().pass();
        long local = 0;
        int n = 0;
        long start = System.nanoTime();
        long elapsed;
        do {
            int end = Math.min(c.limit(), n + CHUNK);
            for (; n < end; n++) {
                local += op.run(n);
            }
            elapsed = System.nanoTime() - start;
        } while (elapsed < passNanos && n < c.limit());
        sink += local;
        return new double[] {(double) elapsed / n, n};
    }

    private static List<Case> cases(TokenKeys keys, int distinct) throws Exception {
        Tokens hmac = Tokens.with(KeyRing.read(keys.hmacDir().resolve("domain.keys"))).build();
        String hmacToken = hmac.issue("east", Duration.ofHours(1));
        Security hmacEast = keys.hmac("east");
        Security hmacWest = keys.hmac("west");
        String hmacBearer = hmacEast.bearer(AUDIENCE);

        Trust trust = Trust.read(keys.signedDir().resolve(Keys.TRUST));
        SigningKey east = SigningKey.read(keys.signedDir().resolve("east.key"));
        // distinct tokens: the same subject and audience, expiries a second apart (as renewals would be)
        Instant expiry = Instant.now().plus(Duration.ofHours(1));
        String[] tokens = new String[distinct];
        String[] bearers = new String[distinct];
        for (int i = 0; i < distinct; i++) {
            tokens[i] = SignedTokens.issue(east, "east", AUDIENCE, expiry.minusSeconds(i));
            bearers[i] = Security.BEARER + tokens[i];
        }
        SignedTokens cachedVerifier = SignedTokens.verifier(() -> trust).build();
        cachedVerifier.verify(tokens[0], AUDIENCE);
        Security signedEast = keys.signed("east");
        Security signedWest = keys.signed("west");
        String signedBearer = signedEast.bearer(AUDIENCE);
        signedWest.authenticate(signedBearer, null, AUDIENCE);

        int any = Integer.MAX_VALUE;
        return List.of(
                new Case(HMAC_VERIFY, any, () -> i -> hmac.verify(hmacToken).subject().length()),
                new Case(HMAC_AUTHENTICATE, any, () -> i -> hmacWest.authenticate(hmacBearer, null, AUDIENCE)
                        .length()),
                new Case(HMAC_BEARER, any, () -> i -> hmacEast.bearer(AUDIENCE).length()),
                new Case(SIGNED_VERIFY_UNCACHED, distinct, () -> {
                    SignedTokens fresh = SignedTokens.verifier(() -> trust).build();
                    return i -> fresh.verify(tokens[i], AUDIENCE).subject().length();
                }),
                new Case(SIGNED_AUTHENTICATE_UNCACHED, distinct, () -> {
                    Security fresh = keys.signed("west");
                    return i -> fresh.authenticate(bearers[i], null, AUDIENCE).length();
                }),
                new Case(SIGNED_VERIFY_CACHED, any, () -> i -> cachedVerifier.verify(tokens[0], AUDIENCE).subject()
                        .length()),
                new Case(SIGNED_AUTHENTICATE_CACHED, any, () -> i -> signedWest.authenticate(signedBearer, null,
                        AUDIENCE).length()),
                new Case(SIGNED_BEARER, any, () -> i -> signedEast.bearer(AUDIENCE).length()));
    }

    /** Markdown: a row per case, nanoseconds a verification (median pass, fastest, slowest). */
    public static String table(List<Cost> costs) {
        StringBuilder md = new StringBuilder("| what | ns a call, median pass | fastest pass | slowest pass | calls |\n"
                + "|---|---|---|---|---|\n");
        for (Cost c : costs) {
            md.append(String.format(Locale.ROOT, "| %s | %,.0f | %,.0f | %,.0f | %,d |%n", c.name(), c.nanos(),
                    c.minNanos(), c.maxNanos(), c.operations()));
        }
        return md.toString();
    }
}
