package io.gma.pcservlet;

import io.gma.internal.link.Link;

/**
 * What an uplink's endpoint has not been told it got yet: with a spool, a message is counted for the uplink's ACK
 * only once its record is on disk (an ACK is a promise the message survives a crash), and every message after one
 * that waits waits too, since an ACK counts the oldest messages first. Without a spool nothing ever waits here.
 * Touched on the uplink's event loop only; the spool's news comes to it as a task ({@link Link#execute}).
 */
final class PendingAcks {
    private final Link link;
    private final Spooling spooling;
    /** {record number or Spooling.NONE, bytes}, oldest first. */
    private final LongPairs waiting = new LongPairs();
    /** The highest record number known to be on disk, and the last one taken. */
    private long durable = Spooling.NONE;
    private long lastSpooled = Spooling.NONE;
    /** A wait for the spool is registered. */
    private boolean asked;

    PendingAcks(Link link, Spooling spooling) {
        this.link = link;
        this.spooling = spooling;
    }

    /** Whether nothing waits: a message taken now may be counted at once. */
    boolean isEmpty() {
        return waiting.isEmpty();
    }

    /**
     * A message of {@code bytes} was taken: spooled as record {@code seq}, or not spooled ({@link Spooling#NONE},
     * answered with an ERROR or taken in memory); it is counted once it and every one before it may be.
     */
    void taken(long seq, int bytes) {
        waiting.addLast(seq, bytes);
        if (seq != Spooling.NONE) {
            lastSpooled = seq;
        }
        countReady();
    }

    /** Counts what is on disk, from the oldest on; asks the spool to say when the rest is. */
    private void countReady() {
        int n = 0;
        long bytes = 0;
        while (!waiting.isEmpty() && (waiting.first() == Spooling.NONE || waiting.first() <= durable)) {
            bytes += waiting.second();
            waiting.removeFirst();
            n++;
        }
        link.countTaken(n, bytes);
        if (!waiting.isEmpty() && !asked) {
            asked = true;
            long upTo = lastSpooled;
            spooling.whenSafe(upTo, () -> link.execute(() -> {
                asked = false;
                durable = Math.max(durable, upTo);
                countReady();
            }));
        }
    }
}
