package io.gma.client;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Remembers, per sender, the highest 65,536 sequence numbers delivered (protocol.md section 4), so a message
 * resent after a reconnect is delivered once.
 *
 * <p>A set of numbers, not a window of values: a sender numbers its messages across all its destinations,
 * so the numbers one receiver sees have gaps, and control messages and resends arrive out of order. The set is
 * exact as long as a sender never has more than 65,536 messages unacknowledged, which the send queue's
 * maxQueuedMessages bound guarantees. REPLY and ERROR do not come here: each answers one awaited request,
 * and taking it from the awaited map is what makes it exactly-once.
 *
 * <p>Memory grows with use: a sender's array starts small and reaches 512 KiB at 65,536 numbers. Senders are
 * kept in an LRU of bounded size; a sender that says BYE is forgotten.
 */
final class Dedup {
    static final int REMEMBERED = 65_536;
    static final int MAX_SENDERS = 4096;
    /** How often a record kept from message to message is looked up again, at most: once in this many numbers. */
    static final int TOUCH_EVERY = 1024;

    /**
     * The highest REMEMBERED numbers of one sender, ascending (unsigned) in a ring. A sender's messages come
     * mostly in order, so the common case is a number above all others: one compare and an append, dropping
     * the lowest; no hashing, and the memory touched is the ring's two ends. A number below the highest is
     * looked up by binary search and, when new, inserted by shifting the numbers above it, which are few
     * when it is late by a little (two sending threads, a control message that overtook data). Not
     * thread-safe: callers hold its monitor.
     */
    static final class Seen {
        /** No longer in the map (BYE, or the least recently used of too many senders): look the sender up again. */
        volatile boolean forgotten;
        /** Numbers added since the record was last looked up; under its monitor. */
        private int sinceLookup;
        private long[] ring = new long[64];
        private int head;
        private int size;

        /**
         * Whether the caller, which keeps this record from message to message, should look it up again now: once in
         * {@link #TOUCH_EVERY} numbers, so that a busy sender whose record is kept stays recent in the LRU (else the
         * senders looked up one message each would push it out first, and its resends after a reconnect would be
         * delivered again). Under the record's monitor.
         */
        boolean due() {
            if (++sinceLookup < TOUCH_EVERY) {
                return false;
            }
            sinceLookup = 0;
            return true;
        }

        /** Whether {@code seq} is new; records it, forgetting the lowest number past REMEMBERED. */
        boolean add(long seq) {
            if (seq == 0) {
                return true;
            }
            if (size == 0 || Long.compareUnsigned(seq, at(size - 1)) > 0) {
                if (size == REMEMBERED) {
                    dropLowest();
                }
                insertAt(size, seq);
                return true;
            }
            int i = firstNotBelow(seq);
            if (at(i) == seq) {
                return false;
            }
            if (size == REMEMBERED) {
                if (i == 0) {
                    return true; // below every number remembered: new, as far as can be told, and not kept
                }
                dropLowest();
                i--;
            }
            insertAt(i, seq);
            return true;
        }

        private long at(int i) {
            return ring[head + i & ring.length - 1];
        }

        private void dropLowest() {
            head = head + 1 & ring.length - 1;
            size--;
        }

        /** The index of the first number not below {@code seq}; one exists, the highest being above it. */
        private int firstNotBelow(long seq) {
            int lo = 0;
            int hi = size - 1;
            while (lo < hi) {
                int mid = lo + hi >>> 1;
                if (Long.compareUnsigned(at(mid), seq) < 0) {
                    lo = mid + 1;
                } else {
                    hi = mid;
                }
            }
            return lo;
        }

        private void insertAt(int i, long seq) {
            if (size == ring.length) {
                long[] bigger = new long[ring.length * 2];
                for (int j = 0; j < size; j++) {
                    bigger[j] = at(j);
                }
                ring = bigger;
                head = 0;
            }
            int mask = ring.length - 1;
            for (int j = size; j > i; j--) {
                ring[head + j & mask] = ring[head + j - 1 & mask];
            }
            ring[head + i & mask] = seq;
            size++;
        }
    }

    private final Map<String, Seen> senders = new LinkedHashMap<>(16, 0.75f, true) {
        private static final long serialVersionUID = 1L;

        @Override
        protected boolean removeEldestEntry(Map.Entry<String, Seen> eldest) {
            if (size() <= MAX_SENDERS) {
                return false;
            }
            eldest.getValue().forgotten = true;
            return true;
        }
    };

    /**
     * The record of {@code from}'s numbers, made on first use. Callers hold its monitor while they add to it
     * and deliver: one sender's messages are delivered one at a time. A caller may keep the record for the
     * sender's next messages while it is not {@link Seen#forgotten}.
     */
    Seen of(String from) {
        synchronized (senders) {
            return senders.computeIfAbsent(from, k -> new Seen());
        }
    }

    /** Whether {@code from}'s numbers are remembered: it sent, and has not said BYE (nor been dropped) since. */
    boolean remembers(String from) {
        synchronized (senders) {
            return senders.containsKey(from);
        }
    }

    /** Forgets a sender that said BYE: it closed for good and will resend nothing. */
    void forget(String from) {
        synchronized (senders) {
            Seen gone = senders.remove(from);
            if (gone != null) {
                gone.forgotten = true;
            }
        }
    }
}
