package io.gma.wire;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Objects;

/**
 * One GMA/1 message: command, flags, from, to, sequence and data (protocol.md section 1). Immutable, but for
 * the array {@link #sharedData()} hands over.
 *
 * <p>A message keeps its packed form, the exact bytes on the wire, so encoding it is a copy and a router
 * forwards it without re-encoding. The factories copy the caller's data; {@link #data()} returns a copy;
 * {@link #dataBuffer()} is a read-only view that copies nothing.
 *
 * <p>A large message that a stream decoder kept apart ({@link WireCodec#withDataApartFrom}) holds its header and
 * names in one array and its data in another, so that a receiver can take the data as it came
 * ({@link #sharedData()}) rather than copy it out of the packed form; its packed form is then made when asked.
 *
 * <p>The sequence is an unsigned 64-bit number held in a {@code long}: print it with
 * {@link Long#toUnsignedString(long)}.
 */
public final class Message {
    /** Flag bit 0: the sender expects a REPLY or ERROR. The only flag of version 1. */
    public static final int REPLY_EXPECTED = 0x01;
    /** The longest name, in UTF-8 bytes. */
    public static final int MAX_NAME_BYTES = Layout.MAX_NAME_BYTES;
    /** The longest data any message can carry (a receiver's limit is usually far lower). */
    public static final int MAX_DATA_BYTES = Layout.MAX_DATA_BYTES;

    /** The whole message on the wire; or its header and names alone, when {@link #apart} holds its data. */
    private final byte[] packed;
    /** The data, kept apart from the header; null when it is in {@link #packed}. */
    private final byte[] apart;
    private final Command command;
    private final String from;
    private final String to;

    private Message(byte[] packed, byte[] apart, Command command, String from, String to) {
        this.packed = packed;
        this.apart = apart;
        this.command = command;
        this.from = from;
        this.to = to;
    }

    /**
     * A message with the usual flags: REPLY_EXPECTED for REQUEST, none otherwise.
     *
     * @param data the payload; copied, so the caller may reuse the array
     * @throws IllegalArgumentException if a name is over 255 UTF-8 bytes or has an unpaired surrogate, or
     *     the command needs names (DATA, REQUEST, REPLY, SUBSCRIBE, UNSUBSCRIBE, application) and one is
     *     empty, or HELLO has a destination, or ACK data is not 8 bytes
     */
    public static Message of(Command command, String from, String to, long sequence, byte[] data) {
        return of(command, defaultFlags(command), from, to, sequence, data);
    }

    /** REPLY_EXPECTED for REQUEST, none otherwise: the flags every factory uses unless told. */
    public static int defaultFlags(Command command) {
        return command == Command.REQUEST ? REPLY_EXPECTED : 0;
    }

    /**
     * A message with explicit flags.
     *
     * @param flags 0 or {@link #REPLY_EXPECTED}; REQUEST requires REPLY_EXPECTED
     * @param data the payload; copied, so the caller may reuse the array
     * @throws IllegalArgumentException as {@link #of(Command, String, String, long, byte[])}, or for other flags
     */
    public static Message of(Command command, int flags, String from, String to, long sequence, byte[] data) {
        return new Message(pack(command, flags, from, to, sequence, data, 0, data.length), null, command, from,
                to);
    }

    /**
     * An ERROR message whose data is {@code CODE sentence} ({@link ErrorText}).
     *
     * @param sequence the sequence of the message that failed
     * @throws NullPointerException if {@code code} or {@code sentence} is null
     */
    public static Message error(String from, String to, long sequence, ErrorCode code, String sentence) {
        return of(Command.ERROR, from, to, sequence, new ErrorText(code, sentence).toBytes());
    }

    /** Builds the packed array for the factories and {@link Packed#make}. */
    static byte[] pack(Command command, int flags, String from, String to, long sequence,
            byte[] data, int dataOffset, int dataLength) {
        byte[] fromBytes = Utf8.encodeName("from", Objects.requireNonNull(from, "from"));
        byte[] toBytes = Utf8.encodeName("to", Objects.requireNonNull(to, "to"));
        return pack(command, flags, fromBytes, toBytes, sequence, data, dataOffset, dataLength);
    }

