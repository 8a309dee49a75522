package io.gma.bench;

import io.gma.bench.streaming.StreamingBench;
import java.util.List;

/**
 * The jGMA paper's Benchmarks 3 and 4: one producer streaming flat out to one consumer, messages/s against message
 * size, GMA direct beside raw sockets, NATS publish/subscribe and JGroups unicast, the same sizes and counts for
 * each. Time runs from the first send to the last arrival, on connections already made; passes of as many
 * messages warm up first, for two seconds at least, and the median of three measured passes counts.
 */
final class StreamingStage {
    private StreamingStage() {
    }

    static List<Figure> run(Plan plan, Peers peers, Progress progress) throws Exception {
        Figure figure = streamFigure("bench3-4-streaming", "Benchmarks 3 and 4: one producer streaming to one"
                + " consumer", "messages/s");
        List<Peer> series = peers.streamers();
        progress.stage("bench 3-4 streaming", plan.streamSizes().length * series.size());
        for (int size : plan.streamSizes()) {
            for (Peer peer : series) {
                progress.step(peer.name() + ", " + size + " B");
                stream(figure, peer, size, plan.streamMessages(size));
            }
        }
        progress.finish();
        return List.of(figure);
    }

    /** A streaming figure: x bytes, y messages/s (or MiB/s when {@code y} says so); both in the CSV. */
    static Figure streamFigure(String id, String title, String y) {
        boolean mib = y.startsWith("MiB");
        return new Figure(id, title, "message size (bytes)", y, true, true, "bytes", mib ? "mib_per_s" : "msgs_per_s",
                mib ? "msgs_per_s" : "mib_per_s", "messages");
    }

    /**
     * Warm-up passes for two seconds at least, then three measured passes of n messages: their median is added
     * to the figure.
     */
    static void stream(Figure figure, Peer peer, int size, int n) throws Exception {
        double seconds = StreamingBench.afterWarmUp(() -> peer.stream().seconds(size, n));
        double rate = n / seconds;
        double mib = rate * size / PingPongStage.MIB;
        boolean mibFirst = figure.columns.get(1).equals("mib_per_s");
        figure.add(peer.name(), size, mibFirst ? mib : rate, mibFirst ? rate : mib, n);
    }
}
