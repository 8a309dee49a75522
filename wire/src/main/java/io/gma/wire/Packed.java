package io.gma.wire;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * jGMA's calls on packed messages: a message is one {@code byte[]} in the wire layout, made with
 * {@link #make}, and its fields are read in place without decoding the rest (the paper's calls 7 and 9-17).
 *
 * <pre>{@code
 * byte[] m = Packed.make(42, Command.DATA, "cpu-k3x9qz@dsg", "collector@dsg", "load=0.73");
 * String to = Packed.to(m);          // "collector@dsg"
 * long seq = Packed.sequence(m);     // 42
 * }</pre>
 *
 * <p>The getters take an array that holds exactly one message, as {@link #make} and {@link #marshal} return;
 * anything else is a programming error and gets an {@link IllegalArgumentException}. Bytes from the network
 * go through {@link #unmarshal} or a {@link WireCodec}, which check everything. The getters for the header
 * fields allocate nothing; {@link #from} and {@link #to} allocate nothing for names seen recently.
 */
public final class Packed {
    /** Unmarshalling applies no limit but the array's own length. */
    private static final WireCodec UNLIMITED = WireCodec.withMaxMessageBytes(Message.MAX_DATA_BYTES);

    private Packed() {
    }

    /**
     * Makes a packed message; the flags are REPLY_EXPECTED for REQUEST and none otherwise.
     *
     * @param data the payload, copied
     * @throws IllegalArgumentException as {@link Message#of(Command, String, String, long, byte[])}
     */
    public static byte[] make(long sequence, Command command, String from, String to, byte[] data) {
        return Message.pack(command, Message.defaultFlags(command), from, to, sequence, data, 0, data.length);
    }

    /** Makes a packed message whose data is the UTF-8 bytes of {@code text}. */
    public static byte[] make(long sequence, Command command, String from, String to, String text) {
        return make(sequence, command, from, to, text.getBytes(StandardCharsets.UTF_8));
    }

    /** The message's packed bytes, in a new array. */
    public static byte[] marshal(Message message) {
        return message.packedCopy();
    }

    /**
     * The message's packed bytes themselves, not a copy: for a router that forwards a message as it came (a PC
     * servlet hands what it decoded from a POST to an endpoint's send queue, which keeps the array). The caller
     * must never change them; a message is immutable only while nobody does. A message whose data a decoder kept
     * apart ({@link WireCodec#withDataApartFrom}) is packed into a new array.
     */
    public static byte[] shared(Message message) {
        return message.packed();
    }

    /**
     * Checks a packed array from anywhere and makes a Message of it (the array is copied). Applies no size
     * limit beyond the array's own length; streams from peers use a {@link WireCodec}'s limit instead.
     *
     * @throws ProtocolException if the bytes are not exactly one valid message
     */
    public static Message unmarshal(byte[] packed) throws ProtocolException {
        return UNLIMITED.decode(packed);
    }

    /** The sender's name. */
    public static String from(byte[] packed) {
        return name("from", packed, Layout.HEADER_BYTES, checked(packed)[Layout.OFF_FROM_LENGTH] & 0xFF);
    }

    /** The destination's name. */
    public static String to(byte[] packed) {
        int fromLength = checked(packed)[Layout.OFF_FROM_LENGTH] & 0xFF;
        return name("to", packed, Layout.HEADER_BYTES + fromLength, packed[Layout.OFF_TO_LENGTH] & 0xFF);
    }

    /** A copy of the data. */
    public static byte[] data(byte[] packed) {
        return Arrays.copyOfRange(packed, dataOffset(packed), packed.length);
    }

    /** The data decoded as UTF-8. */
    public static String dataAsString(byte[] packed) {
        return new String(packed, dataOffset(packed), dataLength(packed), StandardCharsets.UTF_8);
    }

    /** Where the data starts in the array: read it in place from here for {@link #dataLength} bytes. */
    public static int dataOffset(byte[] packed) {
        return packed.length - dataLength(packed);
    }

    /** The data's length in bytes. */
    public static int dataLength(byte[] packed) {
        return (int) Layout.u32(checked(packed), Layout.OFF_DATA_LENGTH);
    }

    /** The sequence, unsigned. */
    public static long sequence(byte[] packed) {
        return Layout.u64(checked(packed), Layout.OFF_SEQUENCE);
    }

    /** The command. */
    public static Command command(byte[] packed) {
        return Command.lookup(checked(packed)[Layout.OFF_COMMAND] & 0xFF);
    }

    /** The flags (bit 0: REPLY_EXPECTED). */
    public static int flags(byte[] packed) {
        return checked(packed)[Layout.OFF_FLAGS] & Message.REPLY_EXPECTED;
    }

    /** A cheap check that the array is one message: magic, version, command, and lengths that add up. */
    private static byte[] checked(byte[] p) {
        if (p.length < Layout.HEADER_BYTES || Layout.u16(p, 0) != Layout.MAGIC
                || p[Layout.OFF_VERSION] != Layout.VERSION || Command.lookup(p[Layout.OFF_COMMAND] & 0xFF) == null
                || Layout.HEADER_BYTES + (p[Layout.OFF_FROM_LENGTH] & 0xFF) + (p[Layout.OFF_TO_LENGTH] & 0xFF)
                        + Layout.u32(p, Layout.OFF_DATA_LENGTH) != p.length) {
            throw new IllegalArgumentException("not a packed GMA/" + Layout.VERSION + " message of "
                    + p.length + " bytes (make it with Packed.make or Packed.marshal)");
        }
        return p;
    }

    private static String name(String field, byte[] packed, int off, int len) {
        String name = NameCache.decode(packed, off, len);
        if (name == null) {
            throw new IllegalArgumentException(field + " of this packed message is not valid UTF-8");
        }
        return name;
    }
}
