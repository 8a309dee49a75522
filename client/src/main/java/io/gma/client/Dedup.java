package io.gma.client;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Remembers which (sender, sequence) pairs were delivered, the last 65,536 sequences per sender
 * (PROTOCOL.md section 4), so a message resent after a reconnect is delivered once.
 *
 * <p>REPLY and ERROR carry the sequence of the message they answer, which is the requester's numbering, not
 * the replier's; they are kept apart from the sender's own messages, or a REPLY to request 5 and the
 * replier's own DATA 5 would be taken for one another. Senders are kept in an LRU of bounded size.
 */
final class Dedup {
    static final int WINDOW = 65_536;
    private static final int MAX_SENDERS = 4096;

    /** A sliding bitmap: bit (seq mod WINDOW) for sequences in (max - WINDOW, max]. */
    private static final class Window {
        final long[] bits = new long[WINDOW / 64];
        long max;

        boolean firstTime(long seq) {
            if (Long.compareUnsigned(seq, max) > 0) {
                long shift = seq - max;
                if (shift >= WINDOW) {
                    java.util.Arrays.fill(bits, 0);
                } else {
                    for (long s = max + 1; s != seq; s++) {
                        clear(s);
                    }
                }
                max = seq;
                set(seq);
                return true;
            }
            if (max - seq >= WINDOW) {
                return false; // older than the window: taken as delivered
            }
            if (isSet(seq)) {
                return false;
            }
            set(seq);
            return true;
        }

        private int index(long seq) {
            return (int) (seq & (WINDOW - 1));
        }

        private boolean isSet(long seq) {
            return (bits[index(seq) >>> 6] & 1L << index(seq)) != 0;
        }

        private void set(long seq) {
            bits[index(seq) >>> 6] |= 1L << index(seq);
        }

        private void clear(long seq) {
            bits[index(seq) >>> 6] &= ~(1L << index(seq));
        }
    }

    private final Map<String, Window> windows = new LinkedHashMap<>(16, 0.75f, true) {
        private static final long serialVersionUID = 1L;

        @Override
        protected boolean removeEldestEntry(Map.Entry<String, Window> eldest) {
            return size() > MAX_SENDERS;
        }
    };

    /** Whether this message is delivered now for the first time; records it. */
    synchronized boolean firstTime(String from, long sequence, boolean answer) {
        return windows.computeIfAbsent(answer ? "\u0000" + from : from, k -> new Window()).firstTime(sequence);
    }

    /** Forgets a sender whose link ended cleanly with everything acknowledged: it will resend nothing. */
    synchronized void forget(String from) {
        windows.remove(from);
        windows.remove("\u0000" + from);
    }
}
