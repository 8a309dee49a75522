package io.gma.wire;

/**
 * A message's command byte (protocol.md section 2): the twelve protocol commands as constants, and the
 * application commands 0x40..0xFF as values from {@link #application(int)}.
 *
 * <p>There is exactly one instance per code, so commands compare with {@code ==} and looking one up
 * allocates nothing. Codes 0x00, 0x07..0x0F and 0x16..0x3F are reserved and have no instance.
 */
public final class Command {
    private static final Command[] BY_CODE = new Command[256];

    /** 0x01: one-way application bytes (a non-blocking send, an event). */
    public static final Command DATA = define(0x01, "DATA");
    /** 0x02: application bytes that the destination answers with {@link #REPLY} or {@link #ERROR}. */
    public static final Command REQUEST = define(0x02, "REQUEST");
    /** 0x03: the answer to a {@link #REQUEST}; its sequence is the request's. */
    public static final Command REPLY = define(0x03, "REPLY");
    /** 0x04: {@code CODE sentence} about a failed message; its sequence is the failed message's. */
    public static final Command ERROR = define(0x04, "ERROR");
    /** 0x05: a consumer subscribes to a producer, with an optional filter as data. */
    public static final Command SUBSCRIBE = define(0x05, "SUBSCRIBE");
    /** 0x06: a consumer ends its subscription. */
    public static final Command UNSUBSCRIBE = define(0x06, "UNSUBSCRIBE");
    /** 0x10: the first message on a connection, carrying credentials. */
    public static final Command HELLO = define(0x10, "HELLO");
    /** 0x11: the accepting side's answer to {@link #HELLO}. */
    public static final Command WELCOME = define(0x11, "WELCOME");
    /** 0x12: keepalive probe; the data is echoed in the {@link #PONG}. */
    public static final Command PING = define(0x12, "PING");
    /** 0x13: the answer to a {@link #PING}. */
    public static final Command PONG = define(0x13, "PONG");
    /** 0x14: 8 bytes, the count of messages received on this connection. */
    public static final Command ACK = define(0x14, "ACK");
    /** 0x15: the sender closes the connection after this message. */
    public static final Command BYE = define(0x15, "BYE");

    /** The lowest application command code. */
    public static final int FIRST_APPLICATION_CODE = 0x40;

    static {
        for (int code = FIRST_APPLICATION_CODE; code <= 0xFF; code++) {
            define(code, String.format("APP_0x%02X", code));
        }
    }

    private final int code;
    private final String name;

    private Command(int code, String name) {
        this.code = code;
        this.name = name;
    }

    private static Command define(int code, String name) {
        Command command = new Command(code, name);
        BY_CODE[code] = command;
        return command;
    }

    /**
     * Returns the application command with this code.
     *
     * @param code 0x40..0xFF
     * @throws IllegalArgumentException if the code is outside 0x40..0xFF
     */
    public static Command application(int code) {
        if (code < FIRST_APPLICATION_CODE || code > 0xFF) {
            throw new IllegalArgumentException(String.format(
                    "application command 0x%02X is outside 0x40..0xFF", code));
        }
        return BY_CODE[code];
    }

    /**
     * Returns the command with this wire code.
     *
     * @param code 0x00..0xFF
     * @throws IllegalArgumentException if the code is reserved or outside one byte
     */
    public static Command of(int code) {
        Command command = lookup(code);
        if (command == null) {
            throw new IllegalArgumentException(String.format("command 0x%02X is reserved", code));
        }
        return command;
    }

    /** The command for a wire code, or null when the code is reserved or out of range. */
    static Command lookup(int code) {
        return code >= 0 && code <= 0xFF ? BY_CODE[code] : null;
    }

    /** The wire code, 0x01..0xFF. */
    public int code() {
        return code;
    }

    /** {@code DATA}, {@code REQUEST}, ..., or {@code APP_0x41} for application commands. */
    public String name() {
        return name;
    }

    /** Whether this is an application command (0x40..0xFF), delivered like {@link #DATA}. */
    public boolean isApplication() {
        return code >= FIRST_APPLICATION_CODE;
    }

    /**
     * Whether this is counted control traffic: REPLY, ERROR and UNSUBSCRIBE. A send queue never holds it up
     * behind data and does not bound it like data (protocol.md section 4); ACKs count it as they count data.
     * The stream's own commands are not control in this sense: see {@link #isStreamOnly()}.
     */
    public boolean isControl() {
        return this == REPLY || this == ERROR || this == UNSUBSCRIBE;
    }

    /**
     * Whether this command belongs to one TCP stream and is never forwarded: HELLO, WELCOME, ACK, PING, PONG
     * and BYE. Every other command may travel end to end, through PC servlets and the HTTP tunnel (protocol.md
     * section 6), which refuses these with MALFORMED.
     */
    public boolean isStreamOnly() {
        return this == HELLO || this == WELCOME || this == ACK || this == PING || this == PONG || this == BYE;
    }

    /**
     * Whether messages of this command name both a sender and a destination. DATA, REQUEST, REPLY,
     * SUBSCRIBE, UNSUBSCRIBE and application commands do; connection-level commands and ERROR (which may
     * answer a HELLO sent before registration) need not.
     */
    boolean requiresNames() {
        return code <= UNSUBSCRIBE.code && code != ERROR.code || isApplication();
    }

    @Override
    public String toString() {
        return name;
    }
}
