package io.gma.internal.link;

/**
 * Whole messages in order, held as slices: each slice is a run of one or more packed messages that lie back to
 * back in one byte array. Per slice: where its bytes lie (array, offset, length), how many messages it holds,
 * the index among its queue's data messages of the first (0 for control; the others follow on by one) and,
 * for a slice of one message, its {@link QueuedMessage} (null when the queue does not keep it). Small messages
 * packed into one segment become one slice, so taking and acknowledging them costs nothing per message. A
 * ring of parallel arrays; not thread-safe: the send queue's lock guards it.
 */
final class SliceRing {
    private byte[][] arrays;
    private int[] offsets;
    private int[] lengths;
    private int[] counts;
    private long[] indexes;
    private QueuedMessage[] pendings;
    private int head;
    private int size;

    /** @param capacity the first capacity, a power of two; the ring doubles when full */
    SliceRing(int capacity) {
        arrays = new byte[capacity][];
        offsets = new int[capacity];
        lengths = new int[capacity];
        counts = new int[capacity];
        indexes = new long[capacity];
        pendings = new QueuedMessage[capacity];
    }

    int size() {
        return size;
    }

    boolean isEmpty() {
        return size == 0;
    }

    /** Adds a slice of {@code count} messages, the first with data index {@code index} (0: control). */
    void add(byte[] array, int offset, int length, int count, long index, QueuedMessage pending) {
        if (size == arrays.length) {
            grow();
        }
        int at = head + size & arrays.length - 1;
        arrays[at] = array;
        offsets[at] = offset;
        lengths[at] = length;
        counts[at] = count;
        indexes[at] = index;
        pendings[at] = pending;
        size++;
    }

    /** Moves the oldest slice to the end of {@code to}. */
    void moveFirstTo(SliceRing to) {
        int at = head;
        to.add(arrays[at], offsets[at], lengths[at], counts[at], indexes[at], pendings[at]);
        removeFirst();
    }

    /** Forgets the first {@code messages} messages of the oldest slice, {@code bytes} long; fewer than it holds. */
    void dropFirstMessages(int messages, int bytes) {
        int at = head;
        offsets[at] += bytes;
        lengths[at] -= bytes;
        counts[at] -= messages;
        if (indexes[at] != 0) {
            indexes[at] += messages;
        }
    }

    /** Forgets the oldest slice, so that its array can go once no other slice shares it. */
    void removeFirst() {
        arrays[head] = null;
        pendings[head] = null;
        head = head + 1 & arrays.length - 1;
        size--;
    }

    // the i-th oldest slice, from 0

    byte[] array(int i) {
        return arrays[head + i & arrays.length - 1];
    }

    int offset(int i) {
        return offsets[head + i & arrays.length - 1];
    }

    int length(int i) {
        return lengths[head + i & arrays.length - 1];
    }

    int count(int i) {
        return counts[head + i & arrays.length - 1];
    }

    long index(int i) {
        return indexes[head + i & arrays.length - 1];
    }

    QueuedMessage pending(int i) {
        return pendings[head + i & arrays.length - 1];
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
        int[] c = new int[n * 2];
        long[] x = new long[n * 2];
        QueuedMessage[] p = new QueuedMessage[n * 2];
        for (int i = 0; i < size; i++) {
            int at = head + i & n - 1;
            a[i] = arrays[at];
            o[i] = offsets[at];
            l[i] = lengths[at];
            c[i] = counts[at];
            x[i] = indexes[at];
            p[i] = pendings[at];
        }
        arrays = a;
        offsets = o;
        lengths = l;
        counts = c;
        indexes = x;
        pendings = p;
        head = 0;
    }
}
