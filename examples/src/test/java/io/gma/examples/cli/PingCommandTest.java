package io.gma.examples.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gma.client.Producer;
import io.gma.examples.Pong;
import io.gma.registry.Registry;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** {@code gma ping} as ping(8): lost replies counted, the run goes on, and an interruption reports true counts. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class PingCommandTest {
    @Test
    void aPongKilledAfterThreeOfTenGivesThreeReceivedAndSeventyPerCentLoss() throws Exception {
        try (Registry registry = Registry.builder().port(0).build().start()) {
            Producer pong = Pong.start(registry.url(), "lan", "pong");
            LiveGma ping = new LiveGma("ping", "pong@lan", "--registry", registry.url(), "-c", "10", "-i", "0.5",
                    "-W", "1");
            ping.awaitOut("seq=3 time=");
            pong.close(); // during the pause after the third: the fourth finds no pong
            int status = ping.exit();
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
            LiveGma ping = new LiveGma("ping", "pong@lan", "--registry", registry.url(), "-c", "100", "-i", "0.5");
            ping.awaitOut("seq=5 time=");
            int status = ping.interrupt();
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
