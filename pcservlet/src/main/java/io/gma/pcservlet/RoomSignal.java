package io.gma.pcservlet;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Predicate;
import java.util.function.Supplier;

/**
 * Room was freed in one of the PC servlet's queues: a batch was done with (posted, refused, handed to a relay
 * queue), a relayed domain acknowledged a poll, an endpoint acknowledged what its queue here held, or an
 * endpoint's queue was dropped. Whoever holds messages back for want of room is told, instead of looking again
 * every few milliseconds: the uplinks that parked messages ({@link #onFreed}), and a POST, a poll or the drain
 * waiting with a deadline ({@link #await}).
 *
 * <p>{@link #freed()} runs on the thread that freed the room (a forwarder, a Jetty thread, a link's event loop)
 * and costs an atomic increment and the listeners while nobody waits.
 */
final class RoomSignal {
    private final AtomicLong freed = new AtomicLong();
    private final AtomicInteger waiting = new AtomicInteger();
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition changed = lock.newCondition();
    private final List<Runnable> listeners = new CopyOnWriteArrayList<>();

    /** Runs {@code listener} each time room is freed, on the thread that freed it; it must not block. */
    void onFreed(Runnable listener) {
        listeners.add(listener);
    }

    /** Room was freed somewhere: listeners run, and waiters look again. */
    void freed() {
        freed.incrementAndGet();
        for (Runnable r : listeners) {
            r.run();
        }
        if (waiting.get() > 0) {
            lock.lock();
            try {
                changed.signalAll();
            } finally {
                lock.unlock();
            }
        }
    }

    /**
     * Tries {@code attempt} until its result is {@code done}, again each time room is freed, until
     * {@code deadlineNanos} ({@link System#nanoTime}); returns the last result, done or not. No signal is lost:
     * one that comes while an attempt runs makes the next attempt start at once.
     */
    <T> T await(Supplier<T> attempt, Predicate<T> done, long deadlineNanos) throws InterruptedException {
        waiting.incrementAndGet();
        try {
            while (true) {
                long seen = freed.get();
                T result = attempt.get();
                long left = deadlineNanos - System.nanoTime();
                if (done.test(result) || left <= 0) {
                    return result;
                }
                lock.lockInterruptibly();
                try {
                    while (freed.get() == seen && left > 0) {
                        left = changed.awaitNanos(left);
                    }
                } finally {
                    lock.unlock();
                }
            }
        } finally {
            waiting.decrementAndGet();
        }
    }

    /** Waits until room is freed, or {@code deadlineNanos}; whether it was. */
    boolean awaitFreed(long deadlineNanos) throws InterruptedException {
        long start = freed.get();
        return await(() -> freed.get() != start, Boolean::booleanValue, deadlineNanos);
    }
}
