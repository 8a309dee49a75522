package io.gma.client;

import io.gma.wire.Command;

/**
 * A message delivered to the application: DATA, REQUEST, or an application command (0x46..0xFF; the endpoint
 * handles 0x40..0x45 itself, the commands of monitoring tables, docs/tables.md).
 *
 * <p>{@link #reply} answers a REQUEST (or any message: the reply goes to its sender with its sequence). A
 * reply travels in the control lane, so it never waits behind queued data.
 */
public interface Incoming {
    /** The sender's registered name. */
    String from();

    /** DATA, REQUEST or an application command. */
    Command command();

    /** The sender's sequence number for this message. */
    long sequence();

    /**
     * The payload; the array belongs to the handler, the same one on each call. A large payload is the array it
     * was read into, handed over without a copy.
     */
    byte[] data();

    /**
     * Whether the sender waits for a reply: a REQUEST. False for a DATA or an application command that asks for
     * a receipt ({@link EndpointBuilder#receipts}): the endpoint sends that itself, once the handler returns.
     */
    boolean replyExpected();

    /**
     * Sends a REPLY carrying {@code data} to the sender. To a message that asked for a receipt, the sender takes
     * it as the receipt, before the handler returns.
     *
     * @throws EndpointException if the endpoint is closed
     */
    void reply(byte[] data) throws EndpointException;
}
