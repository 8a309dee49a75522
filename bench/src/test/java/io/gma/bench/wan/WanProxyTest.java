package io.gma.bench.wan;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The WAN stand-in on loopback: bytes come through intact and in order, never before the one-way delay each way,
 * never faster than the rate (lower bounds only: how much later they come is the machine's), and a cut closes
 * the connections through it.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class WanProxyTest {
    private ServerSocket echo;
    private Thread echoing;

    /** An echo server: what each connection sends comes back. */
    @BeforeEach
    void startEcho() throws IOException {
        echo = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        echoing = new Thread(() -> {
            while (true) {
                try {
                    Socket s = echo.accept();
                    Thread t = new Thread(() -> {
                        try (Socket c = s;
                                InputStream in = c.getInputStream();
                                OutputStream out = c.getOutputStream()) {
                            in.transferTo(out);
                        } catch (IOException ignored) {
                            // the test cut it
                        }
                    });
                    t.setDaemon(true);
                    t.start();
                } catch (IOException closed) {
                    return;
                }
            }
        });
        echoing.setDaemon(true);
        echoing.start();
    }

    @AfterEach
    void stopEcho() throws Exception {
        echo.close();
        echoing.join(5_000);
    }

    @Test
    void aRoundTripTakesTwiceTheOneWayDelayAtLeastAndBytesComeBackIntactInOrder() throws Exception {
        try (WanProxy proxy = WanProxy.start(new WanProxy.Link(Duration.ofMillis(40), 0)).target(echo.getLocalPort());
                Socket s = new Socket(InetAddress.getLoopbackAddress(), proxy.port())) {
            byte[] sent = new byte[200_000];
            new Random(7).nextBytes(sent);
            long start = System.nanoTime();
            s.getOutputStream().write(sent);
            byte[] back = new byte[sent.length];
            new DataInputStream(s.getInputStream()).readFully(back);
            long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            assertArrayEquals(sent, back, "through the link and back: intact, in order");
            assertTrue(millis >= 80, "a round trip of " + millis + " ms, under 2 x 40 ms one-way");
        }
    }

    @Test
    void aDirectionCarriesNoMoreThanTheRate() throws Exception {
        // 8 Mbit/s: 1 MB one way takes 1 s at least (and as long again back, overlapping)
        try (WanProxy proxy = WanProxy.start(new WanProxy.Link(Duration.ZERO, 8_000_000)).target(echo.getLocalPort());
                Socket s = new Socket(InetAddress.getLoopbackAddress(), proxy.port())) {
            byte[] sent = new byte[1_000_000];
            long start = System.nanoTime();
            Thread writer = new Thread(() -> {
                try {
                    s.getOutputStream().write(sent);
                } catch (IOException ignored) {
                    // the reader fails the test
                }
            });
            writer.start();
            new DataInputStream(s.getInputStream()).readFully(new byte[sent.length]);
            writer.join();
            long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            assertTrue(millis >= 1_000, "1 MB at 8 Mbit/s came through in " + millis + " ms, under 1 s");
        }
    }

    @Test
    void aCutClosesEveryConnectionThroughItAndNewOnesAreTaken() throws Exception {
        try (WanProxy proxy = WanProxy.start(new WanProxy.Link(Duration.ZERO, 0)).target(echo.getLocalPort())) {
            Socket s = new Socket(InetAddress.getLoopbackAddress(), proxy.port());
            s.getOutputStream().write(1);
            assertEquals(1, s.getInputStream().read());
            assertEquals(2, proxy.cutAll(), "the client's side and the server's");
            s.setSoTimeout(5_000);
            assertThrows(IOException.class, () -> {
                if (s.getInputStream().read() == -1) {
                    throw new IOException("closed");
                }
            });
            s.close();
            try (Socket again = new Socket(InetAddress.getLoopbackAddress(), proxy.port())) {
                again.getOutputStream().write(2);
                assertEquals(2, again.getInputStream().read(), "a new connection goes through");
            }
        }
    }
}
