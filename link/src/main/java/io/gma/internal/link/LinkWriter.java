package io.gma.internal.link;

import io.gma.wire.ErrorCode;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.CancelledKeyException;
import java.nio.channels.SelectionKey;
import java.util.ArrayDeque;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A link's output: what is to be written, in what order, by which thread, and when.
 *
 * <p>Whoever has something to send calls {@link #flush()}, which writes at once, without blocking, from the
 * calling thread; what the socket does not take waits for the event loop to finish it when the socket is
 * writable. A send after a pause thus costs no thread hop. Sends in a stream are left to the event loop
 * instead ({@link #send}), which writes them in batches while the senders go on packing the next messages.
 *
 * <p>Order: immediate messages first (HELLO, WELCOME, ACK, PING, PONG, BYE, a closing ERROR: uncounted, they
 * never wait behind data), then the runs of the {@link SendQueue} the link carries. Messages are copied into one
 * direct buffer: one system call carries many small ones, and a large one goes out in pieces without a
 * temporary copy of it all. The buffer is borrowed from {@link BufferPool#OUTPUT} while bytes wait to be written,
 * and given back once they are all written: an idle link holds none.
 *
 * <p>Threads: the output state is under one lock, {@code out}. The one piece of I/O done under it is a write to a
 * non-blocking channel, which cannot block; a thread that finds the lock taken leaves a flag ({@code dirty}),
 * and the holder writes again before it lets go. With TLS, every wrap is under it too.
 */
final class LinkWriter {
    /**
     * Sends this close together (on average, since the clock is read once in {@link #CLOCK_EVERY} sends in a
     * stream) are a stream: the event loop writes them in batches, and lingers this long for more before it
     * writes a batch that is not full.
     */
    static final long COALESCE_NANOS = TimeUnit.MICROSECONDS.toNanos(20);
    /**
     * Sends this close together (on average) with nothing coming back between them are a stream too: one-way
     * traffic, such as a producer's batches of rows, which the writes from the sending thread would slow (on
     * loopback a write carries the packet through the receiver's TCP stack too). The event loop writes them
     * without lingering, as they come too far apart for a linger to gather more. A request and its reply, or a
     * ping-pong, never count by this: something comes back between two sends. Neither does a send after an ACK
     * (once in 64 messages or 256 KiB), which goes from its sender.
     */
    static final long ONE_WAY_NANOS = TimeUnit.MICROSECONDS.toNanos(100);
    /** In a stream, the clock is read once in this many sends. */
    private static final int CLOCK_EVERY = 16;
    /**
     * A batch is full, and the event loop writes it without lingering, once this many bytes wait, or a quarter
     * of the peer's queue if that is less: one system call for many messages.
     */
    static final long BATCH_BYTES = 64 * 1024;
    /** Uncounted messages (ACK, PONG, ...) a peer that does not read may make us hold, at most. */
    static final long MAX_IMMEDIATE_BYTES = 4L << 20;
    /** {@link #writeLargeRun}'s outcomes. */
    private static final int NO_LARGE_RUN = 0;
    private static final int LARGE_WRITTEN = 1;
    private static final int SOCKET_FULL = 2;

    private final Link link;
    private final Transport transport;
    private final LinkCounters counters;

    // output, guarded by out
    private final ReentrantLock out = new ReentrantLock();
    private final AtomicBoolean dirty = new AtomicBoolean();
    /** The event loop has been asked to write what is queued. */
    private final AtomicBoolean flushRequested = new AtomicBoolean();
    /** A full batch waits: the event loop writes it without lingering. */
    private volatile boolean batchFull;
    /**
     * Sends come in a stream (a heuristic, so plain fields, shared by the sending threads: a stale value costs
     * one write from the sender or one linger of the event loop): when the clock was last read, and the sends
     * since.
     */
    private boolean streaming;
    private long clockedAt;
    private int sendsUnclocked;
    /** The link's messages in ({@link Link#messagesIn}) when the clock was last read. */
    private int messagesInAtClock;
    private final ArrayDeque<byte[]> immediate = new ArrayDeque<>();
    private long immediateBytes;
    /** The immediate messages the peer counts ({@link #sendCounted}), by identity, until they are written. */
    private final Set<byte[]> countedImmediate = Collections.newSetFromMap(new IdentityHashMap<>());
    /** Counted messages taken to be written on this link: the queue's and the immediate ones it counts. */
    private long countedTaken;
    /**
     * Where each counted immediate message stands in the link's count (its number, from 1), oldest first, until an
     * ACK covers it: the peer's ACKs count it, and the queue must not take it for one of its own.
     */
    private final ConcurrentLinkedQueue<Long> countedAhead = new ConcurrentLinkedQueue<>();
    /** Of them, how many the peer's ACKs covered so far; read and written by the link's reader only. */
    private long countedAheadAcked;
    /** A PING to write once the queue has nothing more ({@link Link#flushAskingAck}), or null. */
    private final AtomicReference<byte[]> pingWhenWritten = new AtomicReference<>();
    /** Bytes copied from messages and not yet written, in fill mode; null while there are none. */
    private ByteBuffer output;
    /**
     * What is being copied into output: an immediate message, or a run of messages taken from the queue (in
     * flight); run.offset and run.length move on as it is copied, and nothing else starts before it is all.
     */
    private final SendQueue.Run run = new SendQueue.Run();
    /** What {@link #writeLargeRun} offers the socket at most: 1 MiB, less after the socket took less. */
    private int largeOffer = BufferPool.LARGE_OUTPUT.bytes();
    /** The queue whose messages this link writes when it carries it; null: none (yet). */
    private volatile SendQueue queue;
    /**
     * {@link #BATCH_BYTES}, or a quarter of the peer's queue if less: a queue smaller than a batch must not wait
     * for the event loop's linger. Set with the queue.
     */
    private volatile long batchBytes = BATCH_BYTES;
    private volatile long lastWriteAt = System.nanoTime();

    LinkWriter(Link link, Transport transport, LinkCounters counters) {
        this.link = link;
        this.transport = transport;
        this.counters = counters;
    }

    /** The link may write {@code q}'s messages (when the queue says it carries it). */
    void carry(SendQueue q) {
        batchBytes = Math.min(BATCH_BYTES, q.maxBytes() / 4);
        queue = q;
    }

    /** The queue the link may carry, or null. */
    SendQueue queue() {
        return queue;
    }

    /** When something was last written in full (System.nanoTime), or a PING was queued. */
    long lastWriteAt() {
        return lastWriteAt;
    }

    /** A PING is queued at {@code now}: the link is not idle. */
    void pinged(long now) {
        lastWriteAt = now;
    }

    /** Queues an uncounted message (HELLO, WELCOME, ACK, PING, PONG, BYE, a closing ERROR) ahead of all else. */
    void sendImmediate(byte[] packed) {
        sendImmediate(packed, false);
    }

    /**
     * Queues a message the peer counts (an ERROR that answers one it sent) ahead of the queued data: its place in
     * the link's count is kept, so that the peer's ACKs, which count it, release no queued message for it
     * ({@link #queueCount}).
     */
    void sendCounted(byte[] packed) {
        sendImmediate(packed, true);
    }

    private void sendImmediate(byte[] packed, boolean counted) {
        boolean tooMuch;
        out.lock();
        try {
            immediate.addLast(packed);
            if (counted) {
                countedImmediate.add(packed);
            }
            immediateBytes += packed.length;
            tooMuch = immediateBytes > MAX_IMMEDIATE_BYTES;
        } finally {
            out.unlock();
        }
        if (tooMuch) {
            // a peer that sends PINGs (or anything we must answer at once) but never reads
            link.fail(new LinkException(ErrorCode.TOO_LARGE, link.describe() + " does not read: over "
                    + MAX_IMMEDIATE_BYTES + " bytes of ACK and PONG wait for it"));
            return;
        }
        flush();
    }

    /**
     * Sends what is queued, {@code unsentBytes} of it. A send after a pause is written at once from the
     * calling thread (no thread hop, for latency). Sends in a stream are left to the event loop, which writes
     * them in batches while the senders go on packing the next messages: one system call (and, with TLS, one
     * run of encryption) for many messages, on a thread of its own. It writes a full batch
     * ({@link #BATCH_BYTES}) at once, and lingers {@link #COALESCE_NANOS} for more before it writes less. One-way
     * sends less close together ({@link #pace}) are left to the event loop too, which writes them at once.
     */
    void send(long unsentBytes) {
        if (link.inLoop()) {
            flush(); // the loop's own sends cannot wait for it
            return;
        }
        // in a stream the clock (24 ns a read here) is read every CLOCK_EVERY sends only: a 64 B send then costs
        // about 40 ns, so a pause is still seen within microseconds
        int sends = sendsUnclocked + 1;
        if (!streaming || sends >= CLOCK_EVERY) {
            long now = System.nanoTime();
            int messagesIn = link.messagesIn();
            // a held link is not read, and its loop writes nothing until it is released: answered, as it were
            Pace pace = pace(now - clockedAt, sends, messagesIn != messagesInAtClock || link.isHeld());
            clockedAt = now;
            messagesInAtClock = messagesIn;
            sendsUnclocked = 0;
            streaming = pace != Pace.PAUSE;
            if (!streaming) {
                flush();
                return;
            }
            if (pace == Pace.ONE_WAY && !batchFull) {
                batchFull = true; // too far apart for a linger to gather more: the loop writes at once
            }
        } else {
            sendsUnclocked = sends;
        }
        if (unsentBytes >= batchBytes && !batchFull) {
            batchFull = true;
        }
        // once a batch: the loop takes the request, and the next send after that asks again
        if (!flushRequested.get() && flushRequested.compareAndSet(false, true)) {
            link.schedule();
        }
    }

    /** How sends come, as {@link #send} judges it. */
    enum Pace {
        /** After a pause, or answered: the sender writes at once. */
        PAUSE,
        /** Close together: the loop writes them in batches, lingering for more. */
        STREAM,
        /** One way, less close: the loop writes them at once. */
        ONE_WAY
    }

    /**
     * How {@code sends} sends that came {@code gapNanos} after the clock was last read come: a {@link Pace#STREAM}
     * when they are {@link #COALESCE_NANOS} apart or closer on average; else {@link Pace#ONE_WAY} when they are
     * {@link #ONE_WAY_NANOS} apart or closer and nothing came in meanwhile ({@code answered} false);
     * else a {@link Pace#PAUSE}.
     */
    static Pace pace(long gapNanos, int sends, boolean answered) {
        if (gapNanos < sends * COALESCE_NANOS) {
            return Pace.STREAM;
        }
        return !answered && gapNanos < sends * ONE_WAY_NANOS ? Pace.ONE_WAY : Pace.PAUSE;
    }

    /** Writes {@code ping} once the send queue has nothing more to write (one such PING waits at most). */
    void pingWhenWritten(byte[] ping) {
        pingWhenWritten.set(ping);
    }

    /** On the event loop: whether senders in a stream left it a write; the request is taken. */
    boolean takeWriteRequest() {
        return flushRequested.getAndSet(false);
    }

    /** Whether a full batch waits: the loop need not linger for more. */
    boolean batchFull() {
        return batchFull;
    }

    /** On the event loop, after it lingered for more of the stream unless the batch was full: writes the batch. */
    void writeBatch() {
        batchFull = false;
        flush();
        streaming = false; // the next send reads the clock: after a pause, it writes at once
    }

    /**
     * Writes what is waiting, from the calling thread, without blocking. Callers that find another thread
     * holding the output leave it a flag: the writer loops until nobody has asked for more, and every other
     * holder of the lock writes too before it lets go ({@link #unlock}).
     */
    void flush() {
        flush(false);
    }

    /**
     * {@link #flush} on a link that is closed: the goodbye's last writes (what a refusal's ERROR left, TLS's
     * close_notify), which a closed link's flush would leave unwritten until the goodbye's deadline.
     */
    void flushClosing() {
        flush(true);
    }

    private void flush(boolean closing) {
        dirty.set(true);
        while (dirty.get() && (closing || !link.isClosed())) {
            if (!out.tryLock()) {
                return; // the holder re-checks dirty before it lets go
            }
            try {
                dirty.set(false);
                writeSome();
            } catch (IOException e) {
                link.fail(new LinkException(ErrorCode.INTERNAL, "writing to " + link.peerName() + " failed: "
                        + e.getMessage(), e));
                return;
            } finally {
                out.unlock();
            }
        }
    }

    /** Lets go of out, taken for something other than writing: a flush that found it taken is done now. */
    private void unlock() {
        out.unlock();
        if (dirty.get()) {
            flush();
        }
    }

    /**
     * Under out: writes the output buffer, refilling it from the immediate messages and then the send queue,
     * until the socket takes no more or nothing is left.
     */
    private void writeSome() throws IOException {
        if (transport.handshaking()) {
            return; // nothing of GMA before TLS is up: the event loop flushes when it is
        }
        while (true) {
            int large = writeLargeRun();
            if (large == LARGE_WRITTEN) {
                continue;
            }
            if (large == SOCKET_FULL) {
                return;
            }
            fill();
            if (!outputWaits()) {
                giveBackOutput();
                wantWrite(false);
                return;
            }
            int n;
            if (output == null) {
                n = transport.write(BufferPool.EMPTY); // what TLS has wrapped already
            } else {
                output.flip();
                n = transport.write(output);
                output.compact();
            }
            counters.bytesOut.add(n);
            if (outputWaits()) {
                wantWrite(true); // the socket is full; the event loop goes on when it is writable
                return;
            }
            lastWriteAt = System.nanoTime();
        }
    }

    /**
     * Under out: when nothing waits in the output buffer and the next run is a message longer than that buffer,
     * writes up to {@link BufferPool#LARGE_OUTPUT}'s 1 MiB of it in one write, through a buffer borrowed for that
     * write only, and moves the run on by what the socket took: eight times fewer writes than through the output
     * buffer (a 1 MiB round trip 15% faster, bench/RESULTS.md, the seventeenth session), and a link whose peer
     * does not read keeps no more than the output buffer. What the socket did not take is copied again at the
     * next write, which offers twice what the socket took ({@link #largeOffer}).
     *
     * @return {@link #LARGE_WRITTEN} when the socket took all that was offered (the caller writes on),
     *     {@link #SOCKET_FULL} when it took less (the event loop is asked to write on when it is writable), or
     *     {@link #NO_LARGE_RUN}
     */
    private int writeLargeRun() throws IOException {
        if (output != null && output.position() > 0 || transport.pendingOutput()) {
            return NO_LARGE_RUN;
        }
        if (run.length == 0 && !nextRun() || run.length <= BufferPool.OUTPUT.bytes()) {
            return NO_LARGE_RUN;
        }
        ByteBuffer large = BufferPool.LARGE_OUTPUT.lend();
        if (large == null) {
            return NO_LARGE_RUN; // as many large writes as the pool lends are under way: through the output buffer
        }
        giveBackOutput();
        int offered = Math.min(run.length, largeOffer); // largeOffer is at most the buffer's size (nextLargeOffer)
        int n;
        try {
            large.put(run.bytes, run.offset, offered).flip();
            n = transport.write(large);
        } finally {
            BufferPool.LARGE_OUTPUT.giveBackLent(large);
        }
        counters.bytesOut.add(n);
        run.offset += n;
        run.length -= n;
        if (run.length == 0) {
            run.bytes = null;
        }
        if (n > 0) {
            lastWriteAt = System.nanoTime();
        }
        largeOffer = nextLargeOffer(largeOffer, offered, n);
        if (n < offered || transport.pendingOutput()) {
            wantWrite(true);
            return SOCKET_FULL;
        }
        return LARGE_WRITTEN;
    }

    /**
     * What the next large write offers, after one that could offer {@code offer} bytes, offered {@code offered}
     * (the rest of the message, when shorter) and the socket took {@code n}: a socket that took less (a slow peer)
     * is offered twice what it took, not 1 MiB that would be copied again; one that took all is offered twice
     * {@code offer}. Never more than {@link BufferPool#LARGE_OUTPUT}'s buffers hold (twice what a socket took can
     * be more), nor less than {@link BufferPool#OUTPUT}'s.
     */
    static int nextLargeOffer(int offer, int offered, int n) {
        int next = n < offered ? 2 * n : 2 * offer;
        return Math.max(BufferPool.OUTPUT.bytes(), Math.min(next, BufferPool.LARGE_OUTPUT.bytes()));
    }

    /** Under out: whether bytes wait to be written, in the output buffer or the transport's (TLS). */
    private boolean outputWaits() {
        return (output != null && output.position() > 0) || transport.pendingOutput();
    }

    /** Under out: whether bytes wait as {@link #outputWaits()} says, or in a run partly written or copied. */
    private boolean runWaits() {
        return outputWaits() || run.length > 0;
    }

    /** Under out: the output buffer goes back to the pool once it holds nothing. */
    private void giveBackOutput() {
        if (output != null && output.position() == 0) {
            BufferPool.OUTPUT.giveBack(output);
            output = null;
        }
    }

    /** Under out: copies into the output buffer what fits of the run being written and those after it. */
    private void fill() {
        while (output == null || output.hasRemaining()) {
            if (run.length == 0 && !nextRun()) {
                return;
            }
            if (output == null) {
                output = BufferPool.OUTPUT.take();
            }
            int n = Math.min(run.length, output.remaining());
            output.put(run.bytes, run.offset, n);
            run.offset += n;
            run.length -= n;
            if (run.length == 0) {
                run.bytes = null; // copied: a large message's array, or a segment, need not wait for the next run
            }
        }
    }

    /** Under out: makes run the next thing to write, an immediate message first, else the queue's next run. */
    private boolean nextRun() {
        byte[] b = immediate.pollFirst();
        if (b != null) {
            immediateBytes -= b.length;
            if (!countedImmediate.isEmpty() && countedImmediate.remove(b)) {
                countedAhead.add(++countedTaken);
            }
            run.bytes = b;
            run.offset = 0;
            run.length = b.length;
            return true;
        }
        SendQueue q = queue;
        int taken = q != null && link.isOpen() ? q.next(link, run) : 0;
        if (taken == 0) {
            byte[] ping = pingWhenWritten.get();
            if (ping == null || !link.isOpen()) {
                return false;
            }
            // a sender queues its messages, then asks for the PING: those it queued since the look above go first
            taken = q != null ? q.next(link, run) : 0;
            if (taken > 0) {
                countedTaken += taken;
                counters.messagesOut.add(taken);
                return true;
            }
            if (!pingWhenWritten.compareAndSet(ping, null)) {
                return nextRun(); // asked again meanwhile: what that sender queued goes before its PING
            }
            run.bytes = ping;
            run.offset = 0;
            run.length = ping.length;
            return true;
        }
        countedTaken += taken;
        counters.messagesOut.add(taken);
        return true;
    }

    /**
     * The peer's count of messages received on this link ({@code ACK}), less the counted immediate messages it
     * covers: how many of the queue's messages it took. On the link's reader.
     */
    long queueCount(long peerCount) {
        for (Long at = countedAhead.peek(); at != null && at <= peerCount; at = countedAhead.peek()) {
            countedAhead.poll();
            countedAheadAcked++;
        }
        return peerCount - countedAheadAcked;
    }

    /**
     * Whether the event loop should wake when the socket is writable (the socket was full). A link held by a
     * handler ({@link EventLoop}) is not read meanwhile: its key asks for writes only.
     */
    void wantWrite(boolean on) {
        SelectionKey key = link.key();
        if (key == null || !key.isValid()) {
            return;
        }
        int ops = (link.isHeld() ? 0 : SelectionKey.OP_READ) | (on ? SelectionKey.OP_WRITE : 0);
        try {
            if (key.interestOps() != ops) {
                key.interestOps(ops);
                if (on) {
                    link.wakeLoop();
                }
            }
        } catch (CancelledKeyException closing) {
            // the link is closing; its event loop will report it
        }
    }

    /**
     * The link is held: its key asks for no read. As {@link #resetInterest} when the output is free; else (another
     * thread holds it: a long TLS handshake step, say) the read is taken off the key directly, and the release
     * sets it again ({@link Link#unhold}). Never waits for the output: the stall guard and the loop call it, and
     * must go on serving the other links.
     */
    void holdInterest() {
        if (out.tryLock()) {
            try {
                wantWrite(runWaits());
            } finally {
                unlock();
            }
            return;
        }
        SelectionKey key = link.key();
        try {
            if (key != null && key.isValid()) {
                key.interestOpsAnd(~SelectionKey.OP_READ); // atomic: a writer's OP_WRITE stays; it keeps this off
                if (!link.isHeld()) {
                    key.interestOpsOr(SelectionKey.OP_READ); // released meanwhile: read again
                }
            }
        } catch (CancelledKeyException closing) {
            // the link is closing; its event loop will report it
        }
    }

    /** The key's interest again, as the writer's state says (after the link was held, or registered). */
    void resetInterest() {
        out.lock();
        try {
            wantWrite(runWaits());
        } finally {
            unlock();
        }
    }

    /** On the event loop: one step of the TLS handshake, under out; whether it waits for the socket to be writable. */
    boolean tlsHandshakeStep() throws IOException {
        out.lock();
        try {
            return transport.handshake();
        } finally {
            unlock();
        }
    }

    /** On the event loop, as the link opens: the transport's buffers become a stream's. */
    void openStream() {
        out.lock();
        try {
            transport.opened();
        } finally {
            unlock();
        }
    }

    /** Queues the end of TLS output (close_notify); whether there is one to write. */
    boolean closeOutbound() {
        out.lock();
        try {
            return transport.closeOutbound();
        } finally {
            unlock();
        }
    }

    /** Whether anything waits to be written: in the buffer, being copied, immediate, or in the transport. */
    boolean hasUnwritten() {
        out.lock();
        try {
            return runWaits() || !immediate.isEmpty();
        } finally {
            unlock();
        }
    }

    /** The link closed: its output buffer, and its transport's, go back to the pools. */
    void closed() {
        out.lock();
        try {
            if (output != null) {
                BufferPool.OUTPUT.giveBack(output);
                output = null;
            }
            transport.closed();
        } finally {
            out.unlock();
        }
    }
}
