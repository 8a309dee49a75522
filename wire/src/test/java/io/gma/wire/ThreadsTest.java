package io.gma.wire;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(10)
class ThreadsTest {
    @Test
    void aNamedFactoryMakesDaemonThreadsOfThatName() {
        ThreadFactory f = Threads.named("gma-test-timer");
        Thread a = f.newThread(() -> { });
        Thread b = f.newThread(() -> { });
        assertEquals("gma-test-timer", a.getName());
        assertEquals("gma-test-timer", b.getName());
        assertTrue(a.isDaemon() && b.isDaemon());
        assertFalse(a.isAlive(), "made, not started");
    }

    @Test
    void aNumberedFactoryCountsFromOne() {
        ThreadFactory f = Threads.numbered("gma-test-connect-");
        assertEquals("gma-test-connect-1", f.newThread(() -> { }).getName());
        assertEquals("gma-test-connect-2", f.newThread(() -> { }).getName());
        assertEquals("gma-other-1", Threads.numbered("gma-other-").newThread(() -> { }).getName(),
                "each factory counts on its own");
    }

    @Test
    void startRunsTheTaskOnADaemonThreadOfThatName() throws Exception {
        CompletableFuture<Thread> ran = new CompletableFuture<>();
        Thread t = Threads.start("gma-test-once", () -> ran.complete(Thread.currentThread()));
        assertEquals(t, ran.get(5, TimeUnit.SECONDS));
        assertEquals("gma-test-once", t.getName());
        assertTrue(t.isDaemon());
    }
}
