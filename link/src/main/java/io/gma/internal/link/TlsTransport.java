package io.gma.internal.link;

import io.gma.security.Tls;
import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLEngineResult;
import javax.net.ssl.SSLException;

/**
 * TLS over a socket with an {@link SSLEngine}, without blocking: the handshake runs on the link's event loop,
 * which also unwraps what arrives; senders wrap under the link's output lock (the engine takes wrap and
 * unwrap from two threads).
 *
 * <pre>
 *   link.output --wrap--&gt; netOut (up to RECORDS_PER_WRITE records) --one write--&gt; socket
 *   socket --one read--&gt; netIn --unwrap, record by record--&gt; link.readBuffer
 * </pre>
 *
 * Post-handshake messages (TLS 1.3 session tickets, KeyUpdate) are unwrapped like data; one that needs an
 * answer leaves {@link #pendingOutput()} true, and the link's next write wraps it. Delegated tasks
 * (certificate checks) run inline: only the handshake has them, and it runs on the link's own thread.
 *
 * <p>Memory: until the link opens, netIn, netOut and spare hold about one TLS record each (grown on
 * BUFFER_OVERFLOW if need be), and a link's read buffer smaller than a record is filled from spare. Once the
 * peer authenticated ({@link #opened()}), the buffers are a stream's ({@link #READ_BYTES} for netIn,
 * {@link #RECORDS_PER_WRITE} records for netOut), borrowed from {@link BufferPool} while bytes wait in them and
 * given back once they are empty, so that an idle link holds none (issue 22).
 */
final class TlsTransport extends Transport {
    /** Records wrapped before one socket write, so that a stream costs one system call per this many. */
    static final int RECORDS_PER_WRITE = 8;
    /** Bytes read from the socket at most per system call. */
    static final int READ_BYTES = 128 * 1024;
    private static final ByteBuffer EMPTY = ByteBuffer.allocate(0);

    /** The first bytes from a peer were a GMA header's magic: it speaks plaintext GMA, not TLS. */
    static final class PlaintextPeerException extends IOException {
        private static final long serialVersionUID = 1L;

        PlaintextPeerException() {
            super("the peer spoke plaintext GMA, not TLS");
        }
    }

    private final SSLEngine engine;
    private final int packetBytes;
    private volatile boolean handshaking = true;
    /** An unwrap asked for a wrap (a KeyUpdate answer, a close_notify): the next write does it. */
    private volatile boolean wrapWanted;

    // Event loop only
    private boolean started;
    /** Whether the first bytes were looked at for a plaintext GMA magic. */
    private boolean firstBytesSeen;
    /** Bytes from the socket not unwrapped yet, at [0, position); once open, null while there are none. */
    private ByteBuffer netIn;
    /**
     * Application bytes unwrapped where the link could not take them (the handshake's end), at [0, position);
     * once open, null while there are none.
     */
    private ByteBuffer spare;
    /** The link is open: the network buffers are borrowed while bytes wait in them, of these sizes. */
    private volatile boolean open;
    private int inBytes;
    private int outBytes;

    // under the link's output lock
    /** Records wrapped and not yet written, at [0, position); once open, null while there are none. */
    private ByteBuffer netOut;

    TlsTransport(SocketChannel channel, SSLEngine engine) {
        super(channel);
        this.engine = engine;
        this.packetBytes = engine.getSession().getPacketBufferSize();
        // one record each until the peer authenticated: opened() gives the buffers of a stream
        this.netIn = ByteBuffer.allocate(packetBytes);
        this.netOut = ByteBuffer.allocate(packetBytes);
        this.spare = ByteBuffer.allocate(engine.getSession().getApplicationBufferSize());
    }

    @Override
    void opened() {
        inBytes = Math.max(READ_BYTES, packetBytes);
        outBytes = RECORDS_PER_WRITE * packetBytes;
        open = true;
        // the handshake's buffers: kept only if something waits in them, and given up once it is gone
        netIn = grow(netIn, inBytes);
        netOut = grow(netOut, outBytes);
        releaseIdle();
    }

    /** Once open: the network buffers that hold nothing go back to the pool, spare to the collector. */
    private void releaseIdle() {
        if (!open) {
            return;
        }
        if (netIn != null && netIn.position() == 0) {
            BufferPool.TLS_IN.giveBack(netIn);
            netIn = null;
        }
        if (spare != null && spare.position() == 0) {
            spare = null;
        }
    }

    /** Under the output lock, once open: netOut goes back to the pool if it holds nothing. */
    private void releaseIdleOut() {
        if (open && netOut != null && netOut.position() == 0) {
            BufferPool.TLS_OUT.giveBack(netOut);
            netOut = null;
        }
    }

    @Override
    boolean handshaking() {
        return handshaking;
    }

