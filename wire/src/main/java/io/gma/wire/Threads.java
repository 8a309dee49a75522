package io.gma.wire;

import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Named daemon threads, the one way GMA makes its background threads: timers, pools, accept loops, forwarders,
 * pollers, sweepers. Daemon, because none of them holds anything that a JVM on its way out must finish (what is
 * queued is failed or resent by the owner's close); named, so that a thread dump says whose each one is
 * ({@code gma-pc-east-to-west}, {@code gma-cpu-connect-2}).
 *
 * <p>It sits in wire although it has nothing to do with the wire format: wire is the one module that every
 * other depends on and that depends on nothing, so it is the one place every module (the registry, the link,
 * the client, the PC servlet, the examples and the benchmarks) can reach without a dependency it would not
 * otherwise have. Event loops are made by the link module's {@code IoThreads}, which marks them so
 * that a blocking call can refuse to run on one.
 */
public final class Threads {
    private Threads() {
    }

    /** A factory of daemon threads, each named {@code name}: for an executor of one thread. */
    public static ThreadFactory named(String name) {
        return task -> daemon(name, task);
    }

    /** A factory of daemon threads named {@code prefix} followed by 1, 2, 3 and so on: for a pool. */
    public static ThreadFactory numbered(String prefix) {
        AtomicInteger count = new AtomicInteger();
        return task -> daemon(prefix + count.incrementAndGet(), task);
    }

    /** A daemon thread named {@code name} that runs {@code task}, not started yet. */
    public static Thread daemon(String name, Runnable task) {
        Thread t = new Thread(task, name);
        t.setDaemon(true);
        return t;
    }

    /** Starts a daemon thread named {@code name} that runs {@code task}. */
    public static Thread start(String name, Runnable task) {
        Thread t = daemon(name, task);
        t.start();
        return t;
    }
}
