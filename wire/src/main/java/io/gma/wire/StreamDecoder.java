package io.gma.wire;

import java.nio.ByteBuffer;
import java.util.function.Consumer;

/**
 * Decodes a stream of messages back to back (a TCP connection, an HTTP body) from chunks of any size.
 *
 * <pre>
 *  chunk 1            chunk 2                         chunk 3
 * +---------+       +---------------------------+    +-----------------------+
 * | GM 01 01|  ...  | header | from | to | da.. |    | ..ta | GM 01 02 .... |
 * +---------+       +---------------------------+    +-----------------------+
 *  header bytes are    the header is checked          the message is complete:
 *  checked as they     (magic, version, command,      the sink gets it
 *  arrive              lengths, limit) before the
 *                      message's array is allocated
 * </pre>
 *
 * <p>Memory: at most 20 header bytes plus one message's array, allocated only after its header passed the
 * checks, so a peer cannot make the decoder allocate more than {@code 20 + 255 + 255 + maxMessageBytes}. A codec
 * that keeps large data apart ({@link WireCodec#withDataApartFrom}) makes such a message two arrays of the same
 * bytes in all: its header and names, and its data.
 * A bad magic, version or command is refused as soon as its byte arrives.
 *
 * <p>A decoder for a link in its handshake ({@link WireCodec#newHandshakeDecoder}) has a smaller limit until
 * {@link #endHandshake()}: a peer that has not authenticated yet cannot make it allocate more than
 * {@code 20 + 255 + 255 + handshakeMaxDataBytes}.
 *
 * <p>Once {@link #feed} has thrown, the stream cannot be trusted: the decoder refuses every later call and
 * the connection should be closed (protocol.md section 1). Not thread-safe: one decoder per stream.
 */
public final class StreamDecoder {
    private final int maxMessageBytes;
    /** The limit now: maxMessageBytes, or a smaller one until the handshake is over. */
    private int maxDataBytes;
    private boolean handshake;
    private final byte[] header = new byte[Layout.HEADER_BYTES];
    private int headerFilled;
    /** Data of this many bytes or more is kept in an array of its own ({@link WireCodec#withDataApartFrom}). */
    private final int dataApartBytes;
    /**
     * The message being filled, allocated once its header passed; null between messages. Its header and names
     * alone when {@link #apart} holds its data, which is filled once this is full.
     */
    private byte[] current;
    private int currentFilled;
    /** The data of the message being filled, kept apart; null when it is in {@link #current}. */
    private byte[] apart;
    private int apartFilled;
    private boolean failed;
    private final RecentNames recent = new RecentNames();

    /**
     * With {@code handshakeMaxDataBytes} (at most maxMessageBytes) as the limit until {@link #endHandshake()}, and
     * data of {@code dataApartBytes} or more kept apart.
     */
    StreamDecoder(int maxMessageBytes, int handshakeMaxDataBytes, int dataApartBytes) {
        this.maxMessageBytes = maxMessageBytes;
        this.maxDataBytes = handshakeMaxDataBytes;
        this.handshake = handshakeMaxDataBytes < maxMessageBytes;
        this.dataApartBytes = dataApartBytes;
    }

    /**
     * The handshake is over (the peer authenticated): from the next header on, the limit is maxMessageBytes.
     * The sink may call this for the message that ends the handshake: the next header of the same chunk is
     * checked against maxMessageBytes. Does nothing on a decoder without a handshake limit, or called again.
     */
    public void endHandshake() {
        maxDataBytes = maxMessageBytes;
        handshake = false;
    }

    /** The longest data accepted now, in bytes: the handshake's limit until {@link #endHandshake()}. */
    public int maxDataBytes() {
        return maxDataBytes;
    }

    /**
     * Decodes {@code chunk[offset, offset+length)}, handing each completed message to {@code sink} in order, and
     * keeps any partial message for the next call. The chunk is not retained.
     *
     * @throws ProtocolException MALFORMED, UNSUPPORTED_VERSION or TOO_LARGE; messages completed before the bad
     *     bytes have reached the sink, none after
     * @throws IllegalStateException if an earlier call failed (or the sink threw)
     */
    public void feed(byte[] chunk, int offset, int length, Consumer<? super Message> sink)
            throws ProtocolException {
        if (failed) {
            throw new IllegalStateException("this stream already failed; close it");
        }
        failed = true; // cleared on the normal way out: a throw from here or the sink leaves it set
        int pos = offset;
        int end = offset + length;
        while (pos < end) {
            if (current == null && headerFilled == 0 && end - pos >= Layout.HEADER_BYTES) {
                // Fast path: a whole header in the chunk, read in place.
                int total = Layout.checkHeader(chunk, pos, maxDataBytes, handshake);
                int dataLength = (int) Layout.u32(chunk, pos + Layout.OFF_DATA_LENGTH);
                if (end - pos >= total && dataLength < dataApartBytes) {
                    byte[] packed = new byte[total];
                    System.arraycopy(chunk, pos, packed, 0, total);
                    pos += total;
                    sink.accept(Message.fromChecked(packed, recent));
                    continue;
                }
                begin(total, dataLength);
            }
            if (current == null) {
                int n = Math.min(Layout.HEADER_BYTES - headerFilled, end - pos);
                System.arraycopy(chunk, pos, header, headerFilled, n);
                Layout.checkPrefix(header, 0, headerFilled + n);
                headerFilled += n;
                pos += n;
                if (headerFilled < Layout.HEADER_BYTES) {
                    continue;
                }
                begin(Layout.checkHeader(header, 0, maxDataBytes, handshake),
                        (int) Layout.u32(header, Layout.OFF_DATA_LENGTH));
                System.arraycopy(header, 0, current, 0, Layout.HEADER_BYTES);
                currentFilled = Layout.HEADER_BYTES;
                headerFilled = 0;
            }
            int n = Math.min(remaining(), end - pos);
            System.arraycopy(chunk, pos, filling(), position(), n);
            pos += n;
            filledBy(n, sink);
        }
        failed = false;
    }

