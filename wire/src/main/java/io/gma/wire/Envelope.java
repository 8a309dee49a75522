package io.gma.wire;

import java.util.Arrays;
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
     * fills in command, flags, sequence and length, then the data: one copy instead of many small writes.
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
        Objects.requireNonNull(command, "command");
        Objects.requireNonNull(data, "data");
        int flags = Message.defaultFlags(command);
        if (data.length > Message.MAX_DATA_BYTES) {
            return Message.pack(command, flags, fromBytes, toBytes, sequence, data, 0, data.length); // refused
        }
        Layout.checkFields(command, fromBytes.length, toBytes.length, data.length, IllegalArgumentException::new);
        byte[] p = Arrays.copyOf(prefix, prefix.length + data.length);
        p[Layout.OFF_COMMAND] = (byte) command.code();
        p[Layout.OFF_FLAGS] = (byte) flags;
        Layout.putU64(p, Layout.OFF_SEQUENCE, sequence);
        Layout.putU32(p, Layout.OFF_DATA_LENGTH, data.length);
        System.arraycopy(data, 0, p, prefix.length, data.length);
        return p;
    }
}