    /**
     * Refuses flags a sender may not send: bits other than REPLY_EXPECTED, or a REQUEST without it.
     *
     * @throws IllegalArgumentException naming the flags
     */
    static void checkFlags(Command command, int flags) {
        if ((flags & ~REPLY_EXPECTED) != 0) {
            throw new IllegalArgumentException(String.format(
                    "flags 0x%02X has bits other than REPLY_EXPECTED (0x01)", flags));
        }
        if (command == Command.REQUEST && flags != REPLY_EXPECTED) {
            throw new IllegalArgumentException("REQUEST needs the REPLY_EXPECTED flag");
        }
    }

    /** Builds the packed array from names already encoded and checked by {@link Utf8#encodeName}. */
    static byte[] pack(Command command, int flags, byte[] fromBytes, byte[] toBytes, long sequence,
            byte[] data, int dataOffset, int dataLength) {
        Objects.requireNonNull(command, "command");
        Objects.requireNonNull(data, "data");
        Objects.checkFromIndexSize(dataOffset, dataLength, data.length);
        checkFlags(command, flags);
        if (dataLength > MAX_DATA_BYTES) {
            throw new IllegalArgumentException(String.format(
                    "data is %d bytes, over the limit of %d", dataLength, MAX_DATA_BYTES));
        }
        Layout.checkFields(command, fromBytes.length, toBytes.length, dataLength, IllegalArgumentException::new);

        int dataStart = Layout.HEADER_BYTES + fromBytes.length + toBytes.length;
        byte[] p = new byte[dataStart + dataLength];
        // first, straight after the allocation: the JIT then zeroes only the header and names (Envelope#pack)
        System.arraycopy(data, dataOffset, p, dataStart, dataLength);
        p[0] = (byte) (Layout.MAGIC >>> 8);
        p[1] = (byte) Layout.MAGIC;
        p[Layout.OFF_VERSION] = Layout.VERSION;
        p[Layout.OFF_COMMAND] = (byte) command.code();
        p[Layout.OFF_FLAGS] = (byte) flags;
        p[Layout.OFF_FROM_LENGTH] = (byte) fromBytes.length;
        p[Layout.OFF_TO_LENGTH] = (byte) toBytes.length;
        Layout.putU64(p, Layout.OFF_SEQUENCE, sequence);
        Layout.putU32(p, Layout.OFF_DATA_LENGTH, dataLength);
        System.arraycopy(fromBytes, 0, p, Layout.HEADER_BYTES, fromBytes.length);
        System.arraycopy(toBytes, 0, p, Layout.HEADER_BYTES + fromBytes.length, toBytes.length);
        return p;
    }

    /**
     * Wraps a packed array whose header has passed {@link Layout#checkHeader} and whose length is exactly the
     * header's total. Takes ownership of the array; normalises the bits a receiver ignores (unknown flags,
     * the reserved byte) so that equal messages have equal bytes.
     */
    static Message fromChecked(byte[] packed) throws ProtocolException {
        int fromLength = packed[Layout.OFF_FROM_LENGTH] & 0xFF;
        int toLength = packed[Layout.OFF_TO_LENGTH] & 0xFF;
        return normalised(packed, null, decodeName("from", packed, Layout.HEADER_BYTES, fromLength),
                decodeName("to", packed, Layout.HEADER_BYTES + fromLength, toLength));
    }

    /** As {@link #fromChecked(byte[])}, the names decoded through a stream's recent pair. */
    static Message fromChecked(byte[] packed, RecentNames recent) throws ProtocolException {
        recent.decode(packed);
        return normalised(packed, null, recent.from(), recent.to());
    }

    /**
     * As {@link #fromChecked(byte[], RecentNames)} for a message whose data is kept apart: {@code head} holds the
     * checked header and the names, {@code data} exactly the data the header announces. Takes both arrays.
     */
    static Message fromCheckedApart(byte[] head, byte[] data, RecentNames recent) throws ProtocolException {
        recent.decode(head);
        return normalised(head, data, recent.from(), recent.to());
    }

    private static Message normalised(byte[] packed, byte[] apart, String from, String to) {
        packed[Layout.OFF_FLAGS] &= REPLY_EXPECTED;
        packed[Layout.OFF_RESERVED] = 0;
        return new Message(packed, apart, Command.lookup(packed[Layout.OFF_COMMAND] & 0xFF), from, to);
    }

    static String decodeName(String field, byte[] b, int off, int len) throws ProtocolException {
        String name = NameCache.decode(b, off, len);
        if (name == null) {
            int bad = Utf8.firstInvalid(b, off, len);
            throw ProtocolException.malformed(String.format(
                    "%s is not valid UTF-8: byte 0x%02X at offset %d of %d", field, b[bad] & 0xFF, bad - off, len));
        }
        return name;
    }