    @Override
    boolean handshake() throws IOException {
        try {
            if (!started) {
                started = true;
                engine.beginHandshake();
            }
            while (true) {
                if (!flushNet()) {
                    return true;
                }
                switch (engine.getHandshakeStatus()) {
                    case NEED_TASK -> runTasks();
                    case NEED_WRAP -> wrapHandshake();
                    case NEED_UNWRAP, NEED_UNWRAP_AGAIN -> {
                        if (!unwrapHandshake()) {
                            return false;
                        }
                    }
                    default -> {
                        handshaking = false; // FINISHED, NOT_HANDSHAKING
                        return false;
                    }
                }
            }
        } catch (SSLException e) {
            sendAlert();
            throw e;
        }
    }

    private void wrapHandshake() throws IOException {
        SSLEngineResult r = engine.wrap(EMPTY, netOut);
        if (r.getStatus() == SSLEngineResult.Status.BUFFER_OVERFLOW) {
            netOut = grow(netOut, engine.getSession().getPacketBufferSize());
        } else if (r.getStatus() == SSLEngineResult.Status.CLOSED && r.bytesProduced() == 0) {
            throw new EOFException("the TLS session closed during its handshake");
        }
    }

    /** @return whether it unwrapped a record; false when the socket has no more for now */
    private boolean unwrapHandshake() throws IOException {
        while (true) {
            if (netIn.position() > 0) {
                SSLEngineResult r = unwrap(spare);
                switch (r.getStatus()) {
                    case OK:
                        return true;
                    case CLOSED:
                        throw new EOFException("the peer closed TLS during its handshake");
                    case BUFFER_OVERFLOW:
                        spare = grow(spare, engine.getSession().getApplicationBufferSize());
                        continue;
                    default:
                        break; // BUFFER_UNDERFLOW: a record is not whole yet
                }
            }
            int n = fillNetIn();
            if (n < 0) {
                throw new EOFException("the peer closed the connection during the TLS handshake");
            }
            if (n == 0) {
                return false;
            }
            checkFirstBytes();
        }
    }

    /** A TLS record starts with its type (0x14..0x18); GMA starts with 0x47 0x4D. */
    private void checkFirstBytes() throws PlaintextPeerException {
        if (firstBytesSeen || netIn.position() == 0) {
            return;
        }
        if (netIn.get(0) != 0x47) {
            firstBytesSeen = true;
        } else if (netIn.position() >= 2) {
            firstBytesSeen = true;
            if (netIn.get(1) == 0x4D) {
                throw new PlaintextPeerException();
            }
        }
    }

    /** After a failed handshake, the alert that says why goes out if the socket takes it. */
    private void sendAlert() {
        try {
            engine.closeOutbound();
            engine.wrap(EMPTY, netOut);
            flushNet();
        } catch (IOException | RuntimeException ignored) {
            // the handshake failed already: the alert is a courtesy
        }
    }

    private void runTasks() {
        for (Runnable task; (task = engine.getDelegatedTask()) != null;) {
            task.run();
        }
    }

    @Override
    int read(ByteBuffer dst) throws IOException {
        try {
            return readSome(dst);
        } finally {
            releaseIdle();
        }
    }

    private int readSome(ByteBuffer dst) throws IOException {
        int start = dst.position();
        if (spare != null && spare.position() > 0) {
            takeSpare(dst);
        }
        // once a read, not once a record: getSession() takes the engine's lock and copies nothing, but costs
        // 6% of a TLS stream's receiving thread
        int recordBytes = engine.getSession().getApplicationBufferSize();
        if (dst.remaining() >= recordBytes) {
            return unwrapInto(dst, recordBytes) ? dst.position() - start : endOfStream(dst, start);
        }
        if (!dst.hasRemaining() || spare != null && spare.position() > 0) {
            return dst.position() - start;
        }
        // a read buffer smaller than a record (a link in its handshake): records go to spare, and from there
        // what fits
        if (spare == null || spare.capacity() < recordBytes) {
            spare = ByteBuffer.allocate(recordBytes);
        }
        boolean open = unwrapInto(spare, recordBytes);
        takeSpare(dst);
        return open || spare.position() > 0 ? dst.position() - start : endOfStream(dst, start);
    }

    /** Moves what fits of spare's bytes into dst. */
    private void takeSpare(ByteBuffer dst) {
        spare.flip();
        int n = Math.min(spare.remaining(), dst.remaining());
        dst.put(dst.position(), spare, spare.position(), n).position(dst.position() + n);
        spare.position(spare.position() + n).compact();
    }

