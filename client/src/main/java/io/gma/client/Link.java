package io.gma.client;

import io.gma.wire.Command;
import io.gma.wire.ErrorCode;
import io.gma.wire.ErrorText;
import io.gma.wire.Message;
import io.gma.wire.Packed;
import io.gma.wire.ProtocolException;
import io.gma.wire.StreamDecoder;
import io.gma.security.AuthException;
import io.gma.security.Security;
import io.gma.security.Tls;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.ArrayDeque;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One TCP connection with a peer (PROTOCOL.md section 4), and the I/O thread that serves it.
 *
 * <p>Reading: the I/O thread decodes, answers PING, takes ACKs, counts and acknowledges what it receives (an
 * ACK every 64 messages or within 20 ms), and hands messages to the endpoint, which runs handlers on this
 * thread unless given an executor. Writing: whoever has something to send calls {@link #flush()}, which
 * writes at once, without blocking, from the calling thread; what the socket does not take waits for the
 * I/O thread to finish it when the socket is writable. A send thus costs no thread hop.
 *
 * <p>Keepalive: PING after a ping interval without traffic; a peer silent for three intervals is dead.
 *
 * <p>Security: the bytes go through a {@link Transport}, plaintext or TLS. With TLS, the TLS handshake comes
 * first, on the I/O thread, and nothing of GMA (not even HELLO) is written before it is over. The accepting
 * side then authenticates HELLO's credentials or the client certificate ({@link Security#authenticate}) and
 * asks its owner whether that identity may have the link; it answers ERROR UNAUTHORIZED or FORBIDDEN and
 * closes otherwise. The handshake, TLS and HELLO, must be over within {@link #HANDSHAKE_NANOS}.
 *
 * <p>Before the handshake is over (accepted: HELLO authenticated and WELCOME sent; outbound: WELCOME
 * received), a peer has proved nothing, so the link holds little for it: the decoder refuses data longer than
 * {@link #MAX_HANDSHAKE_DATA} (ERROR TOO_LARGE, then the link closes), and the read and output buffers (and
 * TLS's) are small. They grow to a stream's sizes when the link opens. An accepted link counts against the
 * {@link HandshakeAdmission} caps until then.
 */
final class Link implements Runnable {
    private static final Logger LOG = LoggerFactory.getLogger(Link.class);
    static final int ACK_EVERY = 64;
    /** Also acknowledge every this many bytes: with large messages, 64 of them could be the whole send queue. */
    static final long ACK_EVERY_BYTES = 256 * 1024;
    static final long ACK_WITHIN_NANOS = TimeUnit.MILLISECONDS.toNanos(20);
    /** The TLS handshake and HELLO/WELCOME together: a peer silent this long after connecting is closed. */
    static final long HANDSHAKE_NANOS = TimeUnit.SECONDS.toNanos(5);
    /**
     * Sends this close together (on average, since the clock is read once in {@link #CLOCK_EVERY} sends in a
     * stream) are a stream: the I/O thread writes them in batches, and lingers this long for more before it
     * writes a batch that is not full.
     */
    static final long COALESCE_NANOS = TimeUnit.MICROSECONDS.toNanos(20);
    /** In a stream, the clock is read once in this many sends. */
    private static final int CLOCK_EVERY = 16;
    /**
     * A batch is full, and the I/O thread writes it without lingering, once this many bytes wait, or a quarter
     * of the peer's queue if that is less: one system call for many messages.
     */
    static final long BATCH_BYTES = 64 * 1024;
    private static final int OUTPUT_BYTES = 128 * 1024;
    private static final int READ_BYTES = 256 * 1024;
    /**
     * The longest data a peer may send before the handshake is over: HELLO's credentials (a bearer token of up
     * to 1024 characters) with room to spare; WELCOME and ERROR carry less.
     */
    static final int MAX_HANDSHAKE_DATA = 4096;
    /** The read and output buffers until the link opens: a few KiB, as what comes and goes is small. */
    static final int HANDSHAKE_BUFFER_BYTES = 4096;

    enum State { HANDSHAKE, OPEN, CLOSED }

    private final LinkOwner endpoint;
    private final SocketChannel channel;
    private final Transport transport;
    private final Selector selector;
    final boolean outbound;
    private final StreamDecoder decoder;
    /** HANDSHAKE_BUFFER_BYTES, then READ_BYTES once open; I/O thread only. */
    private ByteBuffer readBuffer = ByteBuffer.allocate(HANDSHAKE_BUFFER_BYTES);
    /** An accepted link's place under the caps on unauthenticated connections, until it opens or closes. */
    private final HandshakeAdmission.Ticket admitted;
    /** The handshake ended and the link opened; I/O thread only. */
    private boolean opened;
    private final long pingNanos;
    private volatile State state = State.HANDSHAKE;
    private volatile Peer peer;
    /**
     * {@link #BATCH_BYTES}, or a quarter of the peer's queue if less: a queue smaller than a batch must not wait
     * for the I/O thread's linger. Set with the peer.
     */
    private volatile long batchBytes = BATCH_BYTES;
    private volatile String peerName;
    /** Who the peer proved to be (accepted links; {@link Security#ANONYMOUS} when security is off). */
    private volatile String identity;
    private volatile EndpointException failure;

    // output, guarded by out
    private final ReentrantLock out = new ReentrantLock();
    private final AtomicBoolean dirty = new AtomicBoolean();
    /** The I/O thread has been asked to write what is queued. */
    private final AtomicBoolean flushRequested = new AtomicBoolean();
    /** The I/O thread is in, or about to enter, select: a flush request must wake it. */
    private volatile boolean selecting;
    /** A full batch waits: the I/O thread writes it without lingering. */
    private volatile boolean batchFull;
    /**
     * Sends come in a stream (a heuristic, so plain fields, shared by the sending threads: a stale value costs
     * one write from the sender or one linger of the I/O thread): when the clock was last read, and the sends
     * since.
     */
    private boolean streaming;
    private long clockedAt;
    private int sendsUnclocked;
    private volatile Thread ioThread;
    private final ArrayDeque<byte[]> immediate = new ArrayDeque<>();
    /** Bytes copied from messages and not yet written, in fill mode; small until the link opens. */
    private ByteBuffer output;
    /**
     * What is being copied into output: an immediate message, or a run of messages taken from the queue (in
     * flight); run.offset and run.length move on as it is copied, and nothing else starts before it is all.
     */
    private final SendQueue.Run run = new SendQueue.Run();

    // I/O thread only
    /** The sender of the last message an endpoint took from this link, and its dedup record there. */
    String lastSender;
    Dedup.Seen lastSeen;
    /** The last destination an endpoint took from this link, and the name of its own that it matched. */
    String lastTo;
    String lastToWasOwn;
    /** Messages decoded from the current read, counted once per read. */
    private int messagesRead;
    private long received;
    private long receivedBytes;
    private long ackSent;
    private long ackSentBytes;
    private long firstUnackedAt;
    private long acknowledgedByPeer;
    private volatile boolean worked;
    private volatile boolean byeRequested;
    static final long BYE_DRAIN_MILLIS = 200;
    /** Uncounted messages (ACK, PONG, ...) a peer that does not read may make us hold, at most. */
    static final long MAX_IMMEDIATE_BYTES = 4L << 20;
    private long immediateBytes;
    private volatile long lastReadAt = System.nanoTime();
    /** Work of the owner's to run on the I/O thread. */
    private final java.util.concurrent.ConcurrentLinkedQueue<Runnable> tasks =
            new java.util.concurrent.ConcurrentLinkedQueue<>();
    private volatile long lastWriteAt = System.nanoTime();
    private final long openedAt = System.nanoTime();

    /**
     * @param engine TLS for this connection ({@link Tls#clientEngine} when outbound, else
     *     {@link Tls#serverEngine}), or null for plaintext
     */
    Link(LinkOwner endpoint, SocketChannel channel, boolean outbound, Peer peer, javax.net.ssl.SSLEngine engine)
            throws IOException {
        this(endpoint, channel, outbound, peer, engine, null);
    }

    /**
     * @param admitted an accepted link's ticket, released when the link opens or closes; null for none
     */
    Link(LinkOwner endpoint, SocketChannel channel, boolean outbound, Peer peer, javax.net.ssl.SSLEngine engine,
            HandshakeAdmission.Ticket admitted) throws IOException {
        this.endpoint = endpoint;
        this.channel = channel;
        this.admitted = admitted;
        this.transport = Transport.of(channel, engine);
        this.output = transport.outputBuffer(HANDSHAKE_BUFFER_BYTES);
        this.outbound = outbound;
        carry(peer);
        this.peerName = peer == null ? null : peer.name;
        this.decoder = endpoint.codec().newHandshakeDecoder(MAX_HANDSHAKE_DATA);
        this.pingNanos = endpoint.pingIntervalNanos();
        channel.configureBlocking(false);
        channel.socket().setTcpNoDelay(true);
        this.selector = Selector.open();
        try {
            channel.register(selector, SelectionKey.OP_READ);
        } catch (IOException | RuntimeException e) {
            selector.close();
            throw e;
        }
        if (outbound) {
            // queued: with TLS it waits for the TLS handshake to be over
            String bearer = endpoint.helloCredential(peer);
            sendImmediate(Packed.make(0, Command.HELLO, endpoint.name(), "", bearer == null ? new byte[0]
                    : bearer.getBytes(StandardCharsets.UTF_8)));
        }
    }

    /** This link carries {@code p}'s messages (null: none yet). */
    private void carry(Peer p) {
        if (p != null) {
            batchBytes = Math.min(BATCH_BYTES, p.queue.maxBytes() / 4);
        }
        peer = p;
    }

    String peerName() {
        return peerName;
    }

    /** Who the peer proved to be: on an accepted link once it is open; null before, and on outbound links. */
    String identity() {
        return identity;
    }

    /** The peer's name, or its address before it said HELLO. */
    private String describe() {
        if (peerName != null) {
            return peerName;
        }
        try {
            return String.valueOf(channel.getRemoteAddress());
        } catch (IOException e) {
            return "an unnamed peer";
        }
    }

    Peer peer() {
        return peer;
    }

    /**
     * Accepts connections until {@code closed}, each an accepted link of {@code owner} handed to {@code start};
     * on the calling thread. A connection over a cap of {@code admission} is closed at once, and counted.
     */
    static void acceptLoop(ServerSocketChannel server, LinkOwner owner, HandshakeAdmission admission,
            BooleanSupplier closed, Consumer<Link> start) {
        while (!closed.getAsBoolean()) {
            SocketChannel accepted = null;
            HandshakeAdmission.Ticket ticket = null;
            try {
                accepted = server.accept();
                ticket = admission.admit(((java.net.InetSocketAddress) accepted.getRemoteAddress()).getAddress(),
                        owner.name());
                if (ticket == null) {
                    owner.counters().connectionsOverCap.increment();
                    closeQuietly(accepted); // before a link, a thread or a buffer is made for it
                    continue;
                }
                Tls tls = owner.security().tls();
                start.accept(new Link(owner, accepted, false, null, tls == null ? null : tls.serverEngine(),
                        ticket));
            } catch (IOException ex) {
                if (ticket != null) {
                    ticket.release();
                }
                if (accepted != null) {
                    closeQuietly(accepted);
                }
                if (!closed.getAsBoolean()) {
                    LOG.warn("{}: accept failed: {}", owner.name(), ex.getMessage());
                    try {
                        Thread.sleep(100); // out of file descriptors, say: do not spin
                    } catch (InterruptedException interrupted) {
                        return;
                    }
                }
            }
        }
    }

    private static void closeQuietly(SocketChannel channel) {
        try {
            channel.close();
        } catch (IOException ignored) {
            // it failed already
        }
    }

    // ---------------------------------------------------------------- writing

    /** Queues an uncounted message (HELLO, WELCOME, ACK, PING, PONG, BYE, a closing ERROR) ahead of all else. */
    void sendImmediate(byte[] packed) {
        boolean tooMuch;
        out.lock();
        try {
            immediate.addLast(packed);
            immediateBytes += packed.length;
            tooMuch = immediateBytes > MAX_IMMEDIATE_BYTES;
        } finally {
            out.unlock();
        }
        if (tooMuch) {
            // a peer that sends PINGs (or anything we must answer at once) but never reads
            fail(new EndpointException(ErrorCode.TOO_LARGE, describe() + " does not read: over "
                    + MAX_IMMEDIATE_BYTES + " bytes of ACK and PONG wait for it"));
            return;
        }
        flush();
    }

    /**
     * Sends what is queued, {@code unsentBytes} of it. A send after a pause is written at once from the
     * calling thread (no thread hop, for latency). Sends in a stream are left to the I/O thread, which writes
     * them in batches while the senders go on packing the next messages: one system call (and, with TLS, one
     * run of encryption) for many messages, on a thread of its own. It writes a full batch
     * ({@link #BATCH_BYTES}) at once, and lingers {@link #COALESCE_NANOS} for more before it writes less.
     */
    void send(long unsentBytes) {
        if (Thread.currentThread() == ioThread) {
            flush();
            return;
        }
        // in a stream the clock (24 ns a read here) is read every CLOCK_EVERY sends only: a 64 B send then costs
        // about 40 ns, so a pause is still seen within microseconds
        int sends = sendsUnclocked + 1;
        if (!streaming || sends >= CLOCK_EVERY) {
            long now = System.nanoTime();
            streaming = now - clockedAt < sends * COALESCE_NANOS;
            clockedAt = now;
            sendsUnclocked = 0;
            if (!streaming) {
                flush();
                return;
            }
        } else {
            sendsUnclocked = sends;
        }
        if (unsentBytes >= batchBytes && !batchFull) {
            batchFull = true;
        }
        // the I/O thread checks the flag before it selects: wake it only if it may be blocked already
        if (!flushRequested.get() && flushRequested.compareAndSet(false, true) && selecting) {
            selector.wakeup();
        }
    }

    /**
     * Writes what is waiting, from the calling thread, without blocking. Callers that find another thread
     * writing leave it a flag: the writer loops until nobody has asked for more.
     */
    void flush() {
        dirty.set(true);
        while (dirty.get() && state != State.CLOSED) {
            if (!out.tryLock()) {
                return; // the holder re-checks dirty before it lets go
            }
            try {
                dirty.set(false);
                writeSome();
            } catch (IOException e) {
                fail(new EndpointException(ErrorCode.INTERNAL, "writing to " + peerName + " failed: " + e.getMessage(),
                        e));
                return;
            } finally {
                out.unlock();
            }
        }
    }

    /**
     * Under out: writes the output buffer, refilling it from the immediate messages and then the send queue,
     * until the socket takes no more or nothing is left. Messages are copied into one direct buffer: one
     * system call carries many small ones, and a large one goes out in pieces without a temporary copy of it
     * all.
     */
    private void writeSome() throws IOException {
        if (transport.handshaking()) {
            return; // nothing of GMA before TLS is up: the I/O thread flushes when it is
        }
        while (true) {
            fill();
            if (output.position() == 0 && !transport.pendingOutput()) {
                wantWrite(false);
                return;
            }
            output.flip();
            int n = transport.write(output);
            output.compact();
            endpoint.counters().bytesOut.add(n);
            if (output.position() > 0 || transport.pendingOutput()) {
                wantWrite(true); // the socket is full; the I/O thread goes on when it is writable
                return;
            }
            lastWriteAt = System.nanoTime();
        }
    }

    /** Under out: copies into the output buffer what fits of the run being written and those after it. */
    private void fill() {
        while (output.hasRemaining()) {
            if (run.length == 0 && !nextRun()) {
                return;
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
            run.bytes = b;
            run.offset = 0;
            run.length = b.length;
            return true;
        }
        Peer p = peer;
        int taken = state == State.OPEN && p != null ? p.queue.next(this, run) : 0;
        if (taken == 0) {
            return false;
        }
        endpoint.counters().messagesOut.add(taken);
        return true;
    }

    private void wantWrite(boolean on) {
        SelectionKey key = channel.keyFor(selector);
        if (key == null || !key.isValid()) {
            return;
        }
        int ops = on ? SelectionKey.OP_READ | SelectionKey.OP_WRITE : SelectionKey.OP_READ;
        try {
            if (key.interestOps() != ops) {
                key.interestOps(ops);
                if (on) {
                    selector.wakeup();
                }
            }
        } catch (java.nio.channels.CancelledKeyException closing) {
            // the link is closing; its I/O thread will report it
        }
    }

    /** Runs {@code task} on this link's I/O thread, soon (for an owner's state that only that thread touches). */
    void execute(Runnable task) {
        tasks.add(task);
        selector.wakeup();
    }

    /**
     * On the I/O thread: counts {@code n} more messages, of {@code bytes} in all, as received, that the owner
     * did not take when they arrived and takes now, in the order they came; the next ACK covers them.
     */
    void countTaken(int n, long bytes) {
        if (n <= 0) {
            return;
        }
        if (received == ackSent) {
            firstUnackedAt = System.nanoTime();
        }
        received += n;
        receivedBytes += bytes;
        if (received - ackSent >= ACK_EVERY || receivedBytes - ackSentBytes >= ACK_EVERY_BYTES) {
            sendAck();
        }
    }

    // ---------------------------------------------------------------- the I/O thread

    @Override
    public void run() {
        ioThread = Thread.currentThread();
        try {
            if (transport.handshaking()) {
                tlsHandshake();
            }
            while (state != State.CLOSED && channel.isOpen()) {
                selecting = true;
                if (flushRequested.get()) {
                    selector.selectNow();
                } else {
                    selector.select(Math.max(1, TimeUnit.NANOSECONDS.toMillis(nextDeadline() - System.nanoTime())));
                }
                selecting = false;
                for (Runnable task; (task = tasks.poll()) != null;) {
                    task.run();
                }
                if (flushRequested.getAndSet(false)) {
                    if (!batchFull) {
                        LockSupport.parkNanos(COALESCE_NANOS); // more sends of the stream join the batch
                    }
                    batchFull = false;
                    flush();
                    streaming = false; // the next send reads the clock: after a pause, it writes at once
                }
                if (byeRequested) {
                    sayBye();
                    break;
                }
                for (SelectionKey key : selector.selectedKeys()) {
                    if (transport.handshaking()) {
                        if (key.isValid() && (key.isReadable() || key.isWritable())) {
                            tlsHandshake();
                        }
                        continue;
                    }
                    if (key.isValid() && key.isReadable()) {
                        read();
                    }
                    if (key.isValid() && key.isWritable()) {
                        flush();
                    }
                }
                selector.selectedKeys().clear();
                timers();
            }
        } catch (TlsTransport.PlaintextPeerException e) {
            plaintextPeer();
        } catch (javax.net.ssl.SSLException e) {
            // a certificate not trusted, a host name it does not name, a TLS alert from the peer: before the link
            // is open, the peer could not be authenticated (or did not authenticate us)
            failure = new EndpointException(state == State.OPEN ? ErrorCode.INTERNAL : ErrorCode.UNAUTHORIZED,
                    "TLS with " + describe() + " failed: " + e.getMessage(), e);
            if (!outbound) {
                LOG.info("{}: TLS with {} failed: {}", endpoint.name(), describe(), e.getMessage());
            }
        } catch (ProtocolException e) {
            // the stream cannot be trusted: tell the peer why, then close (PROTOCOL.md section 1)
            LOG.warn("{}: closing link to {}: {}", endpoint.name(), describe(), e.getMessage());
            sendImmediate(Packed.make(0, Command.ERROR, endpoint.name(), peerName == null ? "" : peerName,
                    e.errorText()));
            failure = new EndpointException(e.code(), e.getMessage(), e);
        } catch (IOException e) {
            if (failure == null) {
                failure = new EndpointException(ErrorCode.INTERNAL, "link to " + peerName + " failed: "
                        + e.getMessage(), e);
            }
        } catch (RuntimeException e) {
            LOG.error("{}: link to {} failed", endpoint.name(), peerName, e);
            failure = new EndpointException(ErrorCode.INTERNAL, "link to " + peerName + " failed: " + e, e);
        } finally {
            closeChannel();
            if (!outbound && !opened) {
                countHandshakeFailure(failure);
            }
            endpoint.linkClosed(this, failure);
        }
    }

    /** An accepted link closed in its handshake: counted by why (not when the peer just went, or we close). */
    private void countHandshakeFailure(EndpointException why) {
        if (why == null) {
            return;
        }
        Counters c = endpoint.counters();
        switch (why.code()) {
            case UNAUTHORIZED, FORBIDDEN -> c.handshakesUnauthorized.increment();
            case TOO_LARGE -> c.handshakesTooLarge.increment();
            case MALFORMED, UNSUPPORTED_VERSION -> c.handshakesMalformed.increment();
            case TIMEOUT -> c.handshakesTimedOut.increment();
            default -> {
                // the peer went away, or this side is closing: nothing refused
            }
        }
    }

    /** On the I/O thread: advances the TLS handshake; once it is over, writes HELLO and reads what came. */
    private void tlsHandshake() throws IOException {
        boolean writable;
        out.lock();
        try {
            writable = transport.handshake();
        } finally {
            out.unlock();
        }
        wantWrite(writable);
        if (!transport.handshaking()) {
            flush();
            if (transport.bufferedInput()) {
                read();
            }
        }
    }

    /**
     * The first bytes were a GMA header where a TLS record was due. Accepted: the peer gets a plaintext ERROR
     * that says so (it could not read a TLS alert). Outbound: a plaintext port answered our ClientHello.
     */
    private void plaintextPeer() {
        if (outbound) {
            failure = new EndpointException(ErrorCode.UNAUTHORIZED, describe() + " answered in plaintext GMA: it"
                    + " does not speak TLS (is security on at both ends?)");
            return;
        }
        String sentence = "this port speaks TLS: connect with TLS";
        failure = new EndpointException(ErrorCode.UNAUTHORIZED, describe() + " spoke plaintext to a TLS port");
        LOG.info("{}: {}", endpoint.name(), failure.getMessage());
        try {
            channel.write(ByteBuffer.wrap(Packed.make(0, Command.ERROR, endpoint.name(), "",
                    new ErrorText(ErrorCode.UNAUTHORIZED, sentence).toBytes())));
            lingerUntilPeerCloses(System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(BYE_DRAIN_MILLIS));
        } catch (IOException ignored) {
            // it gets an end of stream instead
        }
    }

    private long nextDeadline() {
        long now = System.nanoTime();
        long next = now + pingNanos;
        if (state == State.HANDSHAKE) {
            next = Math.min(next, openedAt + HANDSHAKE_NANOS);
        }
        if (received > ackSent) {
            next = Math.min(next, firstUnackedAt + ACK_WITHIN_NANOS);
        }
        next = Math.min(next, Math.max(lastReadAt, lastWriteAt) + pingNanos);
        return Math.min(next, lastReadAt + 3 * pingNanos);
    }

    private void timers() throws IOException {
        long now = System.nanoTime();
        if (state == State.HANDSHAKE && now - openedAt > HANDSHAKE_NANOS) {
            String missing = transport.handshaking() ? "TLS handshake" : outbound ? "WELCOME" : "HELLO";
            failure = new EndpointException(ErrorCode.TIMEOUT, "no " + missing + " from " + describe() + " within "
                    + TimeUnit.NANOSECONDS.toSeconds(HANDSHAKE_NANOS) + " s");
            throw new IOException(failure.getMessage());
        }
        if (received > ackSent && now - firstUnackedAt >= ACK_WITHIN_NANOS) {
            sendAck();
        }
        if (now - lastReadAt > 3 * pingNanos) {
            failure = new EndpointException(ErrorCode.TIMEOUT, peerName + " was silent for 3 ping intervals ("
                    + TimeUnit.NANOSECONDS.toMillis(3 * pingNanos) + " ms)");
            throw new IOException(failure.getMessage());
        }
        if (state == State.OPEN && now - Math.max(lastReadAt, lastWriteAt) >= pingNanos) {
            lastWriteAt = now;
            sendImmediate(Packed.make(0, Command.PING, endpoint.name(), peerName, new byte[0]));
        }
    }

    private void read() throws IOException {
        // a TLS transport may hold whole records after a read that readBuffer could not take
        while (readOnce() && transport.bufferedInput() && state != State.CLOSED) {
            // read on
        }
        if (transport.pendingOutput()) {
            flush(); // the TLS engine has something to say (a KeyUpdate answer, say)
        }
        if (received - ackSent >= ACK_EVERY || receivedBytes - ackSentBytes >= ACK_EVERY_BYTES) {
            sendAck();
        }
    }

    /** Reads and decodes once; whether anything came. */
    private boolean readOnce() throws IOException {
        readBuffer.clear();
        int n = transport.read(readBuffer);
        if (n < 0) {
            throw new IOException(describe() + " closed the connection");
        }
        if (n == 0) {
            return false;
        }
        lastReadAt = System.nanoTime();
        endpoint.counters().bytesIn.add(n);
        readBuffer.flip();
        messagesRead = 0;
        ProtocolException[] bad = new ProtocolException[1];
        decoder.feed(readBuffer, m -> {
            if (bad[0] == null) {
                try {
                    onMessage(m);
                } catch (ProtocolException e) {
                    bad[0] = e;
                }
            }
        });
        endpoint.counters().messagesIn.add(messagesRead);
        if (bad[0] != null) {
            throw bad[0];
        }
        return true;
    }

    private void onMessage(Message m) throws ProtocolException {
        messagesRead++;
        if (state == State.CLOSED) {
            return; // refused, or BYE: what came after it in the same read is not taken
        }
        if (state == State.HANDSHAKE) {
            handshake(m);
            return;
        }
        Command c = m.command();
        if (c == Command.ACK) {
            acknowledged(m.dataBuffer().getLong());
        } else if (c == Command.PING) {
            sendImmediate(Packed.make(m.sequence(), Command.PONG, endpoint.name(), m.from(), m.data()));
        } else if (c == Command.PONG) {
            return;
        } else if (c == Command.BYE) {
            sendAck();
            endpoint.saidBye(peerName);
            failure = new EndpointException(ErrorCode.SHUTTING_DOWN, peerName + " said BYE");
            state = State.CLOSED;
        } else if (c == Command.HELLO || c == Command.WELCOME) {
            throw new ProtocolException(ErrorCode.MALFORMED, c + " after the handshake");
        } else if (endpoint.receive(m, this)) {
            if (received == ackSent) {
                firstUnackedAt = System.nanoTime();
            }
            received++;
            receivedBytes += m.encodedLength();
        }
    }

    private void handshake(Message m) throws ProtocolException {
        if (outbound) {
            if (m.command() == Command.ERROR) {
                String text = m.dataAsString();
                // an ERROR without a known code first is a refusal all the same; so is a code alone, without
                // the space and sentence that follow it (what a refused link has always read it as)
                ErrorCode code = text.indexOf(' ') > 0 ? ErrorText.parse(text, ErrorCode.FORBIDDEN).code()
                        : ErrorCode.FORBIDDEN;
                failure = new EndpointException(code, peerName + " refused the link: " + text);
                state = State.CLOSED;
                return;
            }
            if (m.command() != Command.WELCOME) {
                throw new ProtocolException(ErrorCode.MALFORMED, "expected WELCOME, got " + m.command());
            }
            state = State.OPEN;
            opened();
            endpoint.linkOpened(this);
        } else {
            if (m.command() != Command.HELLO) {
                throw new ProtocolException(ErrorCode.MALFORMED, "expected HELLO first, got " + m.command());
            }
            String who;
            try {
                // HELLO's data is a secret: it goes to authenticate and nowhere else, never to a log
                who = endpoint.security().authenticate(m.dataAsString(), transport.peerIdentity(),
                        endpoint.audience());
            } catch (AuthException e) {
                refuse(m, ErrorCode.UNAUTHORIZED, e.getMessage());
                return;
            }
            Refusal refused = endpoint.refusal(m, who);
            if (refused != null) {
                refuse(m, refused.code(), refused.sentence());
                return;
            }
            identity = who;
            peerName = m.from();
            sendImmediate(Packed.make(0, Command.WELCOME, endpoint.name(), m.from(), new byte[0]));
            state = State.OPEN;
            opened();
            carry(endpoint.linkOpened(this));
        }
        flush();
    }

    /**
     * On the I/O thread, from the decoder's sink, as the handshake ends: the peer is trusted, so the full
     * message limit and a stream's buffers from the next byte on, and the link no longer counts against the
     * caps on unauthenticated connections. readOnce fed the old read buffer and does not touch it again; the
     * output buffer is swapped under out, with what it held.
     */
    private void opened() {
        opened = true;
        decoder.endHandshake();
        readBuffer = ByteBuffer.allocate(READ_BYTES);
        ByteBuffer bigger = transport.outputBuffer(OUTPUT_BYTES);
        out.lock();
        try {
            output.flip();
            bigger.put(output);
            output = bigger;
            transport.opened();
        } finally {
            out.unlock();
        }
        if (admitted != null) {
            admitted.release();
        }
    }

    /** Answers HELLO with ERROR and closes. */
    private void refuse(Message hello, ErrorCode code, String sentence) {
        LOG.info("{}: refused a link from {} (HELLO from \"{}\"): {} {}", endpoint.name(), describe(), hello.from(),
                code, sentence);
        sendImmediate(Packed.make(0, Command.ERROR, endpoint.name(), hello.from(),
                new ErrorText(code, sentence).toBytes()));
        failure = new EndpointException(code, sentence);
        state = State.CLOSED; // the ERROR was written at once: the socket is empty this early
    }

    /** An ACK: the peer has received {@code count} counted messages on this link. */
    private void acknowledged(long count) {
        long delta = count - acknowledgedByPeer;
        Peer p = peer;
        if (delta <= 0 || p == null) {
            return;
        }
        acknowledgedByPeer = count;
        if (!worked) {
            worked = true;
            p.healthy();
        }
        p.queue.acknowledge(this, delta);
    }

    /** Whether the peer acknowledged anything on this link: it worked, whatever ended it. */
    boolean worked() {
        return worked;
    }

    private void sendAck() {
        if (received == ackSent || peerName == null) {
            return;
        }
        ackSent = received;
        ackSentBytes = receivedBytes;
        byte[] count = ByteBuffer.allocate(8).putLong(received).array();
        sendImmediate(Packed.make(0, Command.ACK, endpoint.name(), peerName, count));
    }

    // ---------------------------------------------------------------- closing

    /** Ends the link from any thread; the I/O thread reports it to the endpoint. */
    void fail(EndpointException reason) {
        if (failure == null) {
            failure = reason;
        }
        state = State.CLOSED;
        selector.wakeup();
    }

    /**
     * Closes the link for good: its I/O thread acknowledges what arrived, says BYE, and closes once that is
     * written or after {@link #BYE_DRAIN_MILLIS}.
     */
    void bye() {
        byeRequested = true;
        selector.wakeup();
    }

    /** On the I/O thread: ACK, BYE, a bounded wait for them to be written, then closed. */
    private void sayBye() throws IOException {
        if (state == State.OPEN && peerName != null) {
            sendAck();
            sendImmediate(Packed.make(0, Command.BYE, endpoint.name(), peerName, new byte[0]));
            long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(BYE_DRAIN_MILLIS);
            drain(deadline);
            closeOutbound(deadline);
            lingerUntilPeerCloses(deadline);
        }
        if (failure == null) {
            failure = new EndpointException(ErrorCode.SHUTTING_DOWN, endpoint.name() + " is closing");
        }
        state = State.CLOSED;
    }

    /** Ends TLS output with close_notify, written within the deadline if the socket takes it. */
    private void closeOutbound(long deadline) throws IOException {
        if (hasUnwritten()) {
            return;
        }
        out.lock();
        try {
            if (!transport.closeOutbound()) {
                return;
            }
        } finally {
            out.unlock();
        }
        drain(deadline);
    }

    /** Writes what waits until it is all written, the deadline passes or the channel closes. */
    private void drain(long deadline) throws IOException {
        flush();
        while (hasUnwritten() && System.nanoTime() < deadline && channel.isOpen()) {
            selector.select(10);
            selector.selectedKeys().clear();
            flush();
        }
    }

    /**
     * Half-closes, then reads and discards until the peer closes too or the deadline passes: closing a socket
     * with unread input makes the kernel answer with a reset, which can destroy the ACK and BYE just written
     * (the peer would then send again what was taken).
     */
    private void lingerUntilPeerCloses(long deadline) throws IOException {
        if (hasUnwritten() || !channel.isOpen()) {
            return;
        }
        channel.shutdownOutput();
        while (System.nanoTime() < deadline) {
            selector.select(10);
            selector.selectedKeys().clear();
            readBuffer.clear();
            if (channel.read(readBuffer) < 0) {
                return;
            }
        }
    }

    private boolean hasUnwritten() {
        out.lock();
        try {
            return output.position() > 0 || run.length > 0 || !immediate.isEmpty() || transport.pendingOutput();
        } finally {
            out.unlock();
        }
    }

    /** Closes a link whose thread never started (the endpoint closed meanwhile). */
    void abort() {
        closeChannel();
    }

    private void closeChannel() {
        state = State.CLOSED;
        if (admitted != null) {
            admitted.release();
        }
        try {
            selector.close();
        } catch (IOException ignored) {
            // closing anyway
        }
        try {
            channel.close();
        } catch (IOException ignored) {
            // closing anyway
        }
    }
}