    /** The command. */
    public Command command() {
        return command;
    }

    /** The flags: 0 or {@link #REPLY_EXPECTED}. */
    public int flags() {
        return packed[Layout.OFF_FLAGS];
    }

    /** Whether the sender expects a REPLY or ERROR. */
    public boolean replyExpected() {
        return (packed[Layout.OFF_FLAGS] & REPLY_EXPECTED) != 0;
    }

    /** The sender's name; empty for a HELLO sent before registration. */
    public String from() {
        return from;
    }

    /** The destination's name; empty on connection-level commands such as HELLO. */
    public String to() {
        return to;
    }

    /** The sequence, an unsigned 64-bit number. */
    public long sequence() {
        return Layout.u64(packed, Layout.OFF_SEQUENCE);
    }

    /** The length of the data in bytes. */
    public int dataLength() {
        return (int) Layout.u32(packed, Layout.OFF_DATA_LENGTH);
    }

    /** A copy of the data. */
    public byte[] data() {
        return apart != null ? apart.clone() : Arrays.copyOfRange(packed, dataOffset(), packed.length);
    }

    /**
     * The data without a copy when the message keeps it apart ({@link WireCodec#withDataApartFrom}), else a copy:
     * for a receiver that hands the data on as its own (a handler's payload) and uses the message no more. The
     * message is immutable only while nobody changes the array.
     */
    public byte[] sharedData() {
        return apart != null ? apart : data();
    }

    /**
     * Whether the data is in an array of its own ({@link WireCodec#withDataApartFrom}): {@link #sharedData()} is
     * then that array, not a copy, and {@link Packed#shared} makes a copy.
     */
    public boolean dataKeptApart() {
        return apart != null;
    }

    /** A read-only view of the data, without copying; position 0, limit {@link #dataLength()}. */
    public ByteBuffer dataBuffer() {
        ByteBuffer view = apart != null ? ByteBuffer.wrap(apart) : ByteBuffer.wrap(packed, dataOffset(), dataLength());
        return view.slice().asReadOnlyBuffer();
    }

    /** The data decoded as UTF-8 (malformed input becomes U+FFFD). */
    public String dataAsString() {
        return apart != null ? new String(apart, StandardCharsets.UTF_8)
                : new String(packed, dataOffset(), dataLength(), StandardCharsets.UTF_8);
    }

    /** The length of this message on the wire: 20 + F + T + D. */
    public int encodedLength() {
        return apart != null ? packed.length + apart.length : packed.length;
    }

    private int dataOffset() {
        return packed.length - dataLength();
    }

    /**
     * The packed bytes themselves, not a copy, for a message that keeps its data in them; callers inside the
     * module must not change them. A message that keeps its data apart packs them into a new array each time.
     */
    byte[] packed() {
        return apart != null ? packedCopy() : packed;
    }

    /** The packed bytes in a new array. */
    byte[] packedCopy() {
        if (apart == null) {
            return packed.clone();
        }
        byte[] whole = new byte[encodedLength()];
        copyTo(whole, 0);
        return whole;
    }

    /** Copies the packed bytes into {@code into} from {@code at}, which has room for them. */
    void copyTo(byte[] into, int at) {
        System.arraycopy(packed, 0, into, at, packed.length);
        if (apart != null) {
            System.arraycopy(apart, 0, into, at + packed.length, apart.length);
        }
    }

    /** Writes the packed bytes at the buffer's position; as {@link ByteBuffer#put(byte[])}, all or nothing. */
    void putTo(ByteBuffer out) {
        if (apart == null) {
            out.put(packed);
        } else if (out.remaining() < encodedLength()) {
            throw new java.nio.BufferOverflowException();
        } else {
            out.put(packed).put(apart);
        }
    }

    @Override
    public boolean equals(Object o) {
        // packed() is the stored array unless the data is kept apart; the lengths first spare packing those
        return o == this || o instanceof Message m && encodedLength() == m.encodedLength()
                && Arrays.equals(packed(), m.packed());
    }

    @Override
    public int hashCode() {
        return Arrays.hashCode(packed());
    }

    /** For example {@code DATA #42 cpu-agent-k3x9qz@dsg -> collector@dsg, 9 bytes}; never the data itself. */
    @Override
    public String toString() {
        return command + " #" + Long.toUnsignedString(sequence()) + " " + from + " -> " + to + ", "
                + dataLength() + " bytes";
    }
}
