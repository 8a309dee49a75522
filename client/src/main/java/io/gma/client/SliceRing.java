package io.gma.client;

import java.util.Arrays;

/**
 * Messages in order, each a slice of a byte array: where its packed bytes lie (array, offset, length), its
 * index among its queue's data messages (0 for control) and its {@link Pending} (null when nobody holds one).
 * A ring of parallel arrays, so moving a message from one ring to another copies five array elements and
 * touches neither the message's bytes nor its Pending. Not thread-safe: the send queue's lock guards it.
 */
final class SliceRing {
    private byte[][] arrays;
    private int[] offsets;
    private int[] lengths;
    private long[] indexes;
    private Pending[] pendings;
    private int head;
    private int size;

    /** @param capacity the first capacity, a power of two; the ring doubles when full */
    SliceRing(int capacity) {
        arrays = new byte[capacity][];
        offsets = new int[capacity];
        lengths = new int[capacity];
        indexes = new long[capacity];
        pendings = new Pending[capacity];
    }

    int size() {
        return size;
    }

    boolean isEmpty() {
        return size == 0;
    }

    void add(byte[] array, int offset, int length, long index, Pending pending) {
        if (size == arrays.length) {
            grow();
        }
        int at = head + size & arrays.length - 1;
        arrays[at] = array;
        offsets[at] = offset;
        lengths[at] = length;
        indexes[at] = index;
        pendings[at] = pending;
        size++;
    }

    /** Moves the oldest message to the end of {@code to}. */
    void moveFirstTo(SliceRing to) {
        int at = head;
        to.add(arrays[at], offsets[at], lengths[at], indexes[at], pendings[at]);
        removeFirst();
    }

    /** Forgets the oldest message, so that its array can go once no other message shares it. */
    void removeFirst() {
        arrays[head] = null;
        pendings[head] = null;
        head = head + 1 & arrays.length - 1;
        size--;
    }

    // the i-th oldest message, from 0

    byte[] array(int i) {
        return arrays[head + i & arrays.length - 1];
    }

    int offset(int i) {
        return offsets[head + i & arrays.length - 1];
    }

    int length(int i) {
        return lengths[head + i & arrays.length - 1];
    }

    long index(int i) {
        return indexes[head + i & arrays.length - 1];
    }

    Pending pending(int i) {
        return pendings[head + i & arrays.length - 1];
    }

    /** A copy of the i-th oldest message's bytes. */
    byte[] copy(int i) {
        int at = head + i & arrays.length - 1;
        return Arrays.copyOfRange(arrays[at], offsets[at], offsets[at] + lengths[at]);
    }

    void clear() {
        while (size > 0) {
            removeFirst();
        }
    }

    private void grow() {
        int n = arrays.length;
        byte[][] a = new byte[n * 2][];
        int[] o = new int[n * 2];
        int[] l = new int[n * 2];
        long[] x = new long[n * 2];
        Pending[] p = new Pending[n * 2];
        for (int i = 0; i < size; i++) {
            int at = head + i & n - 1;
            a[i] = arrays[at];
            o[i] = offsets[at];
            l[i] = lengths[at];
            x[i] = indexes[at];
            p[i] = pendings[at];
        }
        arrays = a;
        offsets = o;
        lengths = l;
        indexes = x;
        pendings = p;
        head = 0;
    }
}
