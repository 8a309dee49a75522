package io.gma.examples.cli;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gma.client.Producer;
import io.gma.examples.Pong;
import io.gma.registry.Registry;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** {@code gma ping} as ping(8): lost replies counted, the run goes on, and an interruption reports true counts. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class PingCommandTest {
    /** A ping running on a thread of its own, its output readable while it runs. */
    private static final class Running {
        final StringBuffer out = new StringBuffer();
        final StringWriter err = new StringWriter();
        final CompletableFuture<Integer> status = new CompletableFuture<>();
        final Thread thread;

        Running(String... args) {
            PrintWriter o = new PrintWriter(new java.io.Writer() {
                @Override
                public void write(char[] chars, int off, int len) {
                    out.append(chars, off, len);
                }

                @Override
                public void flush() {
                }

                @Override
                public void close() {
                }
            }, true);
            thread = new Thread(() -> status.complete(Gma.run(args, o, new PrintWriter(err, true))), "gma-ping");
            thread.start();
        }

        void awaitLine(String part) {
            await(part).atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(5))
                    .failFast("ping ended: " + out, status::isDone).until(() -> out.indexOf(part) >= 0);
        }
    }

    @Test
    void aPongKilledAfterThreeOfTenGivesThreeReceivedAndSeventyPerCentLoss() throws Exception {
        try (Registry registry = Registry.builder().port(0).build().start()) {
            Producer pong = Pong.start(registry.url(), "lan", "pong");
            Running ping = new Running("ping", "pong@lan", "--registry", registry.url(), "-c", "10", "-i", "0.5",
                    "-W", "1");
            ping.awaitLine("seq=3 time=");
            pong.close(); // during the pause after the third: the fourth finds no pong
            int status = ping.status.get(40, TimeUnit.SECONDS);
            String out = ping.out.toString();
            assertEquals(1, status, out + ping.err);
            assertTrue(out.contains("from pong@lan: seq=4 lost: "), out);
            assertTrue(out.contains("\n--- pong@lan ping statistics ---\n10 transmitted, 3 received, 70% loss, time "),
                    out);
            assertTrue(out.matches("(?s).*\nrtt min/avg/max/mdev = [0-9.]+/[0-9.]+/[0-9.]+/[0-9.]+ ms\n"
                    + "rtt p50/p90/p99 = [0-9.]+/[0-9.]+/[0-9.]+ ms\n"), out);
        }
    }

    @Test
    void interruptedAfterFiveItReportsFive() throws Exception {
        try (Registry registry = Registry.builder().port(0).build().start();
                Producer pong = Pong.start(registry.url(), "lan", "pong")) {
            Running ping = new Running("ping", "pong@lan", "--registry", registry.url(), "-c", "100", "-i", "0.5");
            ping.awaitLine("seq=5 time=");
            ping.thread.interrupt(); // what Ctrl-C does: the shutdown hook interrupts the command's thread
            int status = ping.status.get(20, TimeUnit.SECONDS);
            String out = ping.out.toString();
            assertEquals(0, status, out + ping.err);
            assertTrue(out.contains("\n5 transmitted, 5 received, 0% loss, time "), out);
        }
    }

    @Test
    void aNameWithoutItsDomainIsAUsageErrorThatSaysTheFullName() {
        GmaCommandsTest.Run run = GmaCommandsTest.gma("ping", "pong", "--domain", "east", "--registry",
                "http://127.0.0.1:1");
        assertEquals(2, run.status(), run.err());
        assertTrue(run.err().contains("NAME \"pong\" is not a full name LABEL@DOMAIN: give the endpoint's name as"
                + " registered, such as pong@east"), run.err());
    }

    @Test
    void lossIsPrintedAsPing8PrintsIt() {
        assertEquals("0", PingCommand.lossPercent(10, 10));
        assertEquals("70", PingCommand.lossPercent(10, 3));
        assertEquals("33.3", PingCommand.lossPercent(3, 2));
        assertEquals("100", PingCommand.lossPercent(4, 0));
    }
}
