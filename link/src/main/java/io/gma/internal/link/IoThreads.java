package io.gma.internal.link;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

/**
 * An owner's event loops (issue 22): a few {@link EventLoop}s, as many as cores unless told otherwise, each a
 * thread and a selector serving many links, so that an idle link costs no thread. Links are spread over them
 * round robin. A loop starts with its first link and ends when the owner closes the group; one that failed (out of
 * memory, say) is replaced by a new one for the next link given to it.
 *
 * <p>Threads are named {@code <prefix>1}, {@code <prefix>2}, ... ({@code gma-cpu-link-1}, {@code gma-pc@east-
 * uplink-2}), daemon as every GMA thread, and marked: message handlers run on a loop's thread unless the
 * application gave an executor, so a call that would wait for what only such a thread can read (a blocking
 * request, a BLOCK send waiting for ACKs) asks {@link #isCurrent()} and refuses, or fails at once, rather than
 * wait forever. A loop held by a slow handler moves to another thread ({@link EventLoop}): a spare, kept for
 * {@link #SPARE_KEEP_NANOS} after it was last needed, or a new one.
 */
public final class IoThreads implements AutoCloseable {
    /** How long a thread freed by a handler waits to carry a loop again before it ends. */
    static final long SPARE_KEEP_NANOS = TimeUnit.SECONDS.toNanos(5);

    private final String prefix;
    private final EventLoop[] loops;
    private final AtomicInteger threads = new AtomicInteger();
    private final AtomicInteger next = new AtomicInteger();
    /** Threads that carried a loop until a handler held them, waiting to carry one again. */
    private final ConcurrentLinkedDeque<IoThread> spares = new ConcurrentLinkedDeque<>();
    private boolean closed;

    /** The most loops an owner may have. */
    public static final int MAX_LOOPS = 1024;

    /**
     * @param prefix each thread's name, before its number
     * @param loops how many event loops ({@link #check})
     */
    public IoThreads(String prefix, int loops) {
        this.prefix = prefix;
        this.loops = new EventLoop[check(loops)];
    }

    /** The default number of loops: the cores this JVM may use. */
    public static int defaultLoops() {
        return Runtime.getRuntime().availableProcessors();
    }

    /**
     * {@code loops}, if it is from 1 to {@link #MAX_LOOPS}.
     *
     * @throws IllegalArgumentException naming the value and the range otherwise
     */
    public static int check(int loops) {
        if (loops < 1 || loops > MAX_LOOPS) {
            throw new IllegalArgumentException("ioThreads " + loops + " is outside 1.." + MAX_LOOPS);
        }
        return loops;
    }

    /** Serves {@code link} on one of the loops from now on; aborts it if the group is closed. */
    public void start(Link link) {
        EventLoop loop;
        synchronized (this) {
            if (closed) {
                loop = null;
            } else {
                int i = Math.floorMod(next.getAndIncrement(), loops.length);
                if (loops[i] == null || loops[i].ended()) { // not made yet, or it failed: a new one
                    try {
                        loops[i] = new EventLoop(this, i + 1);
                    } catch (IOException e) {
                        throw new UncheckedIOException("cannot open a selector for " + prefix + (i + 1), e);
                    }
                    loops[i].start();
                }
                loop = loops[i];
            }
        }
        if (loop == null) {
            link.abort();
            return;
        }
        link.assigned(loop);
        loop.add(link);
    }

    /** Closes every loop: their links close, their listeners are told. */
    @Override
    public void close() {
        synchronized (this) {
            closed = true;
            for (EventLoop loop : loops) {
                if (loop != null) {
                    loop.close();
                }
            }
        }
        for (IoThread spare; (spare = spares.pollFirst()) != null;) {
            LockSupport.unpark(spare); // it finds no loop, and ends
        }
    }

    /** Whether the calling thread is an event loop's (of any owner in this process). */
    public static boolean isCurrent() {
        return Thread.currentThread() instanceof IoThread;
    }

    String prefix() {
        return prefix;
    }

    /** A thread of this group that runs {@code first}, then what {@link #handOff} gives it. */
    Thread newThread(EventLoop first) {
        return new IoThread(first, prefix + threads.incrementAndGet());
    }

    /**
     * On the {@link StallGuard}'s thread: {@code loop}'s owner is held by a handler; a spare, or a new thread,
     * takes it on. Called under the loop's monitor.
     */
    void handOff(EventLoop loop) {
        IoThread spare = spares.pollFirst();
        if (spare != null) {
            loop.ownedBy(spare); // first: the spare runs the loop only while it owns it
            spare.next = loop;
            LockSupport.unpark(spare);
            return;
        }
        Thread t = newThread(loop);
        loop.ownedBy(t);
        t.start();
    }

    /** A loop's thread: the mark {@link #isCurrent()} looks for. */
    private final class IoThread extends Thread {
        /** The loop to carry next, given by {@link #handOff} while this waits as a spare. */
        volatile EventLoop next;

        IoThread(EventLoop first, String name) {
            super(name);
            this.next = first;
            setDaemon(true);
        }

        @Override
        public void run() {
            while (true) {
                EventLoop loop = next;
                next = null;
                loop.run(); // returns when the loop closed, or when a handler held this thread and it was handed on
                if (!awaitLoop()) {
                    return;
                }
            }
        }

        /** Waits as a spare for a loop to carry; whether one came. */
        private boolean awaitLoop() {
            spares.addFirst(this);
            long deadline = System.nanoTime() + SPARE_KEEP_NANOS;
            while (next == null) {
                long left = deadline - System.nanoTime();
                if (isClosed()) {
                    spares.remove(this);
                    return next != null; // a loop handed on as the group closed ends at once
                }
                if (left <= 0) {
                    if (spares.remove(this)) {
                        return false;
                    }
                    left = TimeUnit.MILLISECONDS.toNanos(1); // taken just now: the loop is on its way
                }
                LockSupport.parkNanos(this, left);
            }
            return true;
        }
    }

    private synchronized boolean isClosed() {
        return closed;
    }
}
