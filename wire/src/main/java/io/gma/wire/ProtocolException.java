package io.gma.wire;

import java.io.IOException;
import java.util.Objects;

/**
 * Bytes from a peer that break the protocol. The message names the field, the value and the limit, as
 * {@code dataLength 2147483648 exceeds maxMessageBytes 16777216}; {@link #code()} is what an ERROR sent back
 * to the peer carries. A stream on which this was thrown can no longer be trusted and should be closed.
 */
public final class ProtocolException extends IOException {
    private static final long serialVersionUID = 1L;

    private final ErrorCode code;

    /**
     * @param code what an ERROR answer carries
     * @param message one sentence naming the field, the value and the limit
     */
    public ProtocolException(ErrorCode code, String message) {
        super(message);
        this.code = Objects.requireNonNull(code, "code");
    }

    static ProtocolException malformed(String message) {
        return new ProtocolException(ErrorCode.MALFORMED, message);
    }

    /** The error code to report to the peer. */
    public ErrorCode code() {
        return code;
    }

    /** {@code CODE sentence}: the data of an ERROR message reporting this failure. */
    public String errorText() {
        return new ErrorText(code, String.valueOf(getMessage())).text();
    }
}