    /** Allocates the arrays of a message of {@code total} bytes whose header passed, and fills them from 0. */
    private void begin(int total, int dataLength) {
        if (dataLength >= dataApartBytes) {
            current = new byte[total - dataLength];
            apart = new byte[dataLength];
        } else {
            current = new byte[total];
        }
        currentFilled = 0;
        apartFilled = 0;
    }

    /** The array the current message's next bytes go to: its own, or its data's once the header is in. */
    private byte[] filling() {
        return apart != null && currentFilled == current.length ? apart : current;
    }

    /** {@code n} more bytes of the current message are in: it goes to the sink once it is whole. */
    private void filledBy(int n, Consumer<? super Message> sink) throws ProtocolException {
        if (filling() == apart) {
            apartFilled += n;
        } else {
            currentFilled += n;
        }
        if (currentFilled == current.length && (apart == null || apartFilled == apart.length)) {
            byte[] packed = current;
            byte[] data = apart;
            current = null;
            apart = null;
            sink.accept(data == null ? Message.fromChecked(packed, recent)
                    : Message.fromCheckedApart(packed, data, recent));
        }
    }

    /**
     * Decodes the buffer's remaining bytes as {@link #feed(byte[], int, int, Consumer)} does, and advances its
     * position to its limit.
     */
    public void feed(ByteBuffer chunk, Consumer<? super Message> sink) throws ProtocolException {
        int length = chunk.remaining();
        if (chunk.hasArray()) {
            feed(chunk.array(), chunk.arrayOffset() + chunk.position(), length, sink);
            chunk.position(chunk.limit());
            return;
        }
        byte[] copy = new byte[Math.min(length, 64 * 1024)];
        while (chunk.hasRemaining()) {
            int n = Math.min(copy.length, chunk.remaining());
            chunk.get(copy, 0, n);
            feed(copy, 0, n, sink);
        }
    }

    /**
     * The rest of the array of the partial message being filled, as a buffer over that array, when at least
     * {@code minBytes} of it are still to come; null otherwise. A reader may read the stream straight into it,
     * one copy fewer for a large message than {@link #feed}, and then calls {@link #filled}. For a message whose
     * data is kept apart ({@link WireCodec#withDataApartFrom}) that array is its header and names until they are
     * in (so null for a large {@code minBytes}), then its data.
     */
    public ByteBuffer remainder(int minBytes) {
        if (failed || current == null || remaining() < minBytes) {
            return null;
        }
        return ByteBuffer.wrap(filling(), position(), remaining());
    }

    /** Where in the array being filled ({@link #filling()}) the next byte goes. */
    private int position() {
        return filling() == apart ? apartFilled : currentFilled;
    }

    /** What the array being filled still wants. */
    private int remaining() {
        return filling().length - position();
    }

    /**
     * {@code n} bytes were read into the buffer of {@link #remainder}; hands the message to {@code sink} once it
     * is complete.
     *
     * @throws ProtocolException as {@link #feed} does for a complete message
     */
    public void filled(int n, Consumer<? super Message> sink) throws ProtocolException {
        if (failed || current == null || n < 0 || n > remaining()) {
            throw new IllegalStateException(String.format("%d bytes filled into a remainder of %d", n,
                    current == null ? 0 : remaining()));
        }
        failed = true; // as in feed: a throw from here or the sink leaves the stream failed
        filledBy(n, sink);
        failed = false;
    }

    /** Whether the decoder sits between messages, holding no partial one. */
    public boolean isIdle() {
        return current == null && headerFilled == 0;
    }

    /** How many bytes of a partial message are held. */
    public int bufferedBytes() {
        return current != null ? currentFilled + apartFilled : headerFilled;
    }

    /**
     * Declares the end of the stream (the connection closed, the body ended).
     *
     * @throws ProtocolException MALFORMED if the stream ended inside a message
     */
    public void finish() throws ProtocolException {
        if (current != null) {
            throw ProtocolException.malformed(String.format(
                    "stream ended inside a message: %d of its %d bytes arrived", currentFilled + apartFilled,
                    current.length + (apart == null ? 0 : apart.length)));
        }
        if (headerFilled != 0) {
            throw ProtocolException.malformed(String.format(
                    "stream ended inside a header: %d of its %d bytes arrived", headerFilled, Layout.HEADER_BYTES));
        }
    }
}
