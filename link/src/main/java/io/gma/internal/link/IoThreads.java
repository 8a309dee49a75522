package io.gma.internal.link;

import java.util.concurrent.atomic.AtomicInteger;

/**
 * The threads links run on, one per link, named {@code <prefix>1}, {@code <prefix>2}, ...
 * ({@code gma-cpu-link-3}, {@code gma-pc@east-uplink-7}), daemon as every GMA thread. They are marked: message
 * handlers run on a link's thread unless the application gave an executor, so a call that would wait for what
 * only that thread can read (a blocking request, a BLOCK send waiting for ACKs) asks {@link #isCurrent()} and
 * refuses, or fails at once, rather than wait forever.
 */
public final class IoThreads {
    private final String prefix;
    private final AtomicInteger started = new AtomicInteger();

    /** @param prefix each thread's name, before its number */
    public IoThreads(String prefix) {
        this.prefix = prefix;
    }

    /** Runs {@code link} on an I/O thread of its own, started now. */
    public void start(Link link) {
        new IoThread(link, prefix + started.incrementAndGet()).start();
    }

    /** Whether the calling thread is a link's I/O thread (of any owner in this process). */
    public static boolean isCurrent() {
        return Thread.currentThread() instanceof IoThread;
    }

    /** A link's thread: the mark {@link #isCurrent()} looks for. */
    private static final class IoThread extends Thread {
        IoThread(Runnable link, String name) {
            super(link, name);
            setDaemon(true);
        }
    }
}
