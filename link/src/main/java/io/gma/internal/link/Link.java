package io.gma.internal.link;

import io.gma.wire.Command;
import io.gma.wire.ErrorCode;
import io.gma.wire.Packed;
import io.gma.wire.ProtocolException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.SelectionKey;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One TCP connection with a peer (protocol.md section 4), served by one of its owner's {@link EventLoop}s: this
 * class is what the loop does for it (read, write, timers, closing) and what the owner calls; the rest is in its
 * parts.
 *
 * <pre>
 *   senders --send/flush--&gt; LinkWriter --&gt; Transport (plaintext or TLS) --&gt; socket
 *   socket --&gt; Transport --&gt; LinkReader --&gt; Handshake, until the link is open
 *                                       --&gt; ACK, PING, PONG, BYE: the link's own
 *                                       --&gt; the rest: LinkListener.receive, counted by AckCounter
 * </pre>
 *
 * <p>Reading: the event loop decodes, answers PING, takes ACKs, counts and acknowledges what it receives (an
 * ACK every 64 messages or within 20 ms: {@link AckCounter}), and hands messages to its listener, which runs
 * handlers on this thread unless given an executor ({@link LinkReader}). While a handler holds the thread up,
 * the {@link StallGuard} sends the ACKs and PINGs due in its place, and the loop goes on on another thread
 * (the link is held until its read is over: {@link #hold}). Writing: {@link LinkWriter}; a send costs no thread
 * hop.
 *
 * <p>Keepalive: PING after a ping interval without traffic; a peer silent for three intervals is dead.
 *
 * <p>Security: the bytes go through a {@link Transport}, plaintext or TLS. The {@link Handshake} (TLS, then
 * HELLO and WELCOME) must be over within {@link #HANDSHAKE_NANOS}; until then the link holds little for a peer
 * that proved nothing.
 *
 * <p>Closing: {@link #bye()} acknowledges what arrived, says BYE and waits a little for it to be written;
 * {@link #fail} ends the link at once. Either way the listener hears {@link LinkListener#linkClosed} once.
 *
 * <p>What is left here, a little over 400 lines, is one thing: the link's state (HANDSHAKE, OPEN, CLOSED, why
 * it failed) and the loop that moves it, which every part reads and only this class changes.
 */
public final class Link {
    private static final Logger LOG = LoggerFactory.getLogger(Link.class);
    /** The TLS handshake and HELLO/WELCOME together: a peer silent this long after connecting is closed. */
    public static final long HANDSHAKE_NANOS = TimeUnit.SECONDS.toNanos(5);
    /** The read and output buffers until the link opens: a few KiB, as what comes and goes is small. */
    static final int HANDSHAKE_BUFFER_BYTES = 4096;
    /** How long a link that says BYE waits for it, and what is before it, to be written. */
    static final long BYE_DRAIN_MILLIS = 200;

    enum State { HANDSHAKE, OPEN, CLOSED }

    private final LinkListener listener;
    private final String name;
    private final LinkCounters counters;
    private final long pingNanos;
    private final SocketChannel channel;
    private final Transport transport;
    private final boolean outbound;
    private final LinkWriter writer;
    private final LinkReader reader;
    private final AckCounter acks = new AckCounter();
    private final Handshake handshake;
    private final Goodbye goodbye;
    private volatile State state = State.HANDSHAKE;
    private volatile String peerName;
    /** Who the peer proved to be (accepted links; {@code Security.ANONYMOUS} when security is off). */
    private volatile String identity;
    private volatile LinkException failure;
    private volatile boolean byeRequested;
    /** Closing as {@link #bye()} does, without the BYE: see {@link #closeWithoutBye()}. */
    private volatile boolean withoutBye;
    /** Closed by a refusal whose ERROR must reach the peer: {@link #closeAfterRefusal}. */
    private boolean lingerOnClose;
    /** Work of the listener's to run on the event loop. */
    private final Queue<Runnable> tasks = new ConcurrentLinkedQueue<>();
    /** The loop that serves the link, once its owner's {@link IoThreads} gave it one; and its key there. */
    private volatile EventLoop loop;
    private volatile SelectionKey key;
    /** The link is queued for its loop ({@link EventLoop#schedule}): once until the loop takes it. */
    private final AtomicBoolean scheduled = new AtomicBoolean();
    /** A handler holds a thread the loop left: the loop neither reads the link nor runs its timers and tasks. */
    private volatile boolean held;
    /** Closed, and the listener told: the loop forgets it. */
    private volatile boolean done;
    /** The loop's bookkeeping: in its ACK queue, with this deadline; among its closing links. The loop's only. */
    boolean ackQueued;
    long queuedDeadline;
    boolean closingQueued;

    private Link(LinkConfig config, LinkListener listener, SocketChannel channel, boolean outbound, SSLEngine engine,
            String peerName, HandshakeAdmission.Ticket admitted) throws IOException {
        this.listener = listener;
        this.name = config.name();
        this.counters = config.counters();
        this.pingNanos = config.pingInterval().toNanos();
        this.channel = channel;
        this.outbound = outbound;
        this.peerName = peerName;
        channel.configureBlocking(false);
        channel.socket().setTcpNoDelay(true);
        this.transport = Transport.of(channel, engine);
        this.writer = new LinkWriter(this, transport, counters);
        this.handshake = new Handshake(this, transport, writer, config, listener, admitted);
        this.reader = new LinkReader(this, transport, writer, config, handshake, acks, listener);
        this.goodbye = new Goodbye(writer, channel);
    }

    /**
     * A link this side opens to {@code peerName}, over a connected channel; its HELLO (with the listener's
     * credential) is queued, and with TLS waits for the TLS handshake to be over. {@link IoThreads} serves it.
     *
     * @param engine TLS for this connection ({@code Tls.clientEngine}), or null for plaintext
     */
    public static Link connect(LinkConfig config, LinkListener listener, SocketChannel channel, SSLEngine engine,
            String peerName) throws IOException {
        Link link = new Link(config, listener, channel, true, engine, peerName, null);
        String bearer = listener.helloCredential();
        link.writer.sendImmediate(Packed.make(0, Command.HELLO, config.name(), "", bearer == null ? new byte[0]
                : bearer.getBytes(StandardCharsets.UTF_8)));
        return link;
    }

    /**
     * A link a peer opened, accepted by an {@link Acceptor}.
     *
     * @param engine TLS for this connection ({@code Tls.serverEngine}), or null for plaintext
     * @param admitted its ticket under the caps on unauthenticated connections, released when it opens or closes
     */
    static Link accepted(LinkConfig config, LinkListener listener, SocketChannel channel, SSLEngine engine,
            HandshakeAdmission.Ticket admitted) throws IOException {
        return new Link(config, listener, channel, false, engine, null, admitted);
    }

    // ---------------------------------------------------------------- what the owner asks and tells

    /** Whether this side opened the link. */
    public boolean outbound() {
        return outbound;
    }

    /** The peer's name: the one connected to, or the one its HELLO gave; null before that. */
    public String peerName() {
        return peerName;
    }

    /** Who the peer proved to be: on an accepted link once it is open; null before, and on outbound links. */
    public String identity() {
        return identity;
    }

    /**
     * Whether the link worked, whatever ended it: the peer acknowledged something on it, or sent messages on a link
     * that lasted a while after the first ({@code AckCounter#worked}).
     */
    public boolean worked() {
        return acks.worked();
    }

    /** The link may write {@code queue}'s messages, when the queue says it carries it ({@link Peer#attach}). */
    void carry(SendQueue queue) {
        writer.carry(queue);
    }

    /** {@code unsentBytes} wait in the queue this link carries: see {@link LinkWriter#send}. */
    public void send(long unsentBytes) {
        writer.send(unsentBytes);
    }

    /**
     * Writes {@code packed}, an ERROR that answers a message this link carried, ahead of the data queued and in
     * order with the ACKs: it reaches the peer before the ACK that passes the message it answers, so the peer
     * fails that message's future rather than completing it ({@link SendQueue#refused}). The peer counts it, and
     * its ACKs release no queued message for it.
     */
    public void answerNow(byte[] packed) {
        writer.sendCounted(packed);
    }

    /** Writes what is waiting, now, from the calling thread, without blocking. */
    public void flush() {
        writer.flush();
    }

    /**
     * Writes what is waiting, and a PING once the send queue has nothing more to write: a peer of this
     * implementation answers a PING with its ACK of what it took first ({@link LinkReader}), so that the owner
     * learns at once, rather than within 20 ms, that the messages sent so far arrived. For the PC servlet with a
     * spool, which acknowledges a batch only once each of its messages is on disk or with its endpoint.
     */
    public void flushAskingAck() {
        if (peerName != null) {
            writer.pingWhenWritten(Packed.make(0, Command.PING, name, peerName, new byte[0]));
        }
        writer.flush();
    }

    /**
     * Runs {@code task} on this link's event loop, soon, and never while another task or a read of this link runs
     * (for the listener's state that only the loop touches).
     */
    public void execute(Runnable task) {
        tasks.add(task);
        schedule();
    }

    /**
     * On the event loop: counts {@code n} more messages, of {@code bytes} in all, as received, that the listener
     * did not take when they arrived and takes now, in the order they came; the next ACK covers them.
     */
    public void countTaken(int n, long bytes) {
        if (n <= 0) {
            return;
        }
        acks.taken(n, bytes);
        if (acks.due()) {
            sendAck();
        }
    }

    // ---------------------------------------------------------------- for the link's parts

    State state() {
        return state;
    }

    boolean isOpen() {
        return state == State.OPEN;
    }

    boolean isClosed() {
        return state == State.CLOSED;
    }

    /** Whether the calling thread runs this link's loop now. */
    boolean inLoop() {
        EventLoop l = loop;
        return l != null && l.inLoop();
    }

    /** The link's key in its loop's selector; null until the loop registered it. */
    SelectionKey key() {
        return key;
    }

    /** Wakes the link's loop, if it has one, for a change of the key's interest. */
    void wakeLoop() {
        EventLoop l = loop;
        if (l != null) {
            l.wakeup();
        }
    }

    /** Asks the loop for a turn (tasks, a write, a close), unless the link is queued for one already. */
    void schedule() {
        EventLoop l = loop;
        if (l != null && !scheduled.get() && scheduled.compareAndSet(false, true)) {
            l.schedule(this);
        }
    }

    /** The peer's name, or its address before it said HELLO. */
    String describe() {
        if (peerName != null) {
            return peerName;
        }
        try {
            return String.valueOf(channel.getRemoteAddress());
        } catch (IOException e) {
            return "an unnamed peer";
        }
    }

    /** An accepted link's peer said HELLO as {@code from} and proved to be {@code who}. */
    void authenticated(String from, String who) {
        identity = who;
        peerName = from;
    }

    /**
     * On the event loop, from the decoder's sink, as the handshake ends: the full message limit and a stream's
     * buffers from the next byte on.
     */
    void opened() {
        state = State.OPEN;
        reader.opened();
        writer.openStream();
    }

    /** Records why the link ends, whatever was recorded before. */
    void failWith(LinkException why) {
        failure = why;
    }

    /** Records why the link ends and closes it: what came after in the same read is not taken. */
    void closeWith(LinkException why) {
        failure = why;
        state = State.CLOSED;
    }

    /**
     * As {@link #closeWith}, after an ERROR that refused the peer: before the socket closes, what was written is
     * drained and the peer's input is read until it closes (within BYE_DRAIN_MILLIS), so that the peer reads the
     * ERROR; closing on unread input would make the kernel answer with a reset, which can destroy it.
     */
    void closeAfterRefusal(LinkException why) {
        lingerOnClose = true;
        closeWith(why);
    }

    // ---------------------------------------------------------------- what the event loop does for it

    /** Its owner's {@link IoThreads} gave it {@code loop}, before the loop has it: sends may ask it for turns. */
    void assigned(EventLoop loop) {
        this.loop = loop;
    }

    /** The loop that serves it; null before its group gave it one. */
    EventLoop loop() {
        return loop;
    }

    /** On the loop, as it takes the link: registers it, and starts TLS; a turn it asked for meanwhile follows. */
    void started(EventLoop loop) {
        step(() -> {
            try {
                key = channel.register(loop.selector(), SelectionKey.OP_READ, this);
            } catch (ClosedChannelException e) {
                throw new IOException("the connection to " + describe() + " closed before its link started", e);
            }
            writer.resetInterest();
            if (transport.handshaking()) {
                handshake.advanceTls();
            }
        });
        schedule(); // what senders asked before the link had a key
    }

    /** On the loop: the link's key is ready. */
    void ready(SelectionKey readyKey) {
        step(() -> {
            if (goodbye.active()) {
                if (goodbye.advance()) {
                    state = State.CLOSED;
                }
                return;
            }
            if (transport.handshaking()) {
                if (readyKey.isValid() && (readyKey.isReadable() || readyKey.isWritable())) {
                    handshake.advanceTls();
                }
                return;
            }
            if (readyKey.isValid() && readyKey.isReadable()) {
                reader.read();
            }
            if (readyKey.isValid() && readyKey.isWritable()) {
                writer.flush();
            }
        });
    }

    /**
     * On the loop, for a held link: writes what the socket now takes, as any thread may; a key that still asked
     * for reads (its interest changed as it was selected) asks no more, or the loop would spin on it.
     */
    void writeIfWritable(SelectionKey readyKey) {
        if (readyKey.isValid() && readyKey.isWritable()) {
            writer.flush();
        }
        if (readyKey.isValid() && readyKey.isReadable()) {
            writer.holdInterest();
        }
    }

    /** On the loop, as it takes the link's turn: the link may ask for another from now on. */
    void unscheduled() {
        scheduled.set(false);
    }

    /** On the loop: the listener's tasks, then a close asked for ({@link #bye}, {@link #fail}). */
    void runTasks() {
        step(() -> {
            for (Runnable task; (task = tasks.poll()) != null;) {
                task.run();
            }
            if (byeRequested && !goodbye.active() && state != State.CLOSED) {
                sayBye();
            }
        });
    }

    /** On the loop: whether senders in a stream left it a write (the request is taken). */
    boolean writeRequested() {
        return !done && writer.takeWriteRequest();
    }

    /** Whether a full batch waits to be written: no linger for more. */
    boolean batchFull() {
        return writer.batchFull();
    }

    /** On the loop, after it lingered unless the batch was full: writes the batch. */
    void writeBatch() {
        step(writer::writeBatch);
    }

    /** On the loop, at its links' earliest deadline: this link's. */
    void timers() {
        step(() -> {
            if (goodbye.active()) {
                if (goodbye.advance()) {
                    state = State.CLOSED;
                }
                return;
            }
            timers(System.nanoTime());
        });
    }

    /** Whether the link closed and its listener was told: the loop forgets it. */
    boolean isDone() {
        return done;
    }

    /**
     * Messages read on this link whose handling began, ever; a racy hint ({@link LinkWriter#send}), but a reply
     * that woke a sender was counted before it woke it.
     */
    int messagesIn() {
        return reader.progress();
    }

    /** Whether something taken is not acknowledged yet; and when an ACK of it is due by time. */
    boolean unacknowledged() {
        return acks.unacknowledged();
    }

    long ackDeadline() {
        return acks.deadline();
    }

    /** Whether the link is in its handshake; and when that must be over. */
    boolean handshaking() {
        return state == State.HANDSHAKE && !goodbye.active();
    }

    long handshakeDeadline() {
        return handshake.deadline();
    }

    /** Whether the link is saying goodbye ({@link #nextDeadline} is then when it closes, whatever is left). */
    boolean closing() {
        return goodbye.active();
    }

    /** How many messages began to be handled on this link, ever: a hint, for the {@link StallGuard}. */
    int progress() {
        return reader.progress();
    }

    /** The link's ping interval: the loop looks at every link a few times an interval. */
    long pingNanos() {
        return pingNanos;
    }

    /** Whether a handler holds a thread the loop left, in this link's read. */
    boolean isHeld() {
        return held;
    }

    /** The loop moves to another thread while this link's read goes on: it is not read meanwhile. */
    void hold() {
        held = true;
        writer.holdInterest(); // never waits: the stall guard calls it, holding the loop's monitor
    }

    /** On the held thread, the read over: the loop may read the link again (its next turn does). */
    void unhold() {
        held = false;
        writer.resetInterest();
    }

    /** A step of the loop's for this link: what fails it ends it, and a link that closed is finished. */
    private void step(IoStep s) {
        if (done) {
            return;
        }
        try {
            s.run();
            if (state == State.CLOSED && !goodbye.active() && lingerOnClose) {
                lingerOnClose = false;
                if (!goodbye.closeBy(System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(BYE_DRAIN_MILLIS))) {
                    return; // the loop goes on with it when the socket is ready, or at its deadline
                }
            } else if (state != State.CLOSED || goodbye.active()) {
                return;
            }
        } catch (TlsTransport.PlaintextPeerException e) {
            if (handshake.plaintextPeer(channel)) {
                return; // it lingers for the peer to read the ERROR
            }
        } catch (SSLException e) {
            // a certificate not trusted, a host name it does not name, a TLS alert from the peer: before the link
            // is open, the peer could not be authenticated (or did not authenticate us)
            failure = new LinkException(state == State.OPEN ? ErrorCode.INTERNAL : ErrorCode.UNAUTHORIZED,
                    "TLS with " + describe() + " failed: " + e.getMessage(), e);
            if (!outbound) {
                LOG.info("{}: TLS with {} failed: {}", name, describe(), e.getMessage());
            }
        } catch (ProtocolException e) {
            // the stream cannot be trusted: tell the peer why, then close (protocol.md section 1)
            LOG.warn("{}: closing link to {}: {}", name, describe(), e.getMessage());
            writer.sendImmediate(Packed.make(0, Command.ERROR, name, peerName == null ? "" : peerName, e.errorText()));
            failure = new LinkException(e.code(), e.getMessage(), e);
        } catch (IOException e) {
            if (failure == null) {
                failure = new LinkException(ErrorCode.INTERNAL, "link to " + peerName + " failed: " + e.getMessage(),
                        e);
            }
        } catch (RuntimeException | LinkageError | AssertionError | StackOverflowError e) {
            // a bug, or a class that could not load (out of file descriptors, say): this link's, not its loop's
            LOG.error("{}: link to {} failed", name, peerName, e);
            failure = new LinkException(ErrorCode.INTERNAL, "link to " + peerName + " failed: " + e, e);
        }
        finish();
    }

    /** Closes the link and tells the listener, once; what the listener throws is logged, not the loop's. */
    private void finish() {
        if (done) {
            return;
        }
        done = true;
        closeChannel();
        handshake.countFailure(failure, counters);
        try {
            listener.linkClosed(this, failure);
        } catch (RuntimeException | LinkageError | AssertionError | StackOverflowError e) {
            LOG.error("{}: told that its link to {} closed, it failed", name, peerName, e);
        }
    }

    /**
     * As its loop closes ({@code why}: SHUTTING_DOWN), or fails: the link ends, its listener told, on the
     * calling thread.
     */
    void loopClosed(LinkException why) {
        if (failure == null) {
            failure = why;
        }
        state = State.CLOSED;
        finish();
    }

    /** What the loop does for a link, which may fail it. */
    @FunctionalInterface
    private interface IoStep {
        void run() throws IOException;
    }

    /** When the loop must next look at the link's timers (System.nanoTime). */
    long nextDeadline() {
        if (goodbye.active()) {
            return goodbye.deadline();
        }
        long next = System.nanoTime() + pingNanos;
        if (state == State.HANDSHAKE) {
            next = Math.min(next, handshake.deadline());
        }
        if (acks.unacknowledged()) {
            next = Math.min(next, acks.deadline());
        }
        next = Math.min(next, Math.max(reader.lastReadAt(), writer.lastWriteAt()) + pingNanos);
        return Math.min(next, reader.lastReadAt() + 3 * pingNanos);
    }

    private void timers(long now) throws IOException {
        if (state == State.HANDSHAKE) {
            handshake.checkDeadline(now);
        }
        if (acks.dueBy(now)) {
            sendAck();
        }
        if (now - reader.lastReadAt() > 3 * pingNanos) {
            failure = new LinkException(ErrorCode.TIMEOUT, peerName + " was silent for 3 ping intervals ("
                    + TimeUnit.NANOSECONDS.toMillis(3 * pingNanos) + " ms)");
            throw failure;
        }
        if (state == State.OPEN && now - Math.max(reader.lastReadAt(), writer.lastWriteAt()) >= pingNanos) {
            writer.pinged(now);
            writer.sendImmediate(Packed.make(0, Command.PING, name, peerName, new byte[0]));
        }
    }

    /** Reads what the socket has: see {@link LinkReader}. */
    void read() throws IOException {
        reader.read();
    }

    /**
     * Acknowledges what was received and not acknowledged yet, if anything, once the peer has a name. On the I/O
     * thread, or the {@link StallGuard}'s.
     */
    void sendAck() {
        if (!acks.unacknowledged() || peerName == null) {
            return;
        }
        long count = acks.acknowledgeAll();
        if (count < 0) {
            return; // the other thread was first
        }
        writer.sendImmediate(Packed.make(0, Command.ACK, name, peerName, ByteBuffer.allocate(8).putLong(count)
                .array()));
    }

    /**
     * On the {@link StallGuard}'s thread, at {@code now}: what the event loop does at its deadlines, for an open
     * link whose event loop let one pass by more than the guard's grace, as it does while a handler holds it up:
     * the ACK of what was taken so far, and a PING when nothing was written for a ping interval. Either may go
     * out twice, if the event loop comes back at that moment; the peer takes an ACK's count once, and a PING is
     * only answered.
     */
    void guard(long now) {
        if (state != State.OPEN) {
            return;
        }
        if (acks.dueBy(now - StallGuard.GRACE_NANOS)) {
            sendAck();
        }
        if (now - writer.lastWriteAt() >= pingNanos + StallGuard.GRACE_NANOS) {
            writer.pinged(now);
            writer.sendImmediate(Packed.make(0, Command.PING, name, peerName, new byte[0]));
        }
    }

    // ---------------------------------------------------------------- closing

    /** Ends the link from any thread; its loop reports it to the listener. */
    public void fail(LinkException reason) {
        if (failure == null) {
            failure = reason;
        }
        state = State.CLOSED;
        schedule();
    }

    /**
     * Closes the link for good: its event loop acknowledges what arrived, says BYE, and closes once that is
     * written or after {@link #BYE_DRAIN_MILLIS}.
     */
    public void bye() {
        byeRequested = true;
        schedule();
    }

    /**
     * Closes the link for good as {@link #bye()} does (what arrived is acknowledged, the close is orderly), but
     * without BYE: the peer then keeps what it remembers of this side's sequence numbers, as after a lost link,
     * because this side's owner will send again, after a restart, messages the peer may have had (the client's
     * outbox).
     */
    public void closeWithoutBye() {
        withoutBye = true;
        bye();
    }

    /**
     * On the loop: ACK, BYE, then a bounded wait for them to be written ({@link Goodbye}), which the loop drives;
     * the link is CLOSED when it is over.
     */
    private void sayBye() throws IOException {
        if (failure == null) {
            failure = new LinkException(ErrorCode.SHUTTING_DOWN, name + " is closing");
        }
        if (state == State.OPEN && peerName != null) {
            sendAck();
            if (!withoutBye) {
                writer.sendImmediate(Packed.make(0, Command.BYE, name, peerName, new byte[0]));
            }
            if (!goodbye.closeBy(System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(BYE_DRAIN_MILLIS))) {
                return;
            }
        }
        state = State.CLOSED;
    }

    /** On the loop: see {@link Goodbye#lingerUntilPeerCloses}; whether it is over already. */
    boolean lingerUntilPeerCloses(long deadline) throws IOException {
        return goodbye.lingerUntilPeerCloses(deadline);
    }

    /** Closes a link no loop took (the owner closed meanwhile). */
    public void abort() {
        closeChannel();
    }

    private void closeChannel() {
        state = State.CLOSED;
        handshake.linkClosed();
        SelectionKey k = key;
        if (k != null) {
            k.cancel();
        }
        try {
            channel.close();
        } catch (IOException ignored) {
            // closing anyway
        }
        writer.closed();
    }
}
