package io.gma.bench;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.time.ZonedDateTime;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The summary judges issue 26's loopback goals from the figures of one run. */
class SummaryTest {

    @Test
    void issue26GoalsAreJudgedFromTheRunsFigures() {
        Figure fig4 = new Figure("fig4-pingpong-latency", "4", "bytes", "µs", true, true, "bytes", "p50_us");
        fig4.add(Peers.RAW, 262144, 100);
        fig4.add(Peers.GMA_BLOCKING, 262144, 125); // 1.25x: met
        fig4.add(Peers.RAW, 1048576, 100);
        fig4.add(Peers.GMA_BLOCKING, 1048576, 140); // 1.40x: not met
        Figure fig5 = new Figure("fig5-pingpong-bandwidth", "5", "bytes", "MiB/s", true, true, "bytes", "mib_per_s");
        fig5.add(Peers.RAW, 1048576, 1000);
        fig5.add(Peers.GMA_BLOCKING, 1048576, 690); // 0.69: not met
        fig5.add(Peers.GMA_NONBLOCKING, 1048576, 710); // 0.71: met
        Figure fig7 = new Figure("fig7-sockets-vs-http", "7", "bytes", "µs", true, true, "bytes", "p50_us");
        fig7.add(Peers.RAW_POST, 1024, 100);
        fig7.add(Peers.GMA_CROSS, 1024, 240); // 2.4x: met
        Figure stream = StreamingStage.streamFigure("bench3-4-streaming", "3", "messages/s");
        stream.add(Peers.GMA_DIRECT, 1024, 1_000_000, 976.6, 3_000_000); // y, MiB/s, messages: y is taken
        Figure tunnel = StreamingStage.streamFigure("tunnel-streaming", "t", "MiB/s");
        tunnel.add(Peers.GMA_CROSS, 1024, 390.6, 400_000, 100_000); // 0.40x of direct's messages/s: not met

        String md = Summary.markdown(new Summary.Run("full", "gma bench", ZonedDateTime.now(), Duration.ZERO,
                List.of(), Map.of(), List.of(fig4, fig5, fig7, stream, tunnel), List.of()), "");

        assertLine(md, "Cross-domain round trip within 2.5x of the raw POST echo, 1 KB: 240 µs against 100 µs"
                + " (2.40x): **met**");
        assertLine(md, "Cross-domain streaming at least half of GMA direct's messages/s, 1 KB: 400,000 messages/s"
                + " against 1,000,000 messages/s (0.40x): **not met**");
        assertLine(md, "round trip within 1.3x of raw sockets, 262,144 B: 125 µs against 100 µs (1.25x): **met**");
        assertLine(md, "round trip within 1.3x of raw sockets, 1,048,576 B: 140 µs against 100 µs (1.40x):"
                + " **not met**");
        assertLine(md, Peers.GMA_BLOCKING + ", 1,048,576 B: 690 MiB/s against 1,000 MiB/s (0.69x): **not met**");
        assertLine(md, Peers.GMA_NONBLOCKING + ", 1,048,576 B: 710 MiB/s against 1,000 MiB/s (0.71x): **met**");
    }

    @Test
    void aGoalWhoseFigureDidNotRunSaysSo() {
        String md = Summary.markdown(new Summary.Run("quick", "gma bench --only streaming", ZonedDateTime.now(),
                Duration.ZERO, List.of(), Map.of(), List.of(), List.of()), "");

        assertLine(md, "Cross-domain round trip within 2.5x of the raw POST echo, 1 KB: not measured in this run ("
                + Peers.GMA_CROSS + " has no point at 1,024 B)");
        assertLine(md, "Cross-domain streaming at least half of GMA direct's messages/s, 1 KB: not measured in this run"
                + " (" + Peers.GMA_CROSS + " has no point at 1,024 B)");
    }

    private static void assertLine(String md, String expected) {
        assertTrue(md.contains(expected), "no \"" + expected + "\" in:\n" + md);
    }
}
