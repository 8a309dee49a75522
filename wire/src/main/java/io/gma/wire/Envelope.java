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

    private Envelope(String from, String to) {
        this.from = from;
        this.to = to;
        this.fromBytes = Utf8.encodeName("from", Objects.requireNonNull(from, "from"));
        this.toBytes = Utf8.encodeName("to", Objects.requireNonNull(to, "to"));
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
        return Message.pack(command, Message.defaultFlags(command), fromBytes, toBytes, sequence, data, 0,
                data.length);
    }
}
