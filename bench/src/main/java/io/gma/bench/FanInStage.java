package io.gma.bench;

import io.gma.bench.fanin.FanInBench;
import java.util.List;

/**
 * The jGMA paper's Benchmark 5, its Figure 6: the consumer's messages/s against the number of producers, for 8,
 * 16 and 32 KB messages, GMA beside the same fan-in over raw sockets. Producers are threads in this JVM, each an
 * endpoint (or a socket) of its own.
 */
final class FanInStage {
    private FanInStage() {
    }

    static List<Figure> run(Plan plan, Peers peers, Progress progress) throws Exception {
        Figure figure = new Figure("fig6-fanin", "Figure 6: consumer throughput against number of producers",
                "producers (threads in one JVM)", "consumer messages/s", false, false, "producers", "msgs_per_s",
                "mib_per_s", "max_queue_bytes", "queue_bound_bytes");
        progress.stage("fig 6 fan-in", plan.faninKb().length * plan.producers().length * 2);
        for (int kb : plan.faninKb()) {
            for (int producers : plan.producers()) {
                progress.step("GMA, " + producers + " x " + kb + " KB");
                FanInBench.Result r = FanInBench.gma(peers.registry.url(), producers, kb, plan.faninSeconds());
                figure.add("GMA, " + kb + " KB", producers, r.messagesPerSecond(), r.messagesPerSecond() * kb / 1024,
                        r.maxQueuedBytes(), FanInBench.QUEUE_LIMIT);
                progress.step("raw sockets, " + producers + " x " + kb + " KB");
                double raw = FanInBench.raw(producers, kb, plan.faninSeconds());
                figure.add(Peers.RAW + ", " + kb + " KB", producers, raw, raw * kb / 1024, 0, 0);
            }
        }
        progress.finish();
        return List.of(figure);
    }
}
