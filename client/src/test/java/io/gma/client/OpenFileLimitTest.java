package io.gma.client;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * An endpoint in a process with 256 file descriptors, flooded with connections until it has none left: it says
 * so once, with the limit and what to raise, goes on running, and takes links again once descriptors are free
 * (issue 22, "Limits are explicit").
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class OpenFileLimitTest {
    private static final int OPEN_FILES = 256;
    /** More connections than the child can hold links for: each link takes a socket and a selector's two or three. */
    private static final int MOST_CONNECTIONS = 400;
    private static final String EXHAUSTED = "out of file descriptors";

    @Test
    void runningOutOfFileDescriptorsIsLoggedOnceAndTheEndpointServesOn() throws Exception {
        Assumptions.assumeTrue(System.getProperty("os.name").toLowerCase().contains("linux"), "ulimit -n: Linux");
        try (DirectFixture f = new DirectFixture();
                ChildJvm child = ChildJvm.startWithOpenFiles(OPEN_FILES, List.of("-Xmx64m",
                        "-Dorg.slf4j.simpleLogger.defaultLogLevel=info", "-Dgma.maxUnauthenticated=1000000",
                        "-Dgma.maxUnauthenticatedPerAddress=1000000"), SinkMain.class.getName(),
                        List.of(f.registryUrl(), "sink"))) {
            String sink = child.await(Pattern.compile("ready (\\S+)"), 30_000).group(1);
            InetSocketAddress address = new InetSocketAddress(InetAddress.getLoopbackAddress(), f.portOf(sink));
            List<Socket> flood = new ArrayList<>();
            try {
                // connections that never say HELLO: each holds a link, in its handshake, for up to 5 s
                while (flood.size() < MOST_CONNECTIONS && !child.output().contains(EXHAUSTED)) {
                    Socket s = new Socket();
                    try {
                        s.connect(address, 3_000); // the backlog may be full a moment: a SYN is tried again in 1 s
                    } catch (IOException backlogFull) {
                        s.close();
                        break;
                    }
                    flood.add(s);
                }
                // the accept loop keeps failing, every 100 ms, while the flood holds on
                Thread.sleep(1_000);
            } finally {
                for (Socket s : flood) {
                    s.close();
                }
            }
            try (Producer p = f.producer("p").build()) {
                try {
                    p.send(sink, "after".getBytes(UTF_8)).acknowledged().get(30, TimeUnit.SECONDS);
                } catch (TimeoutException e) {
                    throw new AssertionError("not acknowledged in 30 s; the sink said:\n" + child.output(), e);
                }
                child.await(Pattern.compile("got after"), 10_000);
            }
            assertTrue(child.isAlive(), child.output());
            List<String> lines = Arrays.asList(child.output().split("\n"));
            List<String> exhausted = lines.stream().filter(l -> l.contains(EXHAUSTED)).toList();
            assertEquals(1, exhausted.size(), "logged once: " + child.output());
            assertTrue(exhausted.get(0).contains(" of " + OPEN_FILES + " files open, the process's limit")
                    && exhausted.get(0).contains("ulimit -n") && exhausted.get(0).contains("maxLinks (now 10000"),
                    exhausted.get(0));
            assertEquals(1, lines.stream().filter(l -> l.contains("accepting again")).count(), child.output());
            assertEquals(0, lines.stream().filter(l -> l.contains("accept failed")).count(), child.output());
        }
    }
}
