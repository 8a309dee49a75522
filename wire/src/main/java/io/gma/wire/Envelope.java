package io.gma.wire;

import java.util.Objects;

/**
 * A sender and a destination, encoded and checked once, for packing many messages between them: the names'
 * UTF-8 is the costliest part of packing a small message, and a connection sends the same pair every time.
 *
 * <pre>{@code
 * Envelope e = Envelope.of("cpu-k3x9qz@dsg", "collector@dsg");
 * byte[] m = e.pack(42, Command.DATA, payload);   // as Packed.make(42, Command.DATA, from, to, payload)
 * }</pre>
 *
 * Immutable and shareable.
 */
public final class Envelope {
    private final String from;
    private final String to;
    private final byte[] fromBytes;
    private final byte[] toBytes;
    /**
     * A message's first bytes with no data: the fixed header fields and both names. Packing copies it and
     * fills in command, flags, sequence and length, and copies the data (first, into an array of its own:
     * {@link #pack(long, Command, int, byte[])}): one copy instead of many small writes.
     */
    private final byte[] prefix;

    private Envelope(String from, String to) {
        this.from = from;
        this.to = to;
        this.fromBytes = Utf8.encodeName("from", Objects.requireNonNull(from, "from"));
        this.toBytes = Utf8.encodeName("to", Objects.requireNonNull(to, "to"));
        // ERROR: the one command with no rule on names, so any pair makes a prefix
        this.prefix = Message.pack(Command.ERROR, 0, fromBytes, toBytes, 0, new byte[0], 0, 0);
    }

    /**
     * @throws IllegalArgumentException if a name is over 255 UTF-8 bytes or has an unpaired surrogate
     */
    public static Envelope of(String from, String to) {
        return new Envelope(from, to);
    }

    public String from() {
        return from;
    }

    public String to() {
        return to;
    }

    /**
     * Packs a message between the two names, with the usual flags (REPLY_EXPECTED for REQUEST), exactly as
     * {@link Packed#make(long, Command, String, String, byte[])} would.
     *
     * @param data copied
     * @throws IllegalArgumentException as {@link Message#of(Command, String, String, long, byte[])}
     */
    public byte[] pack(long sequence, Command command, byte[] data) {
        return pack(sequence, command, Message.defaultFlags(command), data);
    }

    /**
     * As {@link #pack(long, Command, byte[])}, with {@code flags} instead of the usual ones. The data is the first
     * thing copied into the new array, so that the JIT does not zero what the copy fills: packing 1 MiB takes a
     * sixth less time, 256 KiB the same (bench/RESULTS.md, the nineteenth session).
     *
     * @throws IllegalArgumentException as {@link #put(long, Command, int, byte[], byte[], int)}
     */
    public byte[] pack(long sequence, Command command, int flags, byte[] data) {
        int length = packedLength(command, data);
        Message.checkFlags(command, flags);
        byte[] p = new byte[length];
        System.arraycopy(data, 0, p, prefix.length, data.length); // straight after the allocation: see above
        putPrefix(sequence, command, flags, data.length, p, 0);
        return p;
    }

    /**
     * The length of the message {@link #pack} would make.
     *
     * @throws IllegalArgumentException as {@link #pack}
     */
    public int packedLength(Command command, byte[] data) {
        Objects.requireNonNull(command, "command");
        Objects.requireNonNull(data, "data");
        if (data.length > Message.MAX_DATA_BYTES) {
            // throws, with the one sentence for data over the limit
            Message.pack(command, Message.defaultFlags(command), fromBytes, toBytes, 0, data, 0, data.length);
        }
        Layout.checkFields(command, fromBytes.length, toBytes.length, data.length, IllegalArgumentException::new);
        return prefix.length + data.length;
    }

    /**
     * Packs the message {@link #pack} would make into {@code into}, from {@code offset}: for a sender that
     * packs many messages back to back into one array.
     *
     * @throws IllegalArgumentException as {@link #pack}
     * @throws IndexOutOfBoundsException if the message does not fit there
     */
    public void put(long sequence, Command command, byte[] data, byte[] into, int offset) {
        put(sequence, command, Message.defaultFlags(command), data, into, offset);
    }

    /**
     * As {@link #put(long, Command, byte[], byte[], int)}, with {@code flags} instead of the usual ones: a DATA
     * with REPLY_EXPECTED, which asks its destination for a receipt.
     *
     * @param flags 0 or {@link Message#REPLY_EXPECTED}; REQUEST requires REPLY_EXPECTED
     * @throws IllegalArgumentException as {@link #pack}, or for other flags
     * @throws IndexOutOfBoundsException if the message does not fit there
     */
    public void put(long sequence, Command command, int flags, byte[] data, byte[] into, int offset) {
        Objects.checkFromIndexSize(offset, packedLength(command, data), into.length);
        Message.checkFlags(command, flags);
        putPrefix(sequence, command, flags, data.length, into, offset);
        System.arraycopy(data, 0, into, offset + prefix.length, data.length);
    }

    /** Writes the header and names of a message of {@code dataLength} bytes of data at {@code offset}. */
    private void putPrefix(long sequence, Command command, int flags, int dataLength, byte[] into, int offset) {
        System.arraycopy(prefix, 0, into, offset, prefix.length);
        into[offset + Layout.OFF_COMMAND] = (byte) command.code();
        into[offset + Layout.OFF_FLAGS] = (byte) flags;
        Layout.putU64(into, offset + Layout.OFF_SEQUENCE, sequence);
        Layout.putU32(into, offset + Layout.OFF_DATA_LENGTH, dataLength);
    }

    /**
     * The length of the packed message that starts at {@code at} in {@code packed}, from its header: 20 + F + T
     * + D. For walking messages that this process packed back to back ({@link #put}); bytes from a peer go
     * through a {@link StreamDecoder}, which checks them.
     *
     * @throws IndexOutOfBoundsException if the header does not lie inside the array
     */
    public static int lengthAt(byte[] packed, int at) {
        Objects.checkFromIndexSize(at, Layout.HEADER_BYTES, packed.length);
        return Layout.HEADER_BYTES + (packed[at + Layout.OFF_FROM_LENGTH] & 0xFF)
                + (packed[at + Layout.OFF_TO_LENGTH] & 0xFF) + (int) Layout.u32(packed, at + Layout.OFF_DATA_LENGTH);
    }
}
