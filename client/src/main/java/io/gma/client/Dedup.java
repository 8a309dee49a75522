package io.gma.client;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Remembers, per sender, the last 65,536 sequence numbers delivered (PROTOCOL.md section 4), so a message
 * resent after a reconnect is delivered once.
 *
 * <p>A set of numbers, not a window of values: a sender numbers its messages across all its destinations,
 * so the numbers one receiver sees have gaps, and control messages and resends arrive out of order. The set is
 * exact as long as a sender never has more than 65,536 messages unacknowledged, which the send queue's
 * maxQueuedMessages bound guarantees. REPLY and ERROR do not come here: each answers one awaited request,
 * and taking it from the awaited map is what makes it exactly-once.
 *
 * <p>Memory grows with use: a sender's table starts small and reaches about 1.5 MiB at 65,536 numbers.
 * Senders are kept in an LRU of bounded size; a sender that says BYE is forgotten.
 */
final class Dedup {
    static final int REMEMBERED = 65_536;
    private static final int MAX_SENDERS = 4096;

    /** The last REMEMBERED numbers of one sender: a ring for their order, an open-addressing set to look up. */
    static final class Seen {
        private long[] ring = new long[64];
        private int size;
        private int head;
        private long[] table = new long[128]; // 0 marks an empty slot: sequence numbers start at 1
        private long highest;

        /** Whether {@code seq} is new; records it, forgetting the oldest past REMEMBERED. */
        boolean add(long seq) {
            if (seq == 0) {
                return true;
            }
            // above every number seen: new for sure, no need to look (the common case, a sender in order)
            if (Long.compareUnsigned(seq, highest) > 0) {
                highest = seq;
            } else if (contains(seq)) {
                return false;
            }
            if (size == REMEMBERED) {
                remove(ring[head]);
                ring[head] = seq;
                head = (head + 1) % REMEMBERED;
            } else {
                if (size == ring.length) {
                    grow();
                }
                ring[(head + size) % ring.length] = seq;
                size++;
            }
            insert(seq);
            return true;
        }

        private void grow() {
            long[] bigger = new long[Math.min(ring.length * 2, REMEMBERED)];
            for (int i = 0; i < size; i++) {
                bigger[i] = ring[(head + i) % ring.length];
            }
            ring = bigger;
            head = 0;
            long[] old = table;
            table = new long[bigger.length * 2];
            for (long v : old) {
                if (v != 0) {
                    insert(v);
                }
            }
        }

        private int slot(long seq) {
            long h = seq * 0x9E3779B97F4A7C15L;
            return (int) (h ^ h >>> 32) & table.length - 1;
        }

        private boolean contains(long seq) {
            for (int i = slot(seq);; i = i + 1 & table.length - 1) {
                if (table[i] == 0) {
                    return false;
                }
                if (table[i] == seq) {
                    return true;
                }
            }
        }

        private void insert(long seq) {
            int i = slot(seq);
            while (table[i] != 0) {
                i = i + 1 & table.length - 1;
            }
            table[i] = seq;
        }

        /** Linear probing's deletion: shift back the entries that the removed one had pushed along. */
        private void remove(long seq) {
            int i = slot(seq);
            while (table[i] != seq) {
                i = i + 1 & table.length - 1;
            }
            int gap = i;
            for (int j = gap + 1 & table.length - 1; table[j] != 0; j = j + 1 & table.length - 1) {
                int home = slot(table[j]);
                // move table[j] into the gap unless its home lies cyclically in (gap, j]
                boolean stays = gap <= j ? home > gap && home <= j : home > gap || home <= j;
                if (!stays) {
                    table[gap] = table[j];
                    gap = j;
                }
            }
            table[gap] = 0;
        }
    }

    private final Map<String, Seen> senders = new LinkedHashMap<>(16, 0.75f, true) {
        private static final long serialVersionUID = 1L;

        @Override
        protected boolean removeEldestEntry(Map.Entry<String, Seen> eldest) {
            return size() > MAX_SENDERS;
        }
    };

    /** Whether this message is delivered now for the first time; records it. */
    boolean firstTime(String from, long sequence) {
        Seen seen;
        synchronized (senders) {
            seen = senders.computeIfAbsent(from, k -> new Seen());
        }
        // one lock per sender for the set itself: links of different senders do not wait for each other
        synchronized (seen) {
            return seen.add(sequence);
        }
    }

    /** Forgets a sender that said BYE: it closed for good and will resend nothing. */
    void forget(String from) {
        synchronized (senders) {
            senders.remove(from);
        }
    }
}
