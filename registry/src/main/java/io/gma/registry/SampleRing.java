package io.gma.registry;

import java.util.ArrayList;
import java.util.List;

/**
 * One PC servlet's samples, for the dashboard's charts ({@link PcSampler}): a ring of at most {@code capacity}
 * points, the oldest overwritten, each the time, the two message counters as the status page gave them (every
 * message in, every message out, since the PC servlet started) and its queue depths. Thread-safe.
 *
 * <p>{@link #read} answers a period as per-second rates and depths, at most a given number of points: the samples
 * themselves when they are few enough, else buckets of equal length, aligned to the epoch so that two reads a
 * moment apart bucket alike. A bucket's rate is the messages its pairs of samples counted over the time they span
 * (the time-weighted mean of the rates, exactly); its depth is the deepest sample in it (a peak must not be
 * averaged away). A pair whose counter went backwards (the PC servlet restarted) counts nothing.
 */
final class SampleRing {
    private final long[] at;
    private final long[] in;
    private final long[] out;
    private final long[] queuedMessages;
    private final long[] queuedBytes;
    /** Where the next sample goes, and how many the ring holds. */
    private int next;
    private int size;

    /** What a period holds: per point its time, the rates in and out (null: none) and the depths. */
    record Points(List<Long> at, List<Double> in, List<Double> out, List<Long> queuedMessages,
            List<Long> queuedBytes) {
    }

    SampleRing(int capacity) {
        if (capacity < 2) {
            throw new IllegalArgumentException("capacity " + capacity + " is under 2 samples");
        }
        at = new long[capacity];
        in = new long[capacity];
        out = new long[capacity];
        queuedMessages = new long[capacity];
        queuedBytes = new long[capacity];
    }

    /** Adds a sample taken at {@code atMillis} (after every sample before it). */
    synchronized void add(long atMillis, long messagesIn, long messagesOut, long messages, long bytes) {
        at[next] = atMillis;
        in[next] = messagesIn;
        out[next] = messagesOut;
        queuedMessages[next] = messages;
        queuedBytes[next] = bytes;
        next = (next + 1) % at.length;
        size = Math.min(size + 1, at.length);
    }

    synchronized int size() {
        return size;
    }

    /** The time of the newest sample, or 0 when there is none. */
    synchronized long newest() {
        return size == 0 ? 0 : at[(next - 1 + at.length) % at.length];
    }

    /** The ring's index of the {@code i}th sample held, oldest first. */
    private int index(int i) {
        return (next - size + i + at.length) % at.length;
    }

    /**
     * The samples taken at or after {@code fromMillis}, as at most {@code maxPoints} points.
     *
     * @param maxPoints 1 or more
     */
    synchronized Points read(long fromMillis, int maxPoints) {
        int first = size;
        for (int i = 0; i < size; i++) {
            if (at[index(i)] >= fromMillis) {
                first = i;
                break;
            }
        }
        Points p = new Points(new ArrayList<>(), new ArrayList<>(), new ArrayList<>(), new ArrayList<>(),
                new ArrayList<>());
        int count = size - first;
        if (count == 0) {
            return p;
        }
        if (count <= maxPoints) {
            for (int i = first; i < size; i++) {
                int k = index(i);
                p.at.add(at[k]);
                p.in.add(i == 0 ? null : rate(in, index(i - 1), k));
                p.out.add(i == 0 ? null : rate(out, index(i - 1), k));
                p.queuedMessages.add(queuedMessages[k]);
                p.queuedBytes.add(queuedBytes[k]);
            }
            return p;
        }
        long span = at[index(size - 1)] - fromMillis;
        // span / width < maxPoints - 1: the epoch's grid cuts the period into maxPoints buckets at most
        long width = span / (Math.max(2, maxPoints) - 1) + 1;
        long bucket = Long.MIN_VALUE;
        long countedIn = 0;
        long countedOut = 0;
        long spanned = 0;
        long lastAt = 0;
        long deepest = 0;
        long deepestBytes = 0;
        for (int i = first; i <= size; i++) {
            int k = i < size ? index(i) : -1;
            long b = k < 0 ? Long.MAX_VALUE : Math.floorDiv(at[k], width);
            if (b != bucket && bucket != Long.MIN_VALUE) {
                p.at.add(lastAt);
                p.in.add(spanned == 0 ? null : countedIn * 1000.0 / spanned);
                p.out.add(spanned == 0 ? null : countedOut * 1000.0 / spanned);
                p.queuedMessages.add(deepest);
                p.queuedBytes.add(deepestBytes);
                countedIn = 0;
                countedOut = 0;
                spanned = 0;
                deepest = 0;
                deepestBytes = 0;
            }
            if (k < 0) {
                break;
            }
            bucket = b;
            if (i > 0) {
                int prev = index(i - 1);
                long dt = at[k] - at[prev];
                if (dt > 0 && in[k] >= in[prev] && out[k] >= out[prev]) {
                    countedIn += in[k] - in[prev];
                    countedOut += out[k] - out[prev];
                    spanned += dt;
                }
            }
            lastAt = at[k];
            deepest = Math.max(deepest, queuedMessages[k]);
            deepestBytes = Math.max(deepestBytes, queuedBytes[k]);
        }
        return p;
    }

    /** Messages per second between samples {@code prev} and {@code k}; null when the counter went back. */
    private Double rate(long[] counter, int prev, int k) {
        long dt = at[k] - at[prev];
        return dt <= 0 || counter[k] < counter[prev] ? null : (counter[k] - counter[prev]) * 1000.0 / dt;
    }
}
