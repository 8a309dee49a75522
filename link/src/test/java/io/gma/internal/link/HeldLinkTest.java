package io.gma.internal.link;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.channels.SelectionKey;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Holding a link (the stall guard, as a read holds its loop's thread) never waits for its output: another thread
 * may hold that for long (a TLS handshake step that checks a certificate), and the guard must go on guarding
 * every loop meanwhile. The held link asks for no read, and asks again once released.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class HeldLinkTest {
    private final CompletableFuture<Link> serverLink = new CompletableFuture<>();
    private LoopbackLinks links;

    @BeforeEach
    void listen() throws IOException {
        links = new LoopbackLinks("test-held", () -> new QuietListener() {
            @Override
            public void linkOpened(Link link) {
                serverLink.complete(link);
            }
        });
    }

    @AfterEach
    void close() throws IOException {
        links.close();
    }

    @Test
    void holdingALinkWhoseOutputAnotherThreadHoldsDoesNotWaitForIt() throws Exception {
        links.connect("client", new QuietListener() { });
        Link link = serverLink.get(10, TimeUnit.SECONDS);
        ReentrantLock out = outputLock(link);
        CountDownLatch taken = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        Thread step = new Thread(() -> { // as a long TLS step holds the output
            out.lock();
            try {
                taken.countDown();
                release.await(10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } finally {
                out.unlock();
            }
        }, "test-long-step");
        step.start();
        assertTrue(taken.await(5, TimeUnit.SECONDS));
        long start = System.nanoTime();
        CompletableFuture<Void> hold = CompletableFuture.runAsync(link::hold);
        hold.get(2, TimeUnit.SECONDS); // before: it waited for the step, 10 s here
        assertTrue(System.nanoTime() - start < TimeUnit.SECONDS.toNanos(2), "hold waited for the output");
        assertEquals(0, link.key().interestOps() & SelectionKey.OP_READ, "a held link asks for no read");
        release.countDown();
        step.join(5_000);
        link.unhold();
        assertEquals(SelectionKey.OP_READ, link.key().interestOps() & SelectionKey.OP_READ, "read again");
    }

    /** The link's output lock, which its writer holds while it writes (and TLS while it steps). */
    private static ReentrantLock outputLock(Link link) throws ReflectiveOperationException {
        java.lang.reflect.Field writer = Link.class.getDeclaredField("writer");
        writer.setAccessible(true);
        java.lang.reflect.Field out = LinkWriter.class.getDeclaredField("out");
        out.setAccessible(true);
        return (ReentrantLock) out.get(writer.get(link));
    }
}
