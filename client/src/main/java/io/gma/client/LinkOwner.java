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

    /** TLS for its links, and how it checks its peers' credentials. */
    Security security();

    /**
     * The audience of the tokens its peers show it: an endpoint's name, or a PC servlet's domain (a token made
     * for another is refused).
     */
    String audience();

    /** What its HELLO to {@code peer} carries ({@link Security#bearer}), or null: no credential. */
    String helloCredential(Peer peer);

    WireCodec codec();

    Counters counters();

    long pingIntervalNanos();

    /**
     * Whether a peer that said HELLO and proved to be {@code identity} may have a link: null when it may, else
     * the ERROR it gets before the link closes. Called on the link's thread; it may look the name up.
     */
    Refusal refusal(Message hello, String identity);

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
