package io.gma.client;

import io.gma.security.Security;
import io.gma.wire.Message;
import io.gma.wire.WireCodec;

/**
 * What a {@link Link} needs of the side that owns it: an {@link Endpoint}, or the {@link Gateway} of a PC
 * servlet, which speaks the same stream protocol (PROTOCOL.md section 4) to its domain's endpoints.
 */
interface LinkOwner {
    /** The name said in HELLO and WELCOME. */
    String name();

    /**
     * TLS for its links, the credentials HELLO carries ({@link Security#bearer()}), and how it checks its peers'.
     */
    Security security();

    WireCodec codec();

    Counters counters();

    long pingIntervalNanos();

    /**
     * Whether a peer that said HELLO and proved to be {@code identity} may have a link: null when it may, else
     * the sentence of the FORBIDDEN ERROR it gets before the link closes.
     */
    String refusal(Message hello, String identity);

    /** A link finished its handshake; for an accepted link, the peer it carries (null: none). */
    Peer linkOpened(Link link);

    /**
     * A counted message arrived on a link, on its I/O thread.
     *
     * @return whether it is taken now, and counted (its ACK follows). Once it answers false, the owner answers
     *     false for every later message of the link until it takes them, in order, with
     *     {@link Link#countTaken}; or it never takes them, and closes the link, so that the peer sends them
     *     again on its next one
     */
    boolean receive(Message m, Link link);

    /** The peer said BYE: it closed for good. */
    void saidBye(String peerName);

    /** The link closed, for the reason given (null: none known). */
    void linkClosed(Link link, EndpointException why);
}
