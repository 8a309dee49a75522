package io.gma.internal.link;

import io.gma.security.AuthException;
import io.gma.wire.Command;
import io.gma.wire.ErrorCode;
import io.gma.wire.ErrorText;
import io.gma.wire.Message;
import io.gma.wire.Packed;
import io.gma.wire.ProtocolException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The start of one link (protocol.md section 5, docs/protocol.md): the TLS handshake, driven on the event loop
 * without blocking; then HELLO and WELCOME. The accepting side authenticates HELLO's credentials or the client
 * certificate ({@code Security.authenticate}) and asks its listener whether that identity may have the link; it
 * answers ERROR UNAUTHORIZED or FORBIDDEN and closes otherwise. The connecting side takes WELCOME, or an ERROR
 * that refuses it. A plaintext peer on a TLS port is told so in plaintext.
 *
 * <p>Before the handshake is over (accepted: HELLO authenticated and WELCOME sent; outbound: WELCOME received),
 * a peer has proved nothing, so the link holds little for it: the decoder refuses data longer than
 * {@link #MAX_DATA} (ERROR TOO_LARGE, then the link closes), the read and output buffers (and TLS's) are small,
 * and it all must be over within {@link Link#HANDSHAKE_NANOS}. The buffers grow to a stream's sizes when the
 * link opens. An accepted link counts against the {@link HandshakeAdmission} caps until then, and a refused one
 * is counted by why. As it opens, the link counts against its owner's {@link LinkLimit}: over it, an accepted
 * link is refused with ERROR QUEUE_FULL, an outbound one is closed.
 *
 * <p>Event loop only.
 */
final class Handshake {
    private static final Logger LOG = LoggerFactory.getLogger(Handshake.class);
    /**
     * The longest data a peer may send before the handshake is over: HELLO's credentials (a bearer token of up
     * to 1024 characters) with room to spare; WELCOME and ERROR carry less.
     */
    static final int MAX_DATA = 4096;

    private final Link link;
    private final Transport transport;
    private final LinkWriter writer;
    private final LinkConfig config;
    private final LinkListener listener;
    /** An accepted link's place under the caps on unauthenticated connections, until it opens or closes. */
    private final HandshakeAdmission.Ticket admitted;
    private final long startedAt = System.nanoTime();
    /** The handshake ended and the link opened. */
    private boolean over;
    /** The link counts against the owner's {@link LinkLimit}, until it closes. */
    private boolean counted;

    /** @param admitted an accepted link's ticket, released when the link opens or closes; null for none */
    Handshake(Link link, Transport transport, LinkWriter writer, LinkConfig config, LinkListener listener,
            HandshakeAdmission.Ticket admitted) {
        this.link = link;
        this.transport = transport;
        this.writer = writer;
        this.config = config;
        this.listener = listener;
        this.admitted = admitted;
    }

    /** When the handshake must be over (System.nanoTime). */
    long deadline() {
        return startedAt + Link.HANDSHAKE_NANOS;
    }

    /** At {@code now}, while the link is in its handshake: past the deadline, the link ends with TIMEOUT. */
    void checkDeadline(long now) throws LinkException {
        if (now - startedAt > Link.HANDSHAKE_NANOS) {
            String missing = transport.handshaking() ? "TLS handshake" : link.outbound() ? "WELCOME" : "HELLO";
            LinkException why = new LinkException(ErrorCode.TIMEOUT, "no " + missing + " from " + link.describe()
                    + " within " + TimeUnit.NANOSECONDS.toSeconds(Link.HANDSHAKE_NANOS) + " s");
            link.failWith(why);
            throw why;
        }
    }

    /** Advances the TLS handshake; once it is over, writes HELLO and reads what came. */
    void advanceTls() throws IOException {
        writer.wantWrite(writer.tlsHandshakeStep());
        if (!transport.handshaking()) {
            link.flush();
            if (transport.bufferedInput()) {
                link.read();
            }
        }
    }

    /** A message before the handshake is over, from the decoder's sink: WELCOME, HELLO or a refusal. */
    void take(Message m) throws ProtocolException {
        if (link.outbound()) {
            if (m.command() == Command.ERROR) {
                String text = m.dataAsString();
                // an ERROR without a known code first is a refusal all the same; so is a code alone, without
                // the space and sentence that follow it (what a refused link has always read it as)
                ErrorCode code = text.indexOf(' ') > 0 ? ErrorText.parse(text, ErrorCode.FORBIDDEN).code()
                        : ErrorCode.FORBIDDEN;
                link.closeWith(new LinkException(code, link.peerName() + " refused the link: " + text));
                return;
            }
            if (m.command() != Command.WELCOME) {
                throw new ProtocolException(ErrorCode.MALFORMED, "expected WELCOME, got " + m.command());
            }
            String full = overLimit(link.describe());
            if (full != null) {
                // no ERROR to send: the peer took nothing yet; this side's messages wait for the next attempt
                link.closeWith(new LinkException(ErrorCode.QUEUE_FULL, full));
                return;
            }
            open();
        } else {
            if (m.command() != Command.HELLO) {
                throw new ProtocolException(ErrorCode.MALFORMED, "expected HELLO first, got " + m.command());
            }
            String who;
            try {
                // HELLO's data is a secret: it goes to authenticate and nowhere else, never to a log
                who = config.security().authenticate(m.dataAsString(), transport.peerIdentity(),
                        config.audience());
            } catch (AuthException e) {
                refuse(m, ErrorCode.UNAUTHORIZED, e.getMessage());
                return;
            }
            Refusal refused = listener.refusal(m, who);
            if (refused != null) {
                refuse(m, refused.code(), refused.sentence());
                return;
            }
            String full = overLimit(m.from());
            if (full != null) {
                answerAndClose(m, ErrorCode.QUEUE_FULL, full); // logged by the limit, at most once per 10 s
                return;
            }
            link.authenticated(m.from(), who);
            writer.sendImmediate(Packed.make(0, Command.WELCOME, config.name(), m.from(), new byte[0]));
            open();
        }
        link.flush();
    }

    /**
     * The peer is trusted: the link opens, with the full message limit and a stream's buffers from the next byte
     * on, and no longer counts against the caps on unauthenticated connections.
     */
    private void open() {
        over = true;
        link.opened();
        release();
        listener.linkOpened(link);
    }

    /**
     * The link with {@code peer} is about to open: null when the owner's {@link LinkLimit} lets it (it counts
     * there from now until {@link #linkClosed()}), else why not (the refusal is counted).
     */
    private String overLimit(String peer) {
        if (config.limit().tryOpen()) {
            counted = true;
            return null;
        }
        config.counters().linksOverLimit.increment();
        return config.limit().refused(config.name(), peer);
    }

    /** Answers HELLO with ERROR and closes, and logs it. */
    private void refuse(Message hello, ErrorCode code, String sentence) {
        LOG.info("{}: refused a link from {} (HELLO from \"{}\"): {} {}", config.name(), link.describe(),
                hello.from(), code, sentence);
        answerAndClose(hello, code, sentence);
    }

    /** Answers HELLO with ERROR and closes. */
    private void answerAndClose(Message hello, ErrorCode code, String sentence) {
        writer.sendImmediate(Packed.make(0, Command.ERROR, config.name(), hello.from(),
                new ErrorText(code, sentence).toBytes()));
        link.closeAfterRefusal(new LinkException(code, sentence));
    }

    /**
     * The first bytes were a GMA header where a TLS record was due. Accepted: the peer gets a plaintext ERROR
     * that says so (it could not read a TLS alert), and the link lingers for it to be read. Outbound: a
     * plaintext port answered our ClientHello. Whether the link lingers: the loop finishes it when that is over.
     */
    boolean plaintextPeer(SocketChannel channel) {
        if (link.outbound()) {
            link.failWith(new LinkException(ErrorCode.UNAUTHORIZED, link.describe() + " answered in plaintext GMA:"
                    + " it does not speak TLS (is security on at both ends?)"));
            return false;
        }
        String sentence = "this port speaks TLS: connect with TLS";
        LinkException why = new LinkException(ErrorCode.UNAUTHORIZED, link.describe() + " spoke plaintext to a TLS"
                + " port");
        link.failWith(why);
        LOG.info("{}: {}", config.name(), why.getMessage());
        try {
            channel.write(ByteBuffer.wrap(Packed.make(0, Command.ERROR, config.name(), "",
                    new ErrorText(ErrorCode.UNAUTHORIZED, sentence).toBytes())));
            return !link.lingerUntilPeerCloses(System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(
                    Link.BYE_DRAIN_MILLIS));
        } catch (IOException ignored) {
            return false; // it gets an end of stream instead
        }
    }

    /** The link no longer counts against the caps on unauthenticated connections (once; later calls do nothing). */
    void release() {
        if (admitted != null) {
            admitted.release();
        }
    }

    /** The link closed: it no longer counts against the caps, nor against its owner's {@link LinkLimit}. */
    void linkClosed() {
        release();
        if (counted) {
            counted = false;
            config.limit().closed();
        }
    }

    /**
     * The link closed: an accepted link closed in its handshake is counted by why (not when the peer just
     * went, or this side is closing).
     */
    void countFailure(LinkException why, LinkCounters counters) {
        if (link.outbound() || over || why == null) {
            return;
        }
        switch (why.code()) {
            case UNAUTHORIZED, FORBIDDEN -> counters.handshakesUnauthorized.increment();
            case TOO_LARGE -> counters.handshakesTooLarge.increment();
            case MALFORMED, UNSUPPORTED_VERSION -> counters.handshakesMalformed.increment();
            case TIMEOUT -> counters.handshakesTimedOut.increment();
            default -> {
                // the peer went away, or this side is closing: nothing refused
            }
        }
    }
}