    /**
     * Unwraps records into dst while it has room for one, reading the socket once at most.
     *
     * @return false at the end of the stream (what dst got before it stays there)
     */
    private boolean unwrapInto(ByteBuffer dst, int recordBytes) throws IOException {
        if (netIn == null) {
            netIn = BufferPool.TLS_IN.take(inBytes);
        }
        boolean socketRead = false;
        // netIn is read from here on, and compacted once at the end: compacting after each record would move
        // the records behind it once per record (3.5 times the bytes read, for 8 records a read)
        netIn.flip();
        try {
            while (dst.remaining() >= recordBytes) {
                SSLEngineResult r = netIn.hasRemaining() ? engine.unwrap(netIn, dst) : null;
                if (r == null || r.getStatus() == SSLEngineResult.Status.BUFFER_UNDERFLOW) {
                    if (socketRead) {
                        break; // one system call per read: the selector says when there is more
                    }
                    socketRead = true;
                    netIn.compact();
                    int n = fillNetIn();
                    netIn.flip();
                    if (n < 0) {
                        return false;
                    }
                    continue;
                }
                if (r.getStatus() == SSLEngineResult.Status.CLOSED) {
                    wrapWanted = true; // our close_notify, if the peer waits for it
                    return false;
                }
                SSLEngineResult.HandshakeStatus hs = r.getHandshakeStatus();
                if (hs == SSLEngineResult.HandshakeStatus.NEED_TASK) {
                    runTasks();
                    hs = engine.getHandshakeStatus();
                }
                if (hs == SSLEngineResult.HandshakeStatus.NEED_WRAP) {
                    wrapWanted = true;
                }
                if (r.getStatus() == SSLEngineResult.Status.BUFFER_OVERFLOW) {
                    break; // dst is full for now
                }
            }
        } finally {
            netIn.compact();
        }
        return true;
    }

    /** At the end of the stream: what this read gave first, and -1 only once there is nothing. */
    private static int endOfStream(ByteBuffer dst, int start) {
        return dst.position() > start ? dst.position() - start : -1;
    }

    private SSLEngineResult unwrap(ByteBuffer dst) throws SSLException {
        netIn.flip();
        try {
            return engine.unwrap(netIn, dst);
        } finally {
            netIn.compact();
        }
    }

    /** Reads from the socket what fits into netIn, first making room for a whole record. */
    private int fillNetIn() throws IOException {
        if (!netIn.hasRemaining()) {
            netIn = grow(netIn, netIn.capacity() + engine.getSession().getPacketBufferSize());
        }
        return channel.read(netIn);
    }

    @Override
    boolean bufferedInput() {
        return netIn != null && netIn.position() > 0 || spare != null && spare.position() > 0;
    }

    @Override
    int write(ByteBuffer src) throws IOException {
        if (netOut == null) {
            netOut = BufferPool.TLS_OUT.take(open ? outBytes : packetBytes);
        }
        try {
            return wrapAndWrite(src);
        } finally {
            releaseIdleOut();
        }
    }

    private int wrapAndWrite(ByteBuffer src) throws IOException {
        if (!flushNet()) {
            return 0;
        }
        if (wrapWanted) {
            wrapWanted = false;
            while (engine.getHandshakeStatus() == SSLEngineResult.HandshakeStatus.NEED_WRAP
                    || !engine.isOutboundDone() && engine.isInboundDone()) {
                SSLEngineResult r = engine.wrap(EMPTY, netOut);
                if (r.bytesProduced() == 0 || r.getStatus() != SSLEngineResult.Status.OK) {
                    break;
                }
            }
        }
        int consumed = 0;
        while (src.hasRemaining()) {
            if (netOut.remaining() < packetBytes && !flushNet()) {
                break;
            }
            SSLEngineResult r = engine.wrap(src, netOut);
            consumed += r.bytesConsumed();
            if (r.getStatus() == SSLEngineResult.Status.CLOSED) {
                throw new SSLException("the TLS session is closed: " + src.remaining() + " bytes not sent");
            }
            if (r.getStatus() == SSLEngineResult.Status.BUFFER_OVERFLOW) {
                if (netOut.position() == 0) {
                    netOut = grow(netOut, engine.getSession().getPacketBufferSize() * RECORDS_PER_WRITE);
                } else if (!flushNet()) {
                    break;
                }
            } else if (r.getHandshakeStatus() == SSLEngineResult.HandshakeStatus.NEED_TASK) {
                runTasks();
            }
        }
        flushNet();
        return consumed;
    }

    /** Writes what netOut holds; whether it is all written. */
    private boolean flushNet() throws IOException {
        if (netOut == null || netOut.position() == 0) {
            return true;
        }
        netOut.flip();
        try {
            channel.write(netOut);
        } finally {
            netOut.compact();
        }
        return netOut.position() == 0;
    }

    @Override
    boolean pendingOutput() {
        return wrapWanted || netOut != null && netOut.position() > 0;
    }

    @Override
    void closed() {
        open = false; // what is left is given back, not borrowed again
        if (netOut != null) {
            BufferPool.TLS_OUT.giveBack(netOut);
            netOut = null;
        }
    }

    @Override
    boolean closeOutbound() {
        engine.closeOutbound();
        wrapWanted = true;
        return true;
    }

    @Override
    String peerIdentity() {
        return Tls.identity(engine.getSession());
    }

    /** A buffer of at least {@code capacity} holding what {@code b} held, in the same mode. */
    private static ByteBuffer grow(ByteBuffer b, int capacity) {
        if (b.capacity() >= capacity && b.hasRemaining()) {
            return b;
        }
        ByteBuffer bigger = b.isDirect() ? ByteBuffer.allocateDirect(Math.max(capacity, b.capacity() * 2))
                : ByteBuffer.allocate(Math.max(capacity, b.capacity() * 2));
        b.flip();
        bigger.put(b);
        return bigger;
    }
}
