package io.gma.internal.link;

import io.gma.wire.ErrorCode;
import io.gma.wire.Threads;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * Keeps a link's ACKs and keepalive going while its I/O thread is held up by a message handler (issue 22): one
 * thread for the process, which looks at every open link each {@link #PERIOD_NANOS} and, for a link whose I/O
 * thread let a deadline pass by more than {@link #GRACE_NANOS}, sends the ACK of what was taken so far or the
 * PING that is due ({@link Link#guard}). A link whose I/O thread keeps its deadlines (it wakes for them) never
 * needs it; one whose handler takes 100 ms a message still acknowledges each message within about 35 ms of its
 * handler returning, and a handler that blocks for minutes does not make the peer take this side for dead.
 *
 * <p>Why not run handlers off the I/O thread: a hand-off to another thread costs a thread hop on every message
 * an endpoint takes, which the direct round trip pays in full, while what the guard costs the I/O thread is a
 * release store of its counts (free on x86). A handler still holds up the link's own reading: PINGs wait in the
 * socket (the peer only needs to hear from this side, which it does), and what comes after waits too, which is
 * the push-back: the peer's send queue fills. The event-loop model of issue 22 will replace this guard.
 *
 * <p>The thread runs while any link is open, and ends when none is; a scan costs a few loads a link.
 */
final class StallGuard {
    /** How often the links are looked at: a fraction of the 20 ms an ACK may wait. */
    static final long PERIOD_NANOS = TimeUnit.MILLISECONDS.toNanos(10);
    /** How late an I/O thread may be for a deadline of its own before the guard keeps it. */
    static final long GRACE_NANOS = TimeUnit.MILLISECONDS.toNanos(5);

    private static final Set<Link> LINKS = ConcurrentHashMap.newKeySet();
    /** The guard's thread, while it runs; guarded by the class. */
    private static Thread thread;

    private StallGuard() {
    }

    /** Guards {@code link}, which just opened, until {@link #release}. */
    static void watch(Link link) {
        LINKS.add(link);
        synchronized (StallGuard.class) {
            if (thread == null) {
                thread = Threads.start("gma-link-stall-guard", StallGuard::run);
            }
        }
    }

    /** {@code link} closed. */
    static void release(Link link) {
        LINKS.remove(link);
    }

    private static void run() {
        while (true) {
            LockSupport.parkNanos(PERIOD_NANOS);
            synchronized (StallGuard.class) {
                if (LINKS.isEmpty()) {
                    thread = null; // a link that opens from now on starts another
                    return;
                }
            }
            long now = System.nanoTime();
            for (Link link : LINKS) {
                try {
                    link.guard(now);
                } catch (RuntimeException e) {
                    // one link's trouble is its own: the link fails on its I/O thread, the guard goes on
                    link.fail(new LinkException(ErrorCode.INTERNAL, "guarding the link to "
                            + link.peerName() + " failed: " + e, e));
                }
            }
        }
    }
}
