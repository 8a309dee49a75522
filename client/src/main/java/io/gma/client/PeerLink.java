package io.gma.client;

import io.gma.internal.link.Link;
import io.gma.internal.link.LinkException;
import io.gma.internal.link.LinkListener;
import io.gma.internal.link.Peer;
import io.gma.internal.link.Refusal;
import io.gma.wire.Message;

/**
 * This endpoint's side of one link, the listener the link module calls: the link's messages go to its
 * {@link Inbox.Reader}, what happens to the link to the {@link Connector}. It knows the peer whose messages the
 * link carries: given when this side connects, found when an accepted link opens, none for a peer that has no
 * name. Set before the link's thread starts or on it, and read on it.
 */
final class PeerLink implements LinkListener {
    private final Connector connector;
    private final Inbox.Reader reader;
    private Peer peer;

    PeerLink(Peer peer, Connector connector, Inbox.Reader reader) {
        this.peer = peer;
        this.connector = connector;
        this.reader = reader;
    }

    /** Tokens name their audience: the domain for the uplink (its PC servlet), else the peer endpoint's name. */
    @Override
    public String helloCredential() {
        return connector.credential(peer);
    }

    @Override
    public Refusal refusal(Message hello, String identity) {
        return connector.refusal(hello, identity);
    }

    @Override
    public void linkOpened(Link link) {
        peer = connector.opened(peer, link);
    }

    @Override
    public void linkWorked(Link link) {
        peer.healthy();
    }

    @Override
    public boolean receive(Message m, Link link) {
        return reader.receive(m, link, peer);
    }

    @Override
    public void saidBye(Link link) {
        reader.saidBye(link);
    }

    @Override
    public void linkClosed(Link link, LinkException why) {
        connector.closed(peer, link, why);
    }
}
