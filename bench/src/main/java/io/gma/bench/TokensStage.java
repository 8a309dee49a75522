package io.gma.bench;

import io.gma.bench.tokens.CrossDomain;
import io.gma.bench.tokens.TokenBench;
import io.gma.bench.tokens.TokenKeys;
import io.gma.bench.tokens.VerifyCost;
import io.gma.bench.tunnel.TunnelBench;
import io.gma.security.NoDelaySocketFactory;
import io.gma.security.Security;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import okhttp3.OkHttpClient;

/**
 * Tokens, Ed25519 ({@code gma2}) against HMAC ({@code gma1}), in one run ({@link TokenBench} has the method):
 * what one check costs and what that makes per message, then the secure cross-domain round trip, TLS on every
 * hop, with each kind of token, beside the plaintext round trip and one raw POST echoed, the four taking turns.
 * The goal: the round trip with signed tokens within 10% of the one with HMAC tokens.
 */
final class TokensStage {
    static final String VERIFY = "tokens-verify";
    static final String ROUND_TRIP = "tokens-roundtrip";
    /** Messages one check serves, the x axis of {@link #VERIFY}: one POST of one message up to a long link. */
    static final int[] MESSAGES_PER_CHECK = {1, 10, 100, 1_000, 10_000, 100_000};

    private TokensStage() {
    }

    static List<Figure> run(Plan plan, Peers peers, Progress progress) throws Exception {
        Figure verify = new Figure(VERIFY, "Tokens: a check's cost per message, Ed25519 (gma2) against HMAC (gma1)",
                "messages one check serves (a link: one HELLO; a POST: one batch)", "ns a message, median pass",
                true, true, "messages_per_check", "ns_per_message", "ns_per_check", "ns_per_check_fastest_pass",
                "ns_per_check_slowest_pass", "checks");
        Figure rtt = PingPongStage.latencyFigure(ROUND_TRIP, "Tokens: secure cross-domain round trip, Ed25519 (gma2)"
                + " against HMAC (gma1)");
        progress.stage("tokens", 3 + 8 + 1 + plan.tokenSizes().length * 5);
        progress.step("keys (keytool)");
        TokenKeys keys = TokenKeys.make();
        int pass = plan.verifyPassMillis();
        VerifyCost.Settings settings = new VerifyCost.Settings(5L * pass, pass, TokenBench.PASSES,
                Math.max(8, 3 * pass));
        OkHttpClient http = new OkHttpClient.Builder().socketFactory(NoDelaySocketFactory.INSTANCE).build();
        try {
            List<VerifyCost.Cost> costs = VerifyCost.measure(keys, settings, progress::step);
            for (VerifyCost.Cost c : costs) {
                for (int m : MESSAGES_PER_CHECK) {
                    verify.add(c.name(), m, c.nanos() / m, c.nanos(), c.minNanos(), c.maxNanos(),
                            c.operations());
                }
            }
            progress.step("starting three pairs of domains");
            try (TunnelBench.Echo echo = new TunnelBench.Echo();
                    CrossDomain plaintext = CrossDomain.start(identity -> Security.insecure());
                    CrossDomain hmac = CrossDomain.start(keys::hmac);
                    CrossDomain signed = CrossDomain.start(keys::signed)) {
                progress.step("streams east to west, " + TokenBench.STREAM_BYTES + " B");
                int n = plan.tokenStreamMessages();
                List<CrossDomain.Streamed> hmacStreams = new ArrayList<>();
                List<CrossDomain.Streamed> signedStreams = new ArrayList<>();
                TokenBench.streams(hmac, signed, n, hmacStreams, signedStreams);
                CrossDomain.Streamed h = TokenBench.medianStream(hmacStreams);
                CrossDomain.Streamed s = TokenBench.medianStream(signedStreams);
                verify.notes.add(perMessageNote(costs, h, s, n));

                List<TokenBench.Series> series = List.of(
                        new TokenBench.Series(TokenBench.RAW_POST, (size, k) -> echo.run(http, size, k)),
                        new TokenBench.Series(TokenBench.PLAINTEXT, plaintext::roundTrips),
                        new TokenBench.Series(TokenBench.HMAC, hmac::roundTrips),
                        new TokenBench.Series(TokenBench.SIGNED, signed::roundTrips));
                StringBuilder ratios = new StringBuilder("Secure round trip, Ed25519 (gma2) ÷ HMAC (gma1), goal at"
                        + " most " + TokenBench.GOAL + "x; each pass's medians' ratio beside the ratio over all"
                        + " round trips; and the JVM's CPU time a round trip (every thread; median pass), which"
                        + " the machine's other work does not inflate as it does wall time:\n\n| bytes | gma2 ÷ gma1,"
                        + " p50 | passes, lowest-highest | gma2 ÷ gma1, p99 | gma1 ÷ plaintext, p50 | gma1 ÷ raw POST,"
                        + " p50 | CPU µs a round trip: plaintext | gma1 | gma2 | gma2 ÷ gma1, CPU |\n"
                        + "|---|---|---|---|---|---|---|---|---|---|\n");
                for (int size : plan.tokenSizes()) {
                    TokenBench.Alternated a = TokenBench.alternated(series, size, plan.tokenRounds(), progress::step);
                    for (int i = 0; i < series.size(); i++) {
                        rtt.add(a.names().get(i), size, a.pct(i, 0.5), a.pct(i, 0.9), a.pct(i, 0.99),
                                a.all()[i].length);
                    }
                    double[] r = a.passRatios(3, 2);
                    ratios.append(String.format(Locale.ROOT, "| %s | %.3fx | %.3f-%.3fx | %.3fx | %.2fx | %.2fx"
                            + " | %.0f | %.0f | %.0f | %.3fx |%n", Figure.number(size), a.pct(3, 0.5) / a.pct(2, 0.5),
                            r[0], r[r.length - 1], a.pct(3, 0.99) / a.pct(2, 0.99), a.pct(2, 0.5) / a.pct(1, 0.5),
                            a.pct(2, 0.5) / a.pct(0, 0.5), a.cpu(1), a.cpu(2), a.cpu(3), a.cpu(3) / a.cpu(2)));
                }
                double[] work = TokenBench.perRoundTrip(costs);
                ratios.append(String.format(Locale.ROOT, "%nToken work a round trip (two POSTs, each a bearer on the"
                        + " sending PC servlet and an authenticate on the receiving one), from the checks above:"
                        + " %.2f µs with gma1, %.2f µs with gma2.", work[0], work[1]));
                rtt.notes.add(ratios.toString());
            }
        } finally {
            http.dispatcher().executorService().shutdown();
            http.connectionPool().evictAll();
            keys.delete();
        }
        progress.finish();
        return List.of(verify, rtt);
    }

    private static String perMessageNote(List<VerifyCost.Cost> costs, CrossDomain.Streamed hmac,
            CrossDomain.Streamed signed, int n) {
        return "What the checks cost a message, by where they happen (ns; the median passes above):\n\n"
                + TokenBench.perMessage(costs, hmac.messagesPerPost(), signed.messagesPerPost(), n)
                + String.format(Locale.ROOT, "%nThe stream: %,d messages of %,d B from east to west, a new producer"
                        + " and consumer each pass (one uplink connection each), median of %d passes taking turns:"
                        + " gma1 %,.0f messages/s in %,d POSTs, gma2 %,.0f messages/s in %,d POSTs.", n,
                        TokenBench.STREAM_BYTES, TokenBench.STREAMS, n / hmac.seconds(), hmac.posts(),
                        n / signed.seconds(), signed.posts());
    }
}
