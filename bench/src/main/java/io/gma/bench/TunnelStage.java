package io.gma.bench;

import io.gma.bench.tunnel.TunnelBench;
import io.gma.client.Producer;
import io.gma.examples.Ping;
import io.gma.examples.Pong;
import io.gma.pcservlet.PcServer;
import io.gma.security.NoDelaySocketFactory;
import java.util.List;
import okhttp3.OkHttpClient;

/**
 * The jGMA paper's Benchmark 6, its Figure 7: round trips over sockets against HTTP POST through PC servlets.
 * Four series at the same sizes: raw sockets and GMA direct (one domain), a raw POST echoed by Jetty 12 to OkHttp
 * and GMA across two domains (ping in west, pong in east: two POSTs and four uplink hops a round trip). Then
 * streaming across the two domains beside the same bytes POSTed raw in bodies of 1 MiB.
 */
final class TunnelStage {
    private TunnelStage() {
    }

    static List<Figure> run(Plan plan, Peers peers, Progress progress) throws Exception {
        Figure latency = PingPongStage.latencyFigure("fig7-sockets-vs-http",
                "Figure 7: round trip over sockets against HTTP POST through PC servlets");
        Figure stream = StreamingStage.streamFigure("tunnel-streaming", "Across domains: one producer streaming"
                + " through two PC servlets", "MiB/s");
        progress.stage("fig 7 sockets vs HTTP", plan.tunnelSizes().length * 4 + plan.tunnelStreamSizes().length * 2);
        OkHttpClient http = new OkHttpClient.Builder().socketFactory(NoDelaySocketFactory.INSTANCE).build();
        String registry = peers.registry.url();
        try (PcServer east = PcServer.builder("east", registry).compression("off").start();
                PcServer west = PcServer.builder("west", registry).compression("off").start();
                Producer pong = Pong.start(registry, "east", "pong", east.uplink());
                Ping ping = Ping.start(registry, "west", west.uplink());
                TunnelBench.Echo echo = new TunnelBench.Echo()) {
            List<Peer> series = List.of(peers.raw(), peers.direct(Peers.GMA_DIRECT, true),
                    new Peer(Peers.RAW_POST, (size, n) -> echo.run(http, size, n), null),
                    new Peer(Peers.GMA_CROSS, (size, n) -> ping.run(pong.name(), n, size, true), null));
            for (int size : plan.tunnelSizes()) {
                for (Peer peer : series) {
                    progress.step(peer.name() + ", " + size + " B");
                    PingPongStage.roundTrips(latency, peer, size, plan.tunnelRounds());
                }
            }
            List<Peer> streamers = List.of(
                    new Peer(Peers.RAW_POST_BODIES, null, (size, n) -> echo.stream(http, size, n)),
                    new Peer(Peers.GMA_CROSS, null, (size, n) -> TunnelBench.stream(registry, east, west, size, n)));
            for (int size : plan.tunnelStreamSizes()) {
                for (Peer peer : streamers) {
                    progress.step(peer.name() + ", " + size + " B");
                    StreamingStage.stream(stream, peer, size, plan.tunnelStreamMessages(size));
                }
            }
        } finally {
            http.dispatcher().executorService().shutdown();
            http.connectionPool().evictAll();
        }
        progress.finish();
        return List.of(latency, stream);
    }
}
