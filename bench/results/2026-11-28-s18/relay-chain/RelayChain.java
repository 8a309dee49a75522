import io.gma.bench.pingpong.PingPongBench;
import io.gma.bench.tunnel.TunnelBench;
import io.gma.client.Producer;
import io.gma.examples.Ping;
import io.gma.examples.Pong;
import io.gma.registry.Registry;
import io.gma.security.NoDelaySocketFactory;

/**
 * A lower bound for a link between PC servlets on the endpoints' event loops: ping -> relayA -> relayB -> pong
 * and back, each relay an endpoint whose handler forwards a REQUEST (requestAsync) and answers with the reply,
 * on direct links: the hops of a cross-domain round trip (two uplink hops and one PC-to-PC hop each way) with no
 * PC servlet logic. Beside it, in the same JVM: a direct ping-pong and a raw POST echo (Jetty + OkHttp).
 */
public class RelayChain {
    static Producer relay(String registry, String label, String[] next) throws Exception {
        Producer[] self = new Producer[1];
        self[0] = Producer.builder().registry(registry).domain("lan").label(label).exactLabel(true).onMessage(m -> {
            byte[] data = m.data();
            self[0].requestAsync(next[0], data).whenComplete((reply, e) -> {
                try {
                    if (e == null) {
                        m.reply(reply);
                    }
                } catch (Exception ex) {
                    ex.printStackTrace();
                }
            });
        }).build();
        return self[0];
    }

    public static void main(String[] a) throws Exception {
        System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", "error");
        int rounds = Integer.parseInt(a.length > 0 ? a[0] : "5000");
        okhttp3.OkHttpClient http = new okhttp3.OkHttpClient.Builder().socketFactory(NoDelaySocketFactory.INSTANCE).build();
        try (Registry registry = Registry.builder().port(0).build().start();
                Producer pong = Pong.start(registry.url(), "lan", "pong");
                Producer relayB = relay(registry.url(), "relayb", new String[] {"pong@lan"});
                Producer relayA = relay(registry.url(), "relaya", new String[] {"relayb@lan"});
                Ping ping = Ping.start(registry.url(), "lan");
                TunnelBench.Echo echo = new TunnelBench.Echo()) {
            System.out.println("| bytes | raw POST p50 us | direct p50 us | relayed (3 hops each way) p50 us | p99 us | relayed / raw POST |");
            System.out.println("|---|---|---|---|---|---|");
            for (int rep = 0; rep < 3; rep++) {
                for (int size : new int[] {64, 1024}) {
                    echo.run(http, size, rounds);
                    long[] raw = echo.run(http, size, rounds);
                    ping.run("pong@lan", rounds, size, true);
                    long[] direct = ping.run("pong@lan", rounds, size, true);
                    ping.run("relaya@lan", rounds, size, true);
                    long[] relayed = ping.run("relaya@lan", rounds, size, true);
                    System.out.printf("| %d | %.1f | %.1f | %.1f | %.1f | %.2fx |%n", size, PingPongBench.pct(raw, 0.5),
                            PingPongBench.pct(direct, 0.5), PingPongBench.pct(relayed, 0.5), PingPongBench.pct(relayed, 0.99),
                            PingPongBench.pct(relayed, 0.5) / PingPongBench.pct(raw, 0.5));
                }
            }
        } finally {
            http.dispatcher().executorService().shutdown();
            http.connectionPool().evictAll();
        }
    }
}
