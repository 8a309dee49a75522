package io.gma.internal.link;

import io.gma.wire.Command;
import io.gma.wire.Envelope;
import io.gma.wire.ErrorCode;
import io.gma.wire.Message;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The messages for one peer that it has not acknowledged yet, in three {@link Lanes}: control (REPLY, ERROR,
 * UNSUBSCRIBE), data, and what is in flight on the link that carries the queue. The bounds count data from the
 * moment it is queued until it is acknowledged, so a slow peer fills the queue and the producer blocks or fails
 * (protocol.md section 4). The queue outlives links.
 *
 * <p>Bytes: a small data message is packed straight into a segment shared with the messages around it
 * ({@link SegmentPacker}); a link takes the messages packed since it last took as one slice with one call and
 * writes them with one copy ({@link #next}), and an ACK releases whole slices. So queueing a small message
 * costs no array and no slot, and taking and acknowledging a stream of them costs next to nothing a message.
 * Larger messages, control messages, and every message under DROP_OLDEST (which removes messages from between
 * those in flight and the rest, and would leave segments held by a message or two each) keep arrays of their
 * own.
 *
 * <p>Acknowledging: an ACK frees the oldest messages in flight; data messages are numbered as they are queued
 * ({@link QueuedMessage#index}) and acknowledged in that order, so a message is acknowledged when its index is
 * at or below the last index acknowledged, and {@link #futureOf} works that out when asked. The queue keeps no
 * {@link QueuedMessage} for a message in a segment; the {@link AckWatch} keeps the futures asked for, by index.
 *
 * <p>The link that carries the queue is known by identity only ({@link #carriedBy}): the queue hands messages
 * to that link and takes ACKs from it, and from no other.
 *
 * <p>One lock; no I/O and no future completion under it. That lock is why this is one class of a little over
 * 400 lines: every operation here is a step under it, over {@link Lanes} and the {@link AckWatch}, which hold the
 * state.
 */
public final class SendQueue {
    /** Data messages this long or longer are packed into arrays of their own, before the lock is taken. */
    static final int OWN_ARRAY_BYTES = 4 * 1024;
    /**
     * The most messages a queue may be bounded to: a receiver remembers the last 65,536 sequence numbers it
     * delivered from each sender (docs/protocol.md), which is exact only while no sender has more than that
     * unacknowledged to one peer.
     */
    public static final int MAX_MESSAGES = 65_536;

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
    private final LinkCounters counters;
    private final Lanes lanes = new Lanes();
    private final AckWatch watch = new AckWatch();
    /** Told, outside the lock, when an ACK freed room (null: nobody); for a queue whose producer does not wait. */
    private final Runnable roomFreed;
    private LinkException closedBy;
    /** The link messages go out on, by identity; only it may take messages in flight or acknowledge them. */
    private Object carrier;

    /**
     * @param maxBytes maxQueuedBytes: data queued and not acknowledged, at most
     * @param maxMessages maxQueuedMessages, likewise
     * @param counters where waits, drops and refusals are counted
     */
    public SendQueue(long maxBytes, int maxMessages, LinkCounters counters) {
        this(maxBytes, maxMessages, counters, null);
    }

    /**
     * A queue that says when an ACK frees room: for an owner that does not block on {@link #offerData} but holds
     * messages back until there is room (a PC servlet's queue for an endpoint of its domain).
     *
     * @param roomFreed run on the acknowledging link's event loop, outside the queue's lock
     */
    public SendQueue(long maxBytes, int maxMessages, LinkCounters counters, Runnable roomFreed) {
        this.maxBytes = maxBytes;
        this.maxMessages = maxMessages;
        this.counters = counters;
        this.roomFreed = roomFreed;
    }

    /** maxQueuedBytes: data queued and not acknowledged, at most. */
    public long maxBytes() {
        return maxBytes;
    }

    /**
     * Packs a data message between {@code envelope}'s names and queues it under the policy.
     *
     * @param m the message, with the sequence to pack
     * @param peer the peer's name, for error messages
     * @return the bytes queued and not yet taken by a link, this message's included; or -1 when DROP_OLDEST
     *     found nothing unsent to drop, everything queued being in flight already, and dropped this message
     *     instead (counted, its future failed with QUEUE_FULL)
     * @throws LinkException QUEUE_FULL (at once, after blockNanos, or larger than the whole queue), or
     *     the reason the queue was closed
     * @throws IllegalArgumentException what {@link Envelope#pack} refuses
     */
    public long offerData(QueuedMessage m, Envelope envelope, Command command, byte[] payload, WhenFull policy,
            long blockNanos, String peer) throws LinkException {
        return offerData(m, envelope, command, Message.defaultFlags(command), payload, policy, blockNanos, peer);
    }

    /**
     * As {@link #offerData(QueuedMessage, Envelope, Command, byte[], WhenFull, long, String)}, packed with
     * {@code flags} instead of the usual ones: REPLY_EXPECTED on a DATA asks its destination for a receipt.
     *
     * @param flags 0 or {@link Message#REPLY_EXPECTED}, as {@link Envelope#put(long, Command, int, byte[], byte[],
     *     int)} takes them
     * @param envelope null when {@code payload} is the message packed already ({@link #offerPacked})
     */
    public long offerData(QueuedMessage m, Envelope envelope, Command command, int flags, byte[] payload,
            WhenFull policy, long blockNanos, String peer) throws LinkException {
        // one method, the hot path of every send (and offerPacked's, with envelope null): split in two, the direct
        // path's streaming of 64 B lost about 6% (bench/RESULTS.md, issue 20)
        int size = envelope == null ? payload.length : envelope.packedLength(command, payload);
        if (size > maxBytes) {
            throw tooLarge(size);
        }
        byte[] own = null;
        if (envelope == null) {
            own = payload; // packed already
        } else if (size >= OWN_ARRAY_BYTES || policy == WhenFull.DROP_OLDEST) {
            own = envelope.pack(m.sequence(), command, flags, payload); // packed here, not under the lock
        }
        List<QueuedMessage> dropped = null;
        boolean queued;
        long unsent;
        lock.lock();
        try {
            checkOpen();
            if (!fits(size)) {
                dropped = makeRoom(size, policy, blockNanos, peer);
            }
            queued = fits(size);
            if (queued) {
                m.index = own != null ? lanes.addData(own, m) : lanes.pack(envelope, m.sequence(), command, flags,
                        payload, size);
            } else {
                counters.drops.increment();
                dropped.add(m);
            }
            unsent = lanes.unsentBytes;
            if (dropped != null) {
                dropped = AckWatch.markFailed(dropped, new LinkException(ErrorCode.QUEUE_FULL,
                        "dropped under DROP_OLDEST: the send queue for " + peer + " was full"));
                watch.sweepFailed(lanes.allMessages);
            }
        } finally {
            lock.unlock();
        }
        AckWatch.fail(dropped);
        return queued ? unsent : -1;
    }

    /**
     * Queues a data message packed already (with {@code m}'s sequence) under the policy, as {@link #offerData}
     * does: for an owner that keeps the same bytes elsewhere too (the client's outbox on disk). The queue keeps
     * the array, which must not change.
     *
     * @return as {@link #offerData}
     * @throws LinkException as {@link #offerData}
     */
    public long offerPacked(QueuedMessage m, byte[] packed, WhenFull policy, long blockNanos, String peer)
            throws LinkException {
        return offerData(m, null, null, 0, packed, policy, blockNanos, peer);
    }

    /**
     * The future of {@code m}, made now if nobody asked before; complete already when it returns if {@code m} was
     * acknowledged or failed.
     */
    CompletableFuture<Void> futureOf(QueuedMessage m) {
        LinkException failed;
        CompletableFuture<Void> made;
        lock.lock();
        try {
            if (m.future != null) {
                return m.future;
            }
            boolean acked = m.index != 0 && m.index <= lanes.dataAcked;
            if (m.failure == null && acked) {
                m.failure = watch.refusal(m.sequence()); // refused by the peer before its ACK passed it, or null
            }
            if (m.failure != null) {
                failed = m.failure;
            } else if (acked) {
                m.future = CompletableFuture.completedFuture(null);
                return m.future;
            } else if (closedBy != null) {
                failed = closedBy; // queued, never acknowledged
            } else {
                m.future = new CompletableFuture<>();
                watch.add(m);
                return m.future;
            }
            made = new CompletableFuture<>();
            m.future = made;
        } finally {
            lock.unlock();
        }
        // failed already: nothing else completes it, and the sender's form of the failure is made without the lock
        made.completeExceptionally(m.failureSeenBySender(failed));
        return made;
    }

    /**
     * Waits for room for a data message of {@code size} packed bytes as {@link #offerData} would (BLOCK up to
     * {@code blockNanos}; FAIL refuses at once), and queues nothing: for a caller that does something before it
     * offers the message (the client's outbox appends it to disk) and should not do it for a message refused.
     * The room may be taken by another sender before the offer, which then applies the policy again. Under
     * DROP_OLDEST it does nothing: the offer drops what it must.
     *
     * @throws LinkException as {@link #offerData}
     */
    public void awaitRoom(int size, WhenFull policy, long blockNanos, String peer) throws LinkException {
        if (size > maxBytes) {
            throw tooLarge(size);
        }
        lock.lock();
        try {
            checkOpen();
            if (!fits(size) && policy != WhenFull.DROP_OLDEST) {
                makeRoom(size, policy, blockNanos, peer);
            }
        } finally {
            lock.unlock();
        }
    }

    /**
     * Under the lock, for a message of {@code size} that does not fit: the policy. FAIL throws QUEUE_FULL, BLOCK
     * waits for room (QUEUE_FULL after blockNanos), DROP_OLDEST drops from the front and returns what it dropped.
     */
    private List<QueuedMessage> makeRoom(int size, WhenFull policy, long blockNanos, String peer)
            throws LinkException {
        switch (policy) {
            case FAIL -> throw full(peer);
            case DROP_OLDEST -> {
                return dropOldestFor(size);
            }
            default -> {
                waitForRoom(size, blockNanos, peer);
                return null;
            }
        }
    }

    /**
     * Whether {@code messages} data messages of {@code bytes} in all would be queued now without waiting; an
     * empty data lane takes any amount, so that a batch larger than the whole queue is not refused forever.
     */
    public boolean hasRoom(long bytes, int messages) {
        lock.lock();
        try {
            return lanes.dataMessages == 0
                    || lanes.dataBytes + bytes <= maxBytes && lanes.dataMessages + messages <= maxMessages;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Queues a packed data message without applying the bounds, for a caller that checked {@link #hasRoom} for
     * a whole batch: the batch goes in whole, overshooting by at most itself. The queue keeps the array.
     *
     * @return its number among data messages, from 1: it is acknowledged once {@link #dataAcknowledged} reaches it
     * @throws LinkException the reason the queue was closed
     */
    public long addData(byte[] packed) throws LinkException {
        lock.lock();
        try {
            checkOpen();
            return lanes.addData(packed, null);
        } finally {
            lock.unlock();
        }
    }

    /**
     * As {@link #addData(byte[])}, for a message whose sender may ask for its acknowledgement through {@code m}
     * (which has the sequence packed in it): the client's outbox queues what it held on disk again this way
     * when it starts, before any new send.
     */
    public long addData(byte[] packed, QueuedMessage m) throws LinkException {
        lock.lock();
        try {
            checkOpen();
            m.index = lanes.addData(packed, m);
            return lanes.unsentBytes;
        } finally {
            lock.unlock();
        }
    }

    private boolean fits(int size) {
        return lanes.dataBytes + size <= maxBytes && lanes.dataMessages < maxMessages;
    }

    private LinkException tooLarge(int size) {
        counters.rejected.increment();
        return new LinkException(ErrorCode.QUEUE_FULL, "message of " + size + " bytes exceeds maxQueuedBytes "
                + maxBytes);
    }

    private LinkException full(String peer) {
        counters.rejected.increment();
        return new LinkException(ErrorCode.QUEUE_FULL, "send queue for " + peer + " is full: " + lanes.dataMessages
                + " messages, " + lanes.dataBytes + " bytes (maxQueuedMessages " + maxMessages + ", maxQueuedBytes "
                + maxBytes + ")");
    }

    /**
     * Drops data not taken yet from the front until the message fits or none is left. What is in flight
     * stays, and so do messages the queue keeps no QueuedMessage for: those in segments (queued under another
     * policy) and a gateway's ({@link #addData}); a queue under DROP_OLDEST holds neither.
     */
    private List<QueuedMessage> dropOldestFor(int size) {
        List<QueuedMessage> dropped = new ArrayList<>();
        for (QueuedMessage m; !fits(size) && (m = lanes.dropOldest()) != null;) {
            counters.drops.increment();
            dropped.add(m);
        }
        return dropped;
    }

    private void waitForRoom(int size, long blockNanos, String peer) throws LinkException {
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
            throw new LinkException(ErrorCode.QUEUE_FULL, "interrupted while waiting for room to " + peer, e);
        }
    }

    /**
     * Queues a packed control message: it never waits, and goes out before data. Bounded all the same, at
     * twice maxQueuedBytes (always room for one), so a peer that floods requests and never reads cannot make
     * its replies fill memory. The queue keeps the array.
     *
     * @return the bytes queued and not yet taken by a link, this message's included
     * @throws LinkException QUEUE_FULL past that bound, or the reason the queue was closed
     */
    public long offerControl(byte[] packed) throws LinkException {
        lock.lock();
        try {
            checkOpen();
            long controlBytes = lanes.allBytes - lanes.dataBytes;
            if (controlBytes > 0 && controlBytes + packed.length > 2 * maxBytes) {
                counters.rejected.increment();
                throw new LinkException(ErrorCode.QUEUE_FULL, "control messages for this peer passed "
                        + 2 * maxBytes + " bytes: it is not reading");
            }
            lanes.addControl(packed);
            return lanes.unsentBytes;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Queues a packed control message as {@link #offerControl} does, for a caller that wants to know when it is
     * acknowledged rather than how much waits.
     *
     * @return its number among control messages, from 1: it is acknowledged once {@link #controlAcknowledged}
     *     reaches it
     * @throws LinkException as {@link #offerControl}
     */
    public long addControl(byte[] packed) throws LinkException {
        lock.lock();
        try {
            offerControl(packed);
            return lanes.controlQueued;
        } finally {
            lock.unlock();
        }
    }

    /** The number of the last data message the peer acknowledged: it has every one up to it. */
    public long dataAcknowledged() {
        lock.lock();
        try {
            return lanes.dataAcked;
        } finally {
            lock.unlock();
        }
    }

    /** The number of the last control message the peer acknowledged: it has every one up to it. */
    public long controlAcknowledged() {
        lock.lock();
        try {
            return lanes.controlAcked;
        } finally {
            lock.unlock();
        }
    }

    private void checkOpen() throws LinkException {
        if (closedBy != null) {
            throw closedBy;
        }
    }

    /** {@code link} carries this queue's messages from now on (it had nothing in flight before). */
    void carriedBy(Object link) {
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
    int next(Object link, Run run) {
        lock.lock();
        try {
            return link == carrier ? lanes.take(run) : 0;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Releases the {@code count} oldest messages in flight on {@code link} and completes the futures asked
     * for them. An ACK from a link that no longer carries the queue releases nothing: its messages were put
     * back. Nor does an ACK release more than the link took.
     */
    void acknowledge(Object link, long count) {
        List<QueuedMessage> done;
        boolean freed;
        lock.lock();
        try {
            if (link != carrier) {
                return;
            }
            freed = lanes.release(count) > 0;
            if (freed) {
                room.signalAll();
            }
            done = watch.passedBy(lanes.dataAcked);
        } finally {
            lock.unlock();
        }
        AckWatch.acknowledge(done);
        if (freed && roomFreed != null) {
            roomFreed.run();
        }
    }

    /**
     * {@code link} is gone. If it carried the messages, what it had in flight is written again first, in its
     * order, by {@code next}, which carries the queue from now on (null: none yet).
     */
    void linkLost(Object link, Object next) {
        lock.lock();
        try {
            if (carrier != link) {
                return;
            }
            lanes.putBackFlight();
            watch.forgetRefused();
            carrier = next;
        } finally {
            lock.unlock();
        }
    }

    /**
     * The peer refused the message numbered {@code sequence} with an ERROR that it wrote before the ACK that passes
     * the message (a PC servlet's uplink does, for a destination that is full): the ACK then fails its future with
     * {@code why} instead of completing it. The link's loop calls this as it reads the ERROR.
     */
    public void refused(long sequence, LinkException why) {
        lock.lock();
        try {
            watch.refuse(sequence, why);
        } finally {
            lock.unlock();
        }
    }

    /** Whether nothing is queued: nothing unsent, nothing unacknowledged. */
    public boolean isEmpty() {
        return messages() == 0;
    }

    /** Fails every message with {@code reason} (their futures too, once the lock is released) and refuses new ones. */
    public void close(LinkException reason) {
        close(reason, null);
    }

    /**
     * As {@link #close(LinkException)}.
     *
     * @return the packed messages failed, oldest first: those in flight, then control, then data
     */
    public List<byte[]> closeKeeping(LinkException reason) {
        List<byte[]> failed = new ArrayList<>();
        close(reason, failed);
        return failed;
    }

    private void close(LinkException reason, List<byte[]> keep) {
        List<QueuedMessage> failed;
        lock.lock();
        try {
            if (closedBy == null) {
                closedBy = reason; // futures asked for from now on fail with it, unless acknowledged or dropped
            }
            lanes.clear(keep);
            failed = AckWatch.markFailed(watch.removeWaiting(), reason);
            room.signalAll();
        } finally {
            lock.unlock();
        }
        AckWatch.fail(failed);
    }

    /** Bytes queued: unsent and unacknowledged. */
    public long bytes() {
        lock.lock();
        try {
            return lanes.allBytes;
        } finally {
            lock.unlock();
        }
    }

    /** Messages queued: unsent and unacknowledged. */
    public int messages() {
        lock.lock();
        try {
            return lanes.allMessages;
        } finally {
            lock.unlock();
        }
    }

    /** How many futures asked for an ACK may still complete, dropped ones not swept yet included. */
    int futuresWatched() {
        lock.lock();
        try {
            return watch.size();
        } finally {
            lock.unlock();
        }
    }
}
