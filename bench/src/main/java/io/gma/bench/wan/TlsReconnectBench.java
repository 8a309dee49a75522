package io.gma.bench.wan;

import io.gma.bench.tokens.TokenKeys;
import io.gma.client.Producer;
import io.gma.examples.Ping;
import io.gma.examples.Pong;
import io.gma.pcservlet.PcServer;
import io.gma.registry.Registry;
import io.gma.security.Security;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * What a reconnect across a WAN costs (issue 26: "TLS across the WAN: resumption and the handshake cost on
 * reconnect, measured"). Two PC servlets, each behind a {@link WanProxy}; a ping in west, a pong in east. After
 * warm round trips, every connection through both links is cut ({@link WanProxy#cutAll}, as a dropped link
 * does), and the next round trip is timed: its two POSTs each open a connection again (TCP, and with TLS the
 * handshake). Plaintext beside TLS 1.3 with Ed25519-signed tokens, at each one-way delay. The proxy delays the
 * bytes it carries, not TCP's own handshake (it accepts on loopback and connects on loopback): a real WAN adds a
 * round trip for TCP's handshake to every reconnect, plaintext or not.
 *
 * <p>The PC servlets' HTTP client keeps one TLS context for its life, so the JDK's client session cache offers
 * the session of the cut connection again (TLS 1.3 resumption by PSK), which spares the certificate's check and
 * signature, not a round trip: TLS 1.3's handshake takes one round trip, resumed or not.
 *
 * <pre>java -cp bench/target/gma-benchmarks.jar io.gma.bench.wan.TlsReconnectBench [reconnects [delays ms...]]</pre>
 */
public final class TlsReconnectBench {
    private static final long BITS_PER_SECOND = 100_000_000L;

    private TlsReconnectBench() {
    }

    public static void main(String[] args) throws Exception {
        System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", "warn");
        int reconnects = args.length > 0 ? Integer.parseInt(args[0]) : 20;
        int[] delays = args.length > 1 ? Arrays.stream(args, 1, args.length).mapToInt(Integer::parseInt).toArray()
                : new int[] {0, 10, 50};
        TokenKeys keys = TokenKeys.make();
        try {
            System.out.printf(Locale.ROOT, "%d reconnects a point, after 2 s of round trips; medians, ms; JDK %s%n%n",
                    reconnects, System.getProperty("java.version"));
            System.out.println("| one-way delay (ms) | plaintext: warm round trip | after a cut | cost of the"
                    + " reconnect | TLS: warm round trip | after a cut | cost of the reconnect | TLS's extra |");
            System.out.println("|---|---|---|---|---|---|---|---|");
            for (int delay : delays) {
                double[] plain = measure(delay, reconnects, id -> Security.insecure());
                double[] tls = measure(delay, reconnects, keys::signed);
                System.out.printf(Locale.ROOT, "| %d | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f |%n", delay,
                        plain[0], plain[1], plain[1] - plain[0], tls[0], tls[1], tls[1] - tls[0],
                        (tls[1] - tls[0]) - (plain[1] - plain[0]));
            }
        } finally {
            keys.delete();
        }
    }

    /** The Security of each identity. */
    @FunctionalInterface
    interface Identities {
        Security of(String identity) throws Exception;
    }

    /** The median warm round trip and the median round trip right after a cut, in ms. */
    private static double[] measure(int delayMillis, int reconnects, Identities ids) throws Exception {
        WanProxy.Link link = new WanProxy.Link(Duration.ofMillis(delayMillis), BITS_PER_SECOND);
        List<AutoCloseable> started = new ArrayList<>();
        try {
            Registry registry = keep(started, Registry.builder().port(0).security(ids.of("registry")).build()
                    .start());
            WanProxy eastLink = keep(started, WanProxy.start(link));
            WanProxy westLink = keep(started, WanProxy.start(link));
            PcServer east = keep(started, pc(registry.url(), "east", eastLink, ids.of("east")));
            PcServer west = keep(started, pc(registry.url(), "west", westLink, ids.of("west")));
            Producer pong = keep(started, Pong.start(registry.url(), "east", "pong", east.uplink(), ids.of("alice")));
            Ping ping = keep(started, Ping.start(registry.url(), "west", west.uplink(), ids.of("bob")));
            // about 2 s of warm-up (a fresh JVM's code is cold: 0 ms round trips take milliseconds at first)
            int warmCount = (int) Math.min(2_000, 2_000 / Math.max(1, 2L * delayMillis));
            ping.run(pong.name(), Math.max(20, warmCount), 64, true);
            long[] warm = ping.run(pong.name(), Math.max(20, warmCount), 64, true);
            long[] afterCut = new long[reconnects];
            for (int i = 0; i < reconnects; i++) {
                ping.run(pong.name(), 3, 64, true); // the links are up and pooled again
                eastLink.cutAll();
                westLink.cutAll();
                afterCut[i] = ping.run(pong.name(), 1, 64, true)[0];
            }
            return new double[] {median(warm) / 1e6, median(afterCut) / 1e6};
        } finally {
            for (int i = started.size() - 1; i >= 0; i--) {
                started.get(i).close();
            }
        }
    }

    /** A PC servlet that other domains reach through {@code link}: its registered URL is the link's. */
    private static PcServer pc(String registry, String domain, WanProxy link, Security security) throws Exception {
        String scheme = security.tls() != null ? "https" : "http";
        PcServer pc = PcServer.builder(domain, registry).security(security)
                .publicUrl(scheme + "://127.0.0.1:" + link.port()).start();
        link.target(pc.httpPort());
        return pc;
    }

    private static <T extends AutoCloseable> T keep(List<AutoCloseable> started, T t) {
        started.add(t);
        return t;
    }

    private static double median(long[] values) {
        long[] sorted = values.clone();
        Arrays.sort(sorted);
        return sorted[sorted.length / 2];
    }
}
