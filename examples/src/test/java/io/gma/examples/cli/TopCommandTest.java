package io.gma.examples.cli;

import static io.gma.examples.cli.GmaCommandsTest.gma;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gma.registry.Registry;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** {@code gma top}: PC servlets and endpoints with metrics, their rates moving with traffic. */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class TopCommandTest {
    @Test
    void showsEveryPcServletAndEveryEndpointWithMetricsAndTheirRates(@TempDir Path spool) throws Exception {
        try (Registry registry = Registry.builder().port(0).build().start()) {
            String url = registry.url();
            LiveGma east = new LiveGma("pc", "--domain", "east", "--registry", url, "--http-port", "0",
                    "--uplink-port", "0", "--data-dir", spool.toString());
            String uplink = PubSubCommandsTest.uplink(east);
            LiveGma pong = new LiveGma("pong", "--registry", url, "--domain", "east", "--pc", uplink,
                    "--metrics-port", "0");
            pong.awaitOut("metrics at ");
            // traffic while top looks: pings to pong, on a direct link
            LiveGma ping = new LiveGma("ping", "pong@east", "--registry", url, "--domain", "east", "-c", "1000000",
                    "-i", "0.01");
            ping.awaitOut("seq=1 time=");
            GmaCommandsTest.Run top = gma("top", "--registry", url, "-n", "2", "-d", "0.5", "-b");
            assertEquals(0, top.status(), top.err());
            String[] views = top.out().split("\n\n(?=gma top - )");
            assertEquals(2, views.length, top.out());
            String view = views[1];
            assertTrue(view.startsWith("gma top - "), view);
            assertTrue(view.contains("\nendpoints by domain: east 2\n"), view);
            String pc = row(view, "east ");
            assertTrue(pc.endsWith(" http://127.0.0.1:" + pcPort(east)), pc);
            assertTrue(view.contains(" REFUSED  UNSENDABLE  URL"), view);
            assertEquals(12, pc.split("\\s+").length, pc); // name, ten figures (unsendable 0), the URL
            String[] pongRow = row(view, "pong@east ").split("\\s+");
            assertEquals(9, pongRow.length, view);
            assertTrue(Long.parseLong(pongRow[1].replace(",", "")) > 0, "pong's OUT/s moves with the pings: " + view);
            assertTrue(Long.parseLong(pongRow[2].replace(",", "")) > 0, "and its IN/s: " + view);
            ping.interrupt();
            assertEquals(0, pong.interrupt());
            assertEquals(0, east.interrupt());
        }
    }

    @Test
    void aRegistryThatDoesNotAnswerAtTheStartEndsIt() {
        GmaCommandsTest.Run top = gma("top", "--registry", "http://127.0.0.1:1", "-n", "1", "-d", "0.1");
        assertEquals(1, top.status(), top.out());
        assertTrue(top.err().contains("nothing listens at 127.0.0.1:1"), top.err());
    }

    private static String row(String view, String first) {
        return Arrays.stream(view.split("\n")).filter(l -> l.startsWith(first)).findFirst()
                .orElseThrow(() -> new AssertionError("no row " + first + "in\n" + view));
    }

    private static String pcPort(LiveGma pc) {
        String line = pc.out.toString().lines().findFirst().orElseThrow();
        String url = line.substring(line.indexOf(" at http://") + 4, line.indexOf(", uplinks"));
        return url.substring(url.lastIndexOf(':') + 1);
    }
}
