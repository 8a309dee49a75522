package io.gma.internal.link;

import io.gma.wire.Threads;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * Keeps links' ACKs and keepalive going while a message handler holds their event loop's thread (issue 22): one
 * thread for the process, which looks at every {@link EventLoop} each {@link #PERIOD_NANOS}. A loop busy for
 * more than {@link #GRACE_NANOS} gets, for each of its links, the ACK of what was taken so far and the PING that
 * is due ({@link Link#guard}); a loop held by one message of a link's read for {@link EventLoop#HANDOFF_NANOS} is
 * handed to another thread, and the held link is guarded until its read is over. A handler of 100 ms a message
 * thus still acknowledges each message within about 35 ms of its return, a handler that blocks for minutes does
 * not make the peer take this side for dead, and the loop's other links wait for it 20 ms at most.
 *
 * <p>Why not run handlers off the loop: a hand-off to another thread costs a thread hop on every message an
 * endpoint takes, which the direct round trip pays in full, while what the guard costs the loop is a few stores
 * per iteration. A handler still holds up its own link's reading: PINGs wait in the socket (the peer only needs
 * to hear from this side, which it does), and what comes after waits too, which is the push-back: the peer's
 * send queue fills.
 *
 * <p>The thread runs while any loop is open, and ends when none is; a look costs a few loads a loop, and a few a
 * link only for a loop that is busy.
 */
final class StallGuard {
    /** How often the links are looked at: a fraction of the 20 ms an ACK may wait. */
    static final long PERIOD_NANOS = TimeUnit.MILLISECONDS.toNanos(10);
    /** How late an event loop may be for a deadline of its own before the guard keeps it. */
    static final long GRACE_NANOS = TimeUnit.MILLISECONDS.toNanos(5);

    private static final Set<EventLoop> LOOPS = ConcurrentHashMap.newKeySet();
    /** The guard's thread, while it runs; guarded by the class. */
    private static Thread thread;

    private StallGuard() {
    }

    /** Guards {@code loop}'s links, and hands it to another thread when a read holds its own, until released. */
    static void watch(EventLoop loop) {
        LOOPS.add(loop);
        synchronized (StallGuard.class) {
            if (thread == null) {
                thread = Threads.start("gma-link-stall-guard", StallGuard::run);
            }
        }
    }

    /** {@code loop} closed. */
    static void release(EventLoop loop) {
        LOOPS.remove(loop);
    }

    private static void run() {
        while (true) {
            LockSupport.parkNanos(PERIOD_NANOS);
            synchronized (StallGuard.class) {
                if (LOOPS.isEmpty()) {
                    thread = null; // a link that opens from now on starts another
                    return;
                }
            }
            long now = System.nanoTime();
            for (EventLoop loop : LOOPS) {
                loop.guard(now);
            }
        }
    }
}
