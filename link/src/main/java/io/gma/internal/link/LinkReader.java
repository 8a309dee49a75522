package io.gma.internal.link;

import io.gma.wire.Command;
import io.gma.wire.ErrorCode;
import io.gma.wire.Message;
import io.gma.wire.Packed;
import io.gma.wire.ProtocolException;
import io.gma.wire.StreamDecoder;
import java.io.IOException;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.util.function.Consumer;

/**
 * A link's input, on its event loop: reads what the socket has, decodes it, and hands each message where it
 * goes. Before the link opens, to the {@link Handshake}; after, ACK, PING, PONG and BYE are the link's own, and
 * every other message is counted ({@link AckCounter}) and given to the listener.
 *
 * <p>The read buffer is the thread's, not the link's: the decoder keeps what it needs of a message cut by the
 * end of a read (in the message's own array), so an idle link holds no buffer (issue 22). Until the link opens
 * a read takes at most {@link Link#HANDSHAKE_BUFFER_BYTES} and the decoder refuses long data
 * ({@link Handshake#MAX_DATA}); {@link #opened()} lifts both.
 */
final class LinkReader {
    private static final int READ_BYTES = 256 * 1024;
    /**
     * A partial message with this much still to come is read into its own array: for large messages, one copy
     * fewer than through the thread's buffer.
     */
    private static final int LARGE_REMAINDER_BYTES = 64 * 1024;
    /** Each event loop thread's read buffer. */
    private static final ThreadLocal<ByteBuffer> BUFFER = ThreadLocal.withInitial(() -> ByteBuffer.allocate(
            READ_BYTES));

    private final Link link;
    private final Transport transport;
    private final LinkWriter writer;
    private final StreamDecoder decoder;
    private final Handshake handshake;
    private final AckCounter acks;
    private final LinkListener listener;
    private final LinkCounters counters;
    /** The owner's name, the {@code from} of a PONG. */
    private final String name;
    /** HANDSHAKE_BUFFER_BYTES, then READ_BYTES once open: what one read takes at most. */
    private int readLimit = Link.HANDSHAKE_BUFFER_BYTES;
    private volatile long lastReadAt = System.nanoTime();
    /** Messages decoded from the current read, counted once per read. */
    private int messagesRead;
    /**
     * Messages whose handling began, ever: the {@link StallGuard} reads it (racily, as a hint) to tell a read of
     * many quick messages from one message that holds the thread. Written opaque, so that no compiler holds the
     * count back over a read of many messages, which would read as one message that holds the thread.
     */
    private int progress;
    private static final VarHandle PROGRESS;

    static {
        try {
            PROGRESS = MethodHandles.lookup().findVarHandle(LinkReader.class, "progress", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /** A counted message came on this link already (its reading is one thread's at a time). */
    private boolean messageCame;

    LinkReader(Link link, Transport transport, LinkWriter writer, LinkConfig config, Handshake handshake,
            AckCounter acks, LinkListener listener) {
        this.link = link;
        this.transport = transport;
        this.writer = writer;
        this.decoder = config.codec().newHandshakeDecoder(Handshake.MAX_DATA);
        this.handshake = handshake;
        this.acks = acks;
        this.listener = listener;
        this.counters = config.counters();
        this.name = config.name();
    }

    /** How many messages began to be handled, ever; read by other threads as a hint only. */
    int progress() {
        return (int) PROGRESS.getOpaque(this);
    }

    /** When what was last read was handled (System.nanoTime). */
    long lastReadAt() {
        return lastReadAt;
    }

    /** From the decoder's sink, as the handshake ends: the full message limit and a stream's reads from now on. */
    void opened() {
        decoder.endHandshake();
        readLimit = READ_BYTES;
    }

    /** Reads what the socket has, and acknowledges when an ACK is due by count. */
    void read() throws IOException {
        ByteBuffer buffer = BUFFER.get();
        // a TLS transport may hold whole records after a read that the buffer could not take
        while (readOnce(buffer) && transport.bufferedInput() && !link.isClosed()) {
            // read on
        }
        if (transport.pendingOutput()) {
            writer.flush(); // the TLS engine has something to say (a KeyUpdate answer, say)
        }
        if (acks.due()) {
            link.sendAck();
        }
    }

    /** Reads and decodes once; whether anything came. */
    private boolean readOnce(ByteBuffer buffer) throws IOException {
        // the rest of a large message goes straight into its array, not through the thread's buffer
        ByteBuffer into = decoder.remainder(LARGE_REMAINDER_BYTES);
        if (into == null) {
            into = buffer.clear().limit(readLimit);
        }
        int n = transport.read(into);
        if (n < 0) {
            throw new IOException(link.describe() + " closed the connection");
        }
        if (n == 0) {
            return false;
        }
        counters.bytesIn.add(n);
        messagesRead = 0;
        ProtocolException[] bad = new ProtocolException[1];
        Consumer<Message> sink = m -> {
            if (bad[0] == null) {
                try {
                    onMessage(m);
                } catch (ProtocolException e) {
                    bad[0] = e;
                }
            }
        };
        if (into == buffer) {
            decoder.feed(buffer.flip(), sink);
        } else {
            decoder.filled(n, sink);
        }
        // when what was read is handled, not when it came: a handler that held this thread up for longer than
        // three ping intervals must not make the peer look dead (what it sent meanwhile waits unread)
        lastReadAt = System.nanoTime();
        counters.messagesIn.add(messagesRead);
        if (bad[0] != null) {
            throw bad[0];
        }
        return true;
    }

    private void onMessage(Message m) throws ProtocolException {
        messagesRead++;
        PROGRESS.setOpaque(this, progress + 1); // the reader's own thread alone writes it
        Link.State state = link.state();
        if (state == Link.State.CLOSED) {
            return; // refused, or BYE: what came after it in the same read is not taken
        }
        if (state == Link.State.HANDSHAKE) {
            handshake.take(m);
            return;
        }
        Command c = m.command();
        if (c == Command.ACK) {
            acknowledged(m.dataBuffer().getLong());
        } else if (c == Command.PING) {
            link.sendAck(); // what was taken so far: a PING after a batch asks for it (Link#flushAskingAck)
            writer.sendImmediate(Packed.make(m.sequence(), Command.PONG, name, m.from(), m.data()));
        } else if (c == Command.PONG) {
            return;
        } else if (c == Command.BYE) {
            link.sendAck();
            listener.saidBye(link);
            link.closeWith(new LinkException(ErrorCode.SHUTTING_DOWN, link.peerName() + " said BYE"));
        } else if (c == Command.HELLO || c == Command.WELCOME) {
            throw new ProtocolException(ErrorCode.MALFORMED, c + " after the handshake");
        } else {
            // a peer that only sends to this side (a PC servlet to a consumer) never ACKs: its messages say the
            // link works, once it lasted (AckCounter#worked), and a reconnect after it needs no back-off
            if (!messageCame) {
                messageCame = true;
                acks.messageCame(); // once: its time is what counts, and this is the receive path
            }
            if (listener.receive(m, link)) {
                acks.received(m.encodedLength());
            }
        }
    }

    /** An ACK: the peer has received {@code count} counted messages on this link. */
    private void acknowledged(long count) {
        SendQueue q = writer.queue();
        if (q == null) {
            return;
        }
        long delta = acks.peerAcknowledged(writer.queueCount(count));
        if (delta <= 0) {
            return;
        }
        if (acks.firstWork()) {
            listener.linkWorked(link);
        }
        q.acknowledge(link, delta);
    }
}
