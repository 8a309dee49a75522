package io.gma.internal.link;

import io.gma.wire.Message;

/**
 * What a {@link Link} tells its owner, and asks it, one listener per link: an endpoint's, or the uplink side of
 * a PC servlet, which speaks the same stream protocol (protocol.md section 4) to its domain's endpoints. Every
 * method but {@link #helloCredential} runs on the link's event loop.
 */
public interface LinkListener {
    /**
     * An outbound link's HELLO: the credential it carries ({@code Security.bearer} for the peer's audience), or
     * null: none. Asked once, as the link is made.
     */
    String helloCredential();

    /**
     * An accepted link: whether a peer that said HELLO and proved to be {@code identity} may have it; null when
     * it may, else the ERROR it gets before the link closes. It may look the name up.
     */
    Refusal refusal(Message hello, String identity);

    /**
     * The handshake is over: the listener attaches the link to its peer, if there is one
     * ({@link Peer#attach}), so that it carries the peer's messages.
     */
    void linkOpened(Link link);

    /** The peer acknowledged something on this link, or sent a message, for the first time: the link works. */
    void linkWorked(Link link);

    /**
     * A counted message arrived.
     *
     * @return whether it is taken now, and counted (its ACK follows). Once it answers false, the listener
     *     answers false for every later message of the link until it takes them, in order, with
     *     {@link Link#countTaken}; or it never takes them, and closes the link, so that the peer sends them
     *     again on its next one
     */
    boolean receive(Message m, Link link);

    /** The peer said BYE: it closed for good. */
    void saidBye(Link link);

    /** The link closed, for the reason given (null: none known). */
    void linkClosed(Link link, LinkException why);
}
