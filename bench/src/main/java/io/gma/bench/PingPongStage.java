package io.gma.bench;

import static io.gma.bench.pingpong.PingPongBench.pct;

import java.util.List;

/**
 * The jGMA paper's Benchmarks 1 and 2, its Figures 4 and 5: ping-pong round trips against message size, GMA
 * blocking and non-blocking beside raw sockets, NATS request/reply and JGroups unicast, the same sizes and
 * rounds for each. Bandwidth is {@code 2 x size / median round trip}: the bytes a round trip moves, both ways.
 */
final class PingPongStage {
    static final double MIB = 1024.0 * 1024.0;

    private PingPongStage() {
    }

    static List<Figure> run(Plan plan, Peers peers, Progress progress) throws Exception {
        Figure latency = latencyFigure("fig4-pingpong-latency",
                "Figure 4: ping-pong round trip against message size");
        Figure bandwidth = new Figure("fig5-pingpong-bandwidth", "Figure 5: ping-pong bandwidth against message size",
                "message size (bytes)", "bandwidth, 2 x size / median round trip (MiB/s)", true, true, "bytes",
                "mib_per_s");
        List<Peer> series = peers.roundTrippers();
        progress.stage("fig 4-5 ping-pong", plan.latencySizes().length * series.size());
        for (int size : plan.latencySizes()) {
            for (Peer peer : series) {
                progress.step(peer.name() + ", " + size + " B");
                double p50 = roundTrips(latency, peer, size, plan.rounds(size));
                bandwidth.add(peer.name(), size, 2.0 * size / MIB / (p50 / 1e6));
            }
        }
        progress.finish();
        return List.of(latency, bandwidth);
    }

    /** A round-trip figure: x bytes, y the median in microseconds; p90, p99 and the count in the CSV. */
    static Figure latencyFigure(String id, String title) {
        return new Figure(id, title, "message size (bytes)", "round trip, median (µs)", true, true, "bytes",
                "p50_us", "p90_us", "p99_us", "rounds");
    }

    /** A warm-up pass, then n measured round trips of {@code peer} added to the figure; the median, us. */
    static double roundTrips(Figure figure, Peer peer, int size, int n) throws Exception {
        peer.roundTrips().run(size, n);
        long[] rtt = peer.roundTrips().run(size, n);
        double p50 = pct(rtt, 0.5);
        figure.add(peer.name(), size, p50, pct(rtt, 0.9), pct(rtt, 0.99), n);
        return p50;
    }
}
