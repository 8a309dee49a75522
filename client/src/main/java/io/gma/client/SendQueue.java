package io.gma.client;

import io.gma.wire.Command;
import io.gma.wire.Envelope;
import io.gma.wire.ErrorCode;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.PriorityQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The messages for one peer that it has not acknowledged yet, in three rings of {@link SliceRing}:
 *
 * <pre>
 *   control : REPLY, ERROR, UNSUBSCRIBE not taken yet; never bounded like data, so they never wait behind it
 *   data    : DATA, REQUEST, SUBSCRIBE, application commands not taken yet; bounded by maxQueuedBytes and
 *             maxQueuedMessages, together with the data in flight
 *   flight  : taken by the current link, in wire order, until the peer acknowledges them; when a link is
 *             lost, the next one writes them again first, in their order
 * </pre>
 *
 * The bounds count data from the moment it is queued until it is acknowledged, so a slow peer fills the
 * queue and the producer blocks or fails (PROTOCOL.md section 4). The queue outlives links.
 *
 * <p>Bytes: a small data message is packed straight into the queue's current segment, an array that the
 * messages after it share, right after the message before it. The messages packed since a link last took are
 * the open run, two numbers; a link takes it as one slice with one call and writes it with one copy
 * ({@link #next}), and an ACK releases whole slices. So queueing a small message costs no array and no slot,
 * and taking and acknowledging a stream of them costs next to nothing a message. Bytes in a segment are written
 * once and never changed. Live data then lies in consecutive segments, so they hold at most the queue's bytes
 * plus two segments and the ends of segments that a message did not fit. Larger messages, control messages,
 * and every message under DROP_OLDEST (which removes messages from between those in flight and the rest, and
 * would leave segments held by a message or two each) keep arrays of their own. A segment is garbage once no
 * queued message lies in it, and the queue lets go of its current one when it is empty, so an idle peer holds
 * none.
 *
 * <p>Acknowledging: an ACK frees the oldest messages in flight; data messages are numbered as they are queued
 * ({@link Pending#index}) and acknowledged in that order, so a message is acknowledged when its index is at or
 * below {@code dataAcked}, and {@link #futureOf} works that out when asked. The queue keeps no {@link Pending}
 * for a message in a segment; it keeps the futures asked for, by index, and completes them as ACKs pass them.
 *
 * <p>One lock; no I/O and no future completion under it.
 */
final class SendQueue {
    /** Data messages this long or longer are packed into arrays of their own, before the lock is taken. */
    static final int OWN_ARRAY_BYTES = 4 * 1024;
    /** The largest segment; the first is {@link #FIRST_SEGMENT_BYTES}, and each one after is twice the last. */
    static final int SEGMENT_BYTES = 64 * 1024;
    /** Room for any message that goes into a segment. */
    static final int FIRST_SEGMENT_BYTES = OWN_ARRAY_BYTES;

    /** Whole messages, contiguous in one array, for a link to write: see {@link #next}. */
    static final class Run {
        byte[] bytes;
        int offset;
        int length;
    }

    private final ReentrantLock lock = new ReentrantLock();
    private final Condition room = lock.newCondition();
    private final long maxBytes;
    private final int maxMessages;
    private final Counters counters;
    private final SliceRing control = new SliceRing(16);
    private final SliceRing data = new SliceRing(16);
    private final SliceRing flight = new SliceRing(16);
    /**
     * How many slices of flight the carrier has taken, and the messages in them; those after wait to be
     * written again, after a lost link.
     */
    private int flightTaken;
    private long takenMessages;
    /** Where small data messages are packed, and how much of it is used; null before the first, and when empty. */
    private byte[] segment;
    private int segmentUsed;
    /**
     * The open run: the data messages packed into the segment since a slice was last made of it, from
     * openStart to segmentUsed, openCount of them. They are the newest data, after every slice in data; they
     * become a slice when a link takes them or something else is queued after them.
     */
    private int openStart;
    private int openCount;
    /** Data messages queued so far, the last one's index; and the index of the last one acknowledged. */
    private long dataQueued;
    private long dataAcked;
    /**
     * The messages whose futures were asked for before they were acknowledged, lowest index first; an ACK
     * completes those it passes. Dropped ones, failed already, are skipped then, or swept out once they
     * outnumber the messages queued ({@link #offerData}).
     */
    private final PriorityQueue<Pending> watched = new PriorityQueue<>((a, b) -> Long.compare(a.index, b.index));
    private long dataBytes;
    private int dataMessages;
    private long allBytes;
    /** Bytes queued and not yet taken by a link (control, data, and flight after a lost link). */
    private long unsentBytes;
    private int allMessages;
    private EndpointException closedBy;
    /** The link messages go out on; only it may take messages in flight or acknowledge them. */
    private Link carrier;

    SendQueue(long maxBytes, int maxMessages, Counters counters) {
        this.maxBytes = maxBytes;
        this.maxMessages = maxMessages;
        this.counters = counters;
    }

    /** maxQueuedBytes: data queued and not acknowledged, at most. */
    long maxBytes() {
        return maxBytes;
    }

    /**
     * Packs a data message between {@code envelope}'s names and queues it under the policy.
     *
     * @param p the message's {@link Sent}, with the sequence to pack
     * @return the bytes queued and not yet taken by a link, this message's included; or -1 when DROP_OLDEST
     *     found nothing unsent to drop, everything queued being in flight already, and dropped this message
     *     instead (counted, its future failed with QUEUE_FULL)
     * @throws EndpointException QUEUE_FULL (at once, after blockNanos, or larger than the whole queue), or
     *     the reason the queue was closed
     * @throws IllegalArgumentException what {@link Envelope#pack} refuses
     */
    long offerData(Pending p, Envelope envelope, Command command, byte[] payload, FullQueuePolicy policy,
            long blockNanos, String peer) throws EndpointException {
        int size = envelope.packedLength(command, payload);
        if (size > maxBytes) {
            counters.rejected.increment();
            throw new EndpointException(ErrorCode.QUEUE_FULL, "message of " + size + " bytes exceeds maxQueuedBytes "
                    + maxBytes);
        }
        byte[] own = null;
        if (size >= OWN_ARRAY_BYTES || policy == FullQueuePolicy.DROP_OLDEST) {
            own = new byte[size]; // packed here, not under the lock
            envelope.put(p.sequence(), command, payload, own, 0);
        }
        List<Pending> dropped = null;
        boolean queued;
        long unsent;
        lock.lock();
        try {
            checkOpen();
            if (!fits(size)) {
                switch (policy) {
                    case FAIL -> throw full(peer);
                    case DROP_OLDEST -> dropped = dropOldestFor(size);
                    default -> waitForRoom(size, blockNanos, peer);
                }
            }
            queued = fits(size);
            if (queued && own != null) {
                closeOpenRun();
                p.index = queue(size);
                data.add(own, 0, size, 1, p.index, p);
            } else if (queued) {
                if (segment == null || segment.length - segmentUsed < size) {
                    closeOpenRun();
                    segment = new byte[segment == null ? FIRST_SEGMENT_BYTES
                            : Math.min(SEGMENT_BYTES, segment.length * 2)];
                    segmentUsed = 0;
                    openStart = 0;
                }
                envelope.put(p.sequence(), command, payload, segment, segmentUsed);
                p.index = queue(size);
                segmentUsed += size;
                openCount++;
            } else {
                counters.drops.increment();
                dropped.add(p);
            }
            unsent = unsentBytes;
            if (dropped != null) {
                dropped = fail(dropped, new EndpointException(ErrorCode.QUEUE_FULL,
                        "dropped under DROP_OLDEST: the send queue for " + peer + " was full"));
                if (watched.size() > 2L * allMessages + 64) {
                    // a peer that acknowledges nothing while callers wait on what is dropped: those not failed
                    // are queued, so a sweep removes half the entries at least, and costs O(1) a drop over time
                    watched.removeIf(w -> w.failure != null);
                }
            }
        } finally {
            lock.unlock();
        }
        completeFailed(dropped);
        return queued ? unsent : -1;
    }

    /** Under the lock: makes the open run, if any, the last slice of data. */
    private void closeOpenRun() {
        if (openCount > 0) {
            data.add(segment, openStart, segmentUsed - openStart, openCount, dataQueued - openCount + 1, null);
            openStart = segmentUsed;
            openCount = 0;
        }
    }

    /** Under the lock: counts a data message of {@code size} bytes as queued; its index. */
    private long queue(int size) {
        dataBytes += size;
        dataMessages++;
        allBytes += size;
        allMessages++;
        unsentBytes += size;
        return ++dataQueued;
    }

    /**
     * Under the lock: marks {@code failed} as failed with {@code why}.
     *
     * @return those with a future, for {@link #completeFailed} once the lock is released
     */
    private static List<Pending> fail(Iterable<Pending> failed, EndpointException why) {
        List<Pending> withFuture = new ArrayList<>();
        for (Pending p : failed) {
            p.failure = why;
            if (p.future != null) {
                withFuture.add(p);
            }
        }
        return withFuture;
    }

    private static void completeFailed(List<Pending> failed) {
        if (failed != null) {
            for (Pending p : failed) {
                p.future.completeExceptionally(p.failure);
            }
        }
    }

    /**
     * The future of {@code p}, made now if nobody asked before; complete already if {@code p} was acknowledged
     * or failed.
     */
    CompletableFuture<Void> futureOf(Pending p) {
        lock.lock();
        try {
            if (p.future == null) {
                // made complete when it can be: nobody else sees it before it is stored
                if (p.failure != null) {
                    p.future = CompletableFuture.failedFuture(p.failure);
                } else if (p.index != 0 && p.index <= dataAcked) {
                    p.future = CompletableFuture.completedFuture(null);
                } else if (closedBy != null) {
                    p.future = CompletableFuture.failedFuture(closedBy); // queued, never acknowledged
                } else {
                    p.future = new CompletableFuture<>();
                    watched.add(p);
                }
            }
            return p.future;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Whether {@code messages} data messages of {@code bytes} in all would be queued now without waiting; an
     * empty data lane takes any amount, so that a batch larger than the whole queue is not refused forever.
     */
    boolean hasRoom(long bytes, int messages) {
        lock.lock();
        try {
            return dataMessages == 0 || dataBytes + bytes <= maxBytes && dataMessages + messages <= maxMessages;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Queues a packed data message without applying the bounds, for a caller that checked {@link #hasRoom} for
     * a whole batch: the batch goes in whole, overshooting by at most itself. The queue keeps the array.
     *
     * @throws EndpointException the reason the queue was closed
     */
    void addData(byte[] packed) throws EndpointException {
        lock.lock();
        try {
            checkOpen();
            closeOpenRun();
            data.add(packed, 0, packed.length, 1, queue(packed.length), null);
        } finally {
            lock.unlock();
        }
    }

    private boolean fits(int size) {
        return dataBytes + size <= maxBytes && dataMessages < maxMessages;
    }

    private EndpointException full(String peer) {
        counters.rejected.increment();
        return new EndpointException(ErrorCode.QUEUE_FULL, "send queue for " + peer + " is full: " + dataMessages
                + " messages, " + dataBytes + " bytes (maxQueuedMessages " + maxMessages + ", maxQueuedBytes "
                + maxBytes + ")");
    }

    /**
     * Drops data not taken yet from the front until the message fits or none is left. What is in flight
     * stays, and so do messages the queue keeps no Pending for: those in segments (queued under another
     * policy) and a gateway's ({@link #addData}); a queue under DROP_OLDEST holds neither.
     */
    private List<Pending> dropOldestFor(int size) {
        List<Pending> dropped = new ArrayList<>();
        while (!fits(size) && !data.isEmpty() && data.pending(0) != null) {
            int length = data.length(0);
            dataBytes -= length;
            dataMessages--;
            allBytes -= length;
            allMessages--;
            unsentBytes -= length;
            counters.drops.increment();
            dropped.add(data.pending(0));
            data.removeFirst();
        }
        return dropped;
    }

    private void waitForRoom(int size, long blockNanos, String peer) throws EndpointException {
        counters.waits.increment();
        long left = blockNanos;
        try {
            while (!fits(size)) {
                if (left <= 0) {
                    throw full(peer);
                }
                left = room.awaitNanos(left);
                checkOpen();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new EndpointException(ErrorCode.QUEUE_FULL, "interrupted while waiting for room to " + peer, e);
        }
    }

    /**
     * Queues a packed control message: it never waits, and goes out before data. Bounded all the same, at
     * twice maxQueuedBytes (always room for one), so a peer that floods requests and never reads cannot make
     * its replies fill memory. The queue keeps the array.
     *
     * @return the bytes queued and not yet taken by a link, this message's included
     * @throws EndpointException QUEUE_FULL past that bound
     */
    long offerControl(byte[] packed) throws EndpointException {
        lock.lock();
        try {
            checkOpen();
            long controlBytes = allBytes - dataBytes;
            if (controlBytes > 0 && controlBytes + packed.length > 2 * maxBytes) {
                counters.rejected.increment();
                throw new EndpointException(ErrorCode.QUEUE_FULL, "control messages for this peer passed "
                        + 2 * maxBytes + " bytes: it is not reading");
            }
            control.add(packed, 0, packed.length, 1, 0, null);
            allBytes += packed.length;
            allMessages++;
            unsentBytes += packed.length;
            return unsentBytes;
        } finally {
            lock.unlock();
        }
    }

    private void checkOpen() throws EndpointException {
        if (closedBy != null) {
            throw closedBy;
        }
    }

    /** {@code link} carries this queue's messages from now on (it had nothing in flight before). */
    void carriedBy(Link link) {
        lock.lock();
        try {
            carrier = link;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Puts into {@code run} the next messages for {@code link} to write, whole and contiguous in one array:
     * what a lost link had in flight first, then control, then data, a slice at a time (a segment's messages
     * queued since the link last took, or a message of its own). They are in flight from then on, and the link
     * writes all of {@code run}. None when there is none, or when {@code link} no longer carries this queue: a
     * writer that raced with the link's loss then takes nothing, rather than strand messages in flight on a
     * dead link.
     *
     * <p>The run's bytes never change (not even when a peer acknowledges what it has not been sent yet), so
     * the link copies them outside the lock.
     *
     * @return how many messages the run holds
     */
    int next(Link link, Run run) {
        lock.lock();
        try {
            if (link != carrier) {
                return 0;
            }
            int i = flightTaken;
            if (i == flight.size()) {
                if (data.isEmpty() && control.isEmpty()) {
                    closeOpenRun();
                }
                if (!control.isEmpty()) {
                    control.moveFirstTo(flight);
                } else if (!data.isEmpty()) {
                    data.moveFirstTo(flight);
                } else {
                    return 0;
                }
            }
            flightTaken = i + 1;
            takenMessages += flight.count(i);
            unsentBytes -= flight.length(i);
            run.bytes = flight.array(i);
            run.offset = flight.offset(i);
            run.length = flight.length(i);
            return flight.count(i);
        } finally {
            lock.unlock();
        }
    }

    /** The length of the first {@code messages} messages packed from {@code array[offset]}. */
    private static int bytesOf(byte[] array, int offset, int messages) {
        int at = offset;
        for (int i = 0; i < messages; i++) {
            at += Envelope.lengthAt(array, at);
        }
        return at - offset;
    }

    /**
     * Releases the {@code count} oldest messages in flight on {@code link} and completes the futures asked
     * for them. An ACK from a link that no longer carries the queue releases nothing: its messages were put
     * back. Nor does an ACK release more than the link took.
     */
    void acknowledge(Link link, long count) {
        List<Pending> done = null;
        lock.lock();
        try {
            if (link != carrier) {
                return;
            }
            long released = Math.min(count, takenMessages);
            takenMessages -= released;
            for (long n = released; n > 0;) {
                int messages = flight.count(0);
                if (messages <= n) {
                    release(flight.length(0), messages, flight.index(0));
                    flight.removeFirst();
                    flightTaken--;
                } else {
                    messages = (int) n; // the first messages of a run: the rest stays in flight
                    int bytes = bytesOf(flight.array(0), flight.offset(0), messages);
                    release(bytes, messages, flight.index(0));
                    flight.dropFirstMessages(messages, bytes);
                }
                n -= messages;
            }
            if (allMessages == 0) {
                segment = null; // no message lies in it any more: the next starts small
            }
            if (released > 0) {
                room.signalAll();
            }
            while (!watched.isEmpty() && watched.peek().index <= dataAcked) {
                Pending p = watched.poll();
                if (p.failure == null) { // else dropped, and failed then
                    if (done == null) {
                        done = new ArrayList<>();
                    }
                    done.add(p);
                }
            }
        } finally {
            lock.unlock();
        }
        if (done != null) {
            for (Pending p : done) {
                p.future.complete(null);
            }
        }
    }

    /** Under the lock: {@code messages} messages of {@code bytes} are gone, the first with data index {@code index}. */
    private void release(int bytes, int messages, long index) {
        allBytes -= bytes;
        allMessages -= messages;
        if (index != 0) {
            dataBytes -= bytes;
            dataMessages -= messages;
            dataAcked = index + messages - 1;
        }
    }

    /**
     * {@code link} is gone. If it carried the messages, what it had in flight is written again first, in its
     * order, by {@code next}, which carries the queue from now on (null: none yet).
     */
    void linkLost(Link link, Link next) {
        lock.lock();
        try {
            if (carrier != link) {
                return;
            }
            for (int i = 0; i < flightTaken; i++) {
                unsentBytes += flight.length(i);
            }
            flightTaken = 0;
            takenMessages = 0;
            carrier = next;
        } finally {
            lock.unlock();
        }
    }

    boolean isEmpty() {
        lock.lock();
        try {
            return allMessages == 0;
        } finally {
            lock.unlock();
        }
    }

    /** Fails every message with {@code reason} (their futures too, once the lock is released) and refuses new ones. */
    void close(EndpointException reason) {
        close(reason, null);
    }

    /**
     * As {@link #close(EndpointException)}.
     *
     * @return the packed messages failed, oldest first: those in flight, then control, then data
     */
    List<byte[]> closeKeeping(EndpointException reason) {
        List<byte[]> failed = new ArrayList<>();
        close(reason, failed);
        return failed;
    }

    private void close(EndpointException reason, List<byte[]> keep) {
        List<Pending> failed;
        lock.lock();
        try {
            if (closedBy == null) {
                closedBy = reason; // futures asked for from now on fail with it, unless acknowledged or dropped
            }
            closeOpenRun();
            for (SliceRing ring : List.of(flight, control, data)) {
                for (int i = 0; keep != null && i < ring.size(); i++) {
                    byte[] array = ring.array(i);
                    for (int at = ring.offset(i), end = at + ring.length(i); at < end;) {
                        int length = Envelope.lengthAt(array, at);
                        keep.add(Arrays.copyOfRange(array, at, at + length));
                        at += length;
                    }
                }
                ring.clear();
            }
            flightTaken = 0;
            takenMessages = 0;
            segment = null;
            dataBytes = 0;
            dataMessages = 0;
            allBytes = 0;
            allMessages = 0;
            unsentBytes = 0;
            List<Pending> waiting = new ArrayList<>();
            for (Pending p : watched) {
                if (p.failure == null) {
                    waiting.add(p);
                }
            }
            watched.clear();
            failed = fail(waiting, reason);
            room.signalAll();
        } finally {
            lock.unlock();
        }
        completeFailed(failed);
    }

    long bytes() {
        lock.lock();
        try {
            return allBytes;
        } finally {
            lock.unlock();
        }
    }

    /** How many futures asked for an ACK may still complete, dropped ones not swept yet included. */
    int futuresWatched() {
        lock.lock();
        try {
            return watched.size();
        } finally {
            lock.unlock();
        }
    }

    int messages() {
        lock.lock();
        try {
            return allMessages;
        } finally {
            lock.unlock();
        }
    }
}
