package io.gma.wire;

import java.nio.BufferOverflowException;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.Objects;

/**
 * Encodes and decodes GMA/1 messages (protocol.md sections 1 and 2): the front door of this module.
 *
 * <pre>{@code
 * WireCodec codec = WireCodec.standard();
 * byte[] bytes = codec.encode(Message.of(Command.DATA, "cpu-k3x9qz@dsg", "collector@dsg", 1, payload));
 * Message m = codec.decode(bytes);
 * StreamDecoder in = codec.newStreamDecoder();   // for a socket or an HTTP body
 * in.feed(chunk, 0, n, message -> deliver(message));
 * }</pre>
 *
 * <p>A codec holds only its limits; it is immutable and may be shared by any number of threads. Stream
 * decoders and writers it makes belong to one thread (or one connection) at a time.
 */
public final class WireCodec {
    /** The default receive limit on a message's data: 16 MiB. */
    public static final int DEFAULT_MAX_MESSAGE_BYTES = 16 * 1024 * 1024;

    private static final WireCodec STANDARD = new WireCodec(DEFAULT_MAX_MESSAGE_BYTES, Integer.MAX_VALUE);

    private final int maxMessageBytes;
    /** Stream decoders keep data of this many bytes or more apart from the header ({@link #withDataApartFrom}). */
    private final int dataApartBytes;

    private WireCodec(int maxMessageBytes, int dataApartBytes) {
        this.maxMessageBytes = maxMessageBytes;
        this.dataApartBytes = dataApartBytes;
    }

    /** A codec with the default limit, {@value #DEFAULT_MAX_MESSAGE_BYTES} bytes of data. */
    public static WireCodec standard() {
        return STANDARD;
    }

    /**
     * A codec that refuses, with TOO_LARGE, messages whose data is longer than {@code maxMessageBytes}.
     *
     * @param maxMessageBytes 8 (an ACK's data) up to {@link Message#MAX_DATA_BYTES}; default 16 MiB
     * @throws IllegalArgumentException outside that range
     */
    public static WireCodec withMaxMessageBytes(int maxMessageBytes) {
        if (maxMessageBytes < Layout.ACK_DATA_BYTES || maxMessageBytes > Message.MAX_DATA_BYTES) {
            throw new IllegalArgumentException(String.format("maxMessageBytes %d is outside %d..%d",
                    maxMessageBytes, Layout.ACK_DATA_BYTES, Message.MAX_DATA_BYTES));
        }
        return new WireCodec(maxMessageBytes, Integer.MAX_VALUE);
    }

    /**
     * This codec, whose stream decoders keep the data of a message that carries {@code bytes} or more in an array
     * of its own ({@link Message#sharedData()}): a receiver that hands large data to an application then copies
     * none of it, where taking it out of the packed form would copy all of it once more. Such a message makes its
     * packed form when asked ({@link Packed#shared}), so a router that forwards packed bytes is better without.
     *
     * @param bytes at least 1
     * @throws IllegalArgumentException if bytes is less than 1
     */
    public WireCodec withDataApartFrom(int bytes) {
        if (bytes < 1) {
            throw new IllegalArgumentException("bytes " + bytes + " is less than 1");
        }
        return new WireCodec(maxMessageBytes, bytes);
    }

    /** The longest data this codec accepts when decoding, in bytes. */
    public int maxMessageBytes() {
        return maxMessageBytes;
    }

    /** The message's bytes on the wire, in a new array of {@link Message#encodedLength()} bytes. */
    public byte[] encode(Message message) {
        return message.packedCopy();
    }

    /**
     * Writes the message's bytes at the buffer's position and advances it.
     *
     * @throws BufferOverflowException if fewer than {@link Message#encodedLength()} bytes remain; nothing is
     *     written then
     */
    public void encode(Message message, ByteBuffer out) {
        message.putTo(out);
    }

    /**
     * Decodes an array holding exactly one message.
     *
     * @throws ProtocolException MALFORMED, UNSUPPORTED_VERSION or TOO_LARGE with a sentence naming the field,
     *     the value and the limit; also MALFORMED when the array is shorter or longer than the one message
     */
    public Message decode(byte[] bytes) throws ProtocolException {
        return decode(bytes, 0, bytes.length);
    }

    /**
     * Decodes {@code bytes[offset, offset+length)}, which must hold exactly one message. The bytes are copied;
     * the caller keeps its array.
     *
     * @throws ProtocolException as {@link #decode(byte[])}
     */
    public Message decode(byte[] bytes, int offset, int length) throws ProtocolException {
        Objects.checkFromIndexSize(offset, length, bytes.length);
        Layout.checkPrefix(bytes, offset, Math.min(length, Layout.HEADER_BYTES));
        if (length < Layout.HEADER_BYTES) {
            throw ProtocolException.malformed(String.format(
                    "truncated message: %d bytes, the header alone is %d", length, Layout.HEADER_BYTES));
        }
        int total = Layout.checkHeader(bytes, offset, maxMessageBytes);
        if (total > length) {
            throw ProtocolException.malformed(String.format(
                    "truncated message: %d of the %d bytes its header announces", length, total));
        }
        if (total < length) {
            throw ProtocolException.malformed(String.format(
                    "%d bytes follow the %d-byte message; decode takes exactly one (use a StreamDecoder)",
                    length - total, total));
        }
        return Message.fromChecked(Arrays.copyOfRange(bytes, offset, offset + total));
    }

    /** A new incremental decoder with this codec's limit, for one stream. */
    public StreamDecoder newStreamDecoder() {
        return new StreamDecoder(maxMessageBytes, maxMessageBytes, dataApartBytes);
    }

    /**
     * A new incremental decoder for a stream whose peer has not authenticated yet (a link before HELLO and
     * WELCOME, protocol.md section 4): until {@link StreamDecoder#endHandshake()} it refuses, with TOO_LARGE
     * and before allocating anything for the message, data longer than {@code handshakeMaxDataBytes} (or this
     * codec's limit, if that is smaller); then this codec's limit applies.
     *
     * @param handshakeMaxDataBytes at least 0
     * @throws IllegalArgumentException if handshakeMaxDataBytes is negative
     */
    public StreamDecoder newHandshakeDecoder(int handshakeMaxDataBytes) {
        if (handshakeMaxDataBytes < 0) {
            throw new IllegalArgumentException("handshakeMaxDataBytes " + handshakeMaxDataBytes + " is negative");
        }
        return new StreamDecoder(maxMessageBytes, Math.min(handshakeMaxDataBytes, maxMessageBytes), dataApartBytes);
    }

    /**
     * A new writer that packs messages back to back for one write.
     *
     * @param maxBatchBytes how many bytes a batch may hold; a first message longer than this is still taken
     *     alone, so any message can be sent (protocol.md: maxBatchBytes plus one message)
     * @throws IllegalArgumentException if maxBatchBytes is not positive
     */
    public MessageWriter newWriter(int maxBatchBytes) {
        return new MessageWriter(maxBatchBytes);
    }
}
