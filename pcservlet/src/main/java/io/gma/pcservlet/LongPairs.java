package io.gma.pcservlet;

import java.util.Arrays;

/**
 * A first-in first-out queue of pairs of longs, in two rings that grow as needed: what {@link PendingAcks} and
 * {@link SpooledAcks} note for every spooled message, without an object for each. Not thread-safe: its owner
 * guards it.
 */
final class LongPairs {
    private long[] firsts = new long[64];
    private long[] seconds = new long[64];
    private int head;
    private int size;

    void addLast(long first, long second) {
        if (size == firsts.length) {
            grow();
        }
        int i = head + size & firsts.length - 1;
        firsts[i] = first;
        seconds[i] = second;
        size++;
    }

    boolean isEmpty() {
        return size == 0;
    }

    /** The oldest pair's first; the queue is not empty. */
    long first() {
        return firsts[head];
    }

    /** The oldest pair's second; the queue is not empty. */
    long second() {
        return seconds[head];
    }

    /** Drops the oldest pair; the queue is not empty. */
    void removeFirst() {
        head = head + 1 & firsts.length - 1;
        size--;
    }

    private void grow() {
        long[] f = new long[firsts.length * 2];
        long[] s = new long[seconds.length * 2];
        for (int i = 0; i < size; i++) {
            f[i] = firsts[head + i & firsts.length - 1];
            s[i] = seconds[head + i & seconds.length - 1];
        }
        firsts = f;
        seconds = s;
        head = 0;
    }

    @Override
    public String toString() {
        return size + " pairs, oldest " + (size == 0 ? "none" : Arrays.toString(new long[] {first(), second()}));
    }
}
