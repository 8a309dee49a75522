package io.gma.pcservlet;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gma.client.Producer;
import io.gma.registry.Registry;
import io.gma.registry.api.RegistryClient;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A forwarder with one batch in flight posts it on its own thread (no dispatcher hop); stopping the PC servlet
 * still ends it at once when the destination never answers, as it ended a forwarder that waited for OkHttp's
 * thread. An interrupt alone would leave it in the socket read until the 90 s read timeout.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ForwarderStopTest {

    @Test
    void aStopEndsAForwarderWhosePostIsNeverAnswered() throws Exception {
        try (ServerSocket mute = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
                Registry registry = Registry.builder().port(0).build().start()) {
            CountDownLatch posted = new CountDownLatch(1);
            Thread listener = new Thread(() -> {
                try (Socket s = mute.accept(); InputStream in = s.getInputStream()) {
                    byte[] b = new byte[4096];
                    while (in.read(b) > 0) {
                        posted.countDown(); // a request came; it is never answered
                    }
                } catch (Exception closed) {
                    // the test is over
                }
            }, "mute-domain");
            listener.setDaemon(true);
            listener.start();
            RegistryClient.create(registry.url()).registerDomain("mute", "http://127.0.0.1:" + mute.getLocalPort(),
                    null, Duration.ofMinutes(5));
            PcServer east = PcServer.builder("east", registry.url()).drainTimeout(Duration.ofMillis(200)).start();
            try (Producer p = Producer.builder().registry(registry.url()).domain("east").pcServlet(east.uplink())
                    .label("p").build()) {
                p.send("x-aaaaaa@mute", new byte[16]);
                assertTrue(posted.await(10, TimeUnit.SECONDS), "the batch was not posted to the mute domain");
            } finally {
                east.close();
            }
            await().atMost(Duration.ofSeconds(5)).untilAsserted(() -> assertEquals(0,
                    Thread.getAllStackTraces().keySet().stream()
                            .filter(t -> t.getName().startsWith("gma-pc-east-to-mute")).count(),
                    "the forwarder to a domain that never answers outlived the stop"));
        }
    }
}
