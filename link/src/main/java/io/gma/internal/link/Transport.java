package io.gma.internal.link;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import javax.net.ssl.SSLEngine;

/**
 * What a {@link Link} reads from and writes to: the socket itself ({@link PlainTransport}), or TLS over it
 * ({@link TlsTransport}). The link sees application bytes only.
 *
 * <p>Threads: {@link #read} and {@link #handshake} run on the link's event loop; {@link #write},
 * {@link #handshake}, {@link #opened} and {@link #closeOutbound} under the link's output lock.
 *
 * <p>Memory: until the link opens (its peer authenticated), a transport holds small buffers only, about one
 * TLS record each; {@link #opened} gives it the buffers of a stream.
 */
abstract class Transport {
    final SocketChannel channel;

    Transport(SocketChannel channel) {
        this.channel = channel;
    }

    /** Plaintext when {@code engine} is null, else TLS with it. */
    static Transport of(SocketChannel channel, SSLEngine engine) {
        return engine == null ? new PlainTransport(channel) : new TlsTransport(channel, engine);
    }

    /**
     * Reads what the socket has into {@code dst}, without blocking.
     *
     * @return the application bytes put into dst (maybe 0), or -1 when the peer closed the stream
     */
    abstract int read(ByteBuffer dst) throws IOException;

    /**
     * Writes from {@code src} what the socket takes, without blocking.
     *
     * @return the application bytes taken from src; with TLS, some may still wait in the transport
     *     ({@link #pendingOutput()})
     */
    abstract int write(ByteBuffer src) throws IOException;

    /**
     * The link is open, its peer authenticated: the buffers of a stream from now on. On the event loop, under
     * the link's output lock; once.
     */
    void opened() {
        // plaintext holds no buffers of its own
    }

    /** The link closed: buffers borrowed go back. Under the link's output lock. */
    void closed() {
        // plaintext holds no buffers of its own
    }

    /** Whether bytes wait in the transport for the socket to be writable: write again, even with nothing new. */
    boolean pendingOutput() {
        return false;
    }

    /** Whether read input waits in the transport, to be read without the socket being readable again. */
    boolean bufferedInput() {
        return false;
    }

    /** Whether the TLS handshake is under way: nothing of GMA may be written until it is over. */
    boolean handshaking() {
        return false;
    }

    /**
     * Advances the TLS handshake as far as the socket allows, without blocking.
     *
     * @return whether it waits for the socket to be writable (else for it to be readable, or it is over)
     */
    boolean handshake() throws IOException {
        return false;
    }

    /**
     * Queues the end of this side's output (TLS close_notify), which {@link #write} of an empty buffer sends.
     *
     * @return whether there is such an end to write (plaintext: no, shutting the socket's output is the end)
     */
    boolean closeOutbound() {
        return false;
    }

    /** The identity the peer proved with its certificate, or null. */
    String peerIdentity() {
        return null;
    }
}
