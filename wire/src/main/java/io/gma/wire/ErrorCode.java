package io.gma.wire;

/**
 * The error codes of protocol.md section 2. An ERROR message's data is the code's name, one space, and a
 * sentence; HTTP answers from a PC servlet use the same words.
 */
public enum ErrorCode {
    /** A message or stream that breaks the layout: bad magic, reserved command, bad names, truncation. */
    MALFORMED,
    /** A version byte this implementation does not speak. */
    UNSUPPORTED_VERSION,
    /** A message whose data is longer than the receiver's limit. */
    TOO_LARGE,
    /** No endpoint or domain is registered under the destination name. */
    NO_ROUTE,
    /** Credentials missing, expired or not valid. */
    UNAUTHORIZED,
    /** Valid credentials that the rules do not allow this action. */
    FORBIDDEN,
    /** A bounded send queue had no room. */
    QUEUE_FULL,
    /** No answer within the allowed time. */
    TIMEOUT,
    /** The receiver is stopping and accepts nothing more. */
    SHUTTING_DOWN,
    /** A fault inside the receiver, not caused by the message. */
    INTERNAL
}
