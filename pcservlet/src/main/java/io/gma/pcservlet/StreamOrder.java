package io.gma.pcservlet;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Takes the batches a sending domain has in flight at once in the order it sent them (docs/pcservlet.md,
 * "Several batches in flight"; protocol.md section 6, extension "Ordered streams").
 *
 * <p>A sender that posts several batches at once numbers them: {@code X-Gma-Stream: stream/epoch/batch}, its
 * stream a random number of its own, the epoch counting its restarts of numbering, the batch counting from 1
 * in each epoch. Batch n of an epoch is taken once n - 1 was: one that comes early waits its turn, for
 * {@link #WAIT_NANOS} at most. A batch after the first of a stream or epoch this side does not know (it
 * restarted since the first came, or forgot the stream) is answered 409 at once when it is numbered past
 * {@link #MAX_WINDOW}, and waits {@link #UNKNOWN_WAIT_NANOS} at most for the first otherwise. A batch refused
 * for now (429, 503) breaks its epoch: the batches after it, which hold later messages of the same senders, are
 * answered 409 without being taken, and the sender posts them again
 * in a new epoch after the refused one. A new epoch supersedes the old one, whose waiting batches are answered
 * 409 too; a batch of the old epoch still being taken then ends without moving the new one on. A batch numbered
 * below the turn is one posted again (its answer was lost): it is taken in its turn, and what it delivered already
 * is dropped where it is delivered.
 *
 * <p>Each stream of a sending domain is numbered and taken on its own: a domain sends on one stream a destination
 * domain it reaches through this PC servlet (an outbound-only domain reaches every other through the one it
 * polls), and a restarted sender on a new one. One batch of a stream is taken at a time: a repeat never races
 * the batch after it. Taking ends when the batch is queued, before the spool's force, so that the next batch is
 * queued while the force of this one runs.
 */
final class StreamOrder {
    /** The longest a batch waits for its turn before it is answered 409. */
    static final long WAIT_NANOS = TimeUnit.SECONDS.toNanos(10);
    /**
     * The longest a batch after the first of a stream or epoch this side does not know waits for that first one:
     * past it, this side has most likely forgotten the stream (it restarted, or the stream was evicted), and the
     * sender's first batch will never come. A first batch that is merely late costs a new epoch, nothing more.
     */
    static final long UNKNOWN_WAIT_NANOS = TimeUnit.SECONDS.toNanos(1);
    /** The most batches a sender may have in flight, told in {@link Tunnel#WINDOW_HEADER}. */
    static final int MAX_WINDOW = 16;
    /** Sending streams remembered; the least recently seen idle one goes past it. */
    static final int MAX_DOMAINS = 4096;

    /** Where a batch stands in its sender's numbering, from {@link Tunnel#STREAM_HEADER}. */
    record Position(long stream, long epoch, long batch) {
        /**
         * {@code stream/epoch/batch}: the stream in hex, epoch and batch in decimal, both from 1; null for no
         * header (a sender with one batch in flight at a time, taken as it comes).
         *
         * @throws IllegalArgumentException naming the header when it is malformed
         */
        static Position parse(String header) {
            if (header == null) {
                return null;
            }
            String[] parts = header.trim().split("/");
            try {
                if (parts.length == 3 && parts[0].length() <= 16) {
                    Position p = new Position(Long.parseUnsignedLong(parts[0], 16), Long.parseLong(parts[1]),
                            Long.parseLong(parts[2]));
                    if (p.epoch >= 1 && p.batch >= 1) {
                        return p;
                    }
                }
            } catch (NumberFormatException e) {
                // said below
            }
            String shown = header.length() <= 80 ? header : header.substring(0, 80) + "...";
            throw new IllegalArgumentException("header " + Tunnel.STREAM_HEADER + " \"" + shown
                    + "\" is not stream/epoch/batch (hex, then two numbers from 1)");
        }

        @Override
        public String toString() {
            return Long.toHexString(stream) + "/" + epoch + "/" + batch;
        }
    }

    /** What one sending domain's numbering is at. Guarded by the lock. */
    private static final class Sender {
        long epoch;
        long next = 1;
        /** A batch of this epoch was refused for now: the rest of the epoch is refused. */
        boolean broken;
        /** A batch of this sender is being taken. */
        boolean busy;
    }

    /** A batch's turn: end it once the batch is queued, or refused. */
    final class Turn {
        private final Sender sender;
        private final boolean repeat;
        /** The epoch it was taken in: one begun since is not this turn's to move on, or to break. */
        private final long epoch;

        private Turn(Sender sender, boolean repeat) {
            this.sender = sender;
            this.repeat = repeat;
            this.epoch = sender.epoch;
        }

        private boolean ended;

        /**
         * The batch was queued, or refused for good ({@code advance}: its sender will not post it again, and the
         * next may come), or refused for now (not {@code advance}: the epoch is broken); a turn ended already
         * stays as it ended.
         */
        void endIfOpen(boolean advance) {
            lock.lock();
            try {
                if (ended) {
                    return;
                }
                ended = true;
                sender.busy = false;
                if (sender.epoch != epoch) {
                    // a new epoch began while this batch was taken: its numbering is its own
                } else if (!advance) {
                    sender.broken = true;
                } else if (!repeat) {
                    sender.next++;
                }
                turned.signalAll();
            } finally {
                lock.unlock();
            }
        }
    }

    private final ReentrantLock lock = new ReentrantLock();
    private final Condition turned = lock.newCondition();
    /**
     * By sending domain and stream: a domain may send on several streams at once (one a destination domain it
     * reaches through this PC servlet), each numbered on its own.
     */
    private final Map<String, Sender> senders = new LinkedHashMap<>(64, 0.75f, true);

    /**
     * Waits for the turn of batch {@code p} of domain {@code from}.
     *
     * @return its turn, or null when it will not come: its epoch was superseded or broken, or it waited
     *     {@link #WAIT_NANOS} (answer 409: the sender posts it again in a new epoch)
     */
    Turn await(String from, Position p) throws InterruptedException {
        long start = System.nanoTime();
        long deadline = start + WAIT_NANOS;
        String key = from + "/" + Long.toHexString(p.stream);
        lock.lock();
        try {
            while (true) {
                Sender s = senders.get(key);
                if (s == null || s.epoch < p.epoch) {
                    if (p.batch == 1) {
                        s = start(key, s, p);
                    } else if (p.batch > MAX_WINDOW) {
                        return null; // its epoch's first batch went long ago (at most MAX_WINDOW are in flight)
                    } else {
                        deadline = Math.min(deadline, start + UNKNOWN_WAIT_NANOS);
                    }
                } else if (s.epoch > p.epoch || s.broken) {
                    return null;
                }
                if (s != null && s.epoch == p.epoch && !s.busy && p.batch <= s.next) {
                    s.busy = true;
                    return new Turn(s, p.batch < s.next);
                }
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    return null;
                }
                turned.awaitNanos(left);
            }
        } finally {
            lock.unlock();
        }
    }

    /** Under the lock: {@code p} starts an epoch (or a stream) of {@code key}; the old epoch's waiters give up. */
    private Sender start(String key, Sender old, Position p) {
        Sender s = old;
        if (s == null) {
            s = new Sender();
            if (senders.size() >= MAX_DOMAINS) {
                senders.values().removeIf(idle -> !idle.busy && senders.size() >= MAX_DOMAINS);
            }
            senders.put(key, s);
        }
        s.epoch = p.epoch;
        s.next = 1;
        s.broken = false;
        turned.signalAll();
        return s;
    }
}
