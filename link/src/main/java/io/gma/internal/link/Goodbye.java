package io.gma.internal.link;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;

/**
 * The last steps of a link that closes in order, on its I/O thread, each within one deadline: write what waits
 * (the ACK and BYE just queued), end TLS output with close_notify, then half-close and read until the peer
 * closes too. A peer that does not read, or does not close, costs at most the deadline.
 */
final class Goodbye {
    /** What the peer sends meanwhile is read into this much at a time, and dropped. */
    private static final int DISCARD_BYTES = 16 * 1024;

    private final LinkWriter writer;
    private final Selector selector;
    private final SocketChannel channel;

    Goodbye(LinkWriter writer, Selector selector, SocketChannel channel) {
        this.writer = writer;
        this.selector = selector;
        this.channel = channel;
    }

    /** All three steps, within {@code deadline} (System.nanoTime). */
    void closeBy(long deadline) throws IOException {
        drain(deadline);
        closeOutbound(deadline);
        lingerUntilPeerCloses(deadline);
    }

    /** Writes what waits until it is all written, the deadline passes or the channel closes. */
    private void drain(long deadline) throws IOException {
        writer.flush();
        while (writer.hasUnwritten() && System.nanoTime() < deadline && channel.isOpen()) {
            selector.select(10);
            selector.selectedKeys().clear();
            writer.flush();
        }
    }

    /** Ends TLS output with close_notify, written within the deadline if the socket takes it. */
    private void closeOutbound(long deadline) throws IOException {
        if (!writer.hasUnwritten() && writer.closeOutbound()) {
            drain(deadline);
        }
    }

    /**
     * Half-closes, then reads and discards until the peer closes too or the deadline passes: closing a socket
     * with unread input makes the kernel answer with a reset, which can destroy the ACK and BYE just written
     * (the peer would then send again what was taken).
     */
    void lingerUntilPeerCloses(long deadline) throws IOException {
        if (writer.hasUnwritten() || !channel.isOpen()) {
            return;
        }
        channel.shutdownOutput();
        ByteBuffer scratch = ByteBuffer.allocate(DISCARD_BYTES);
        while (System.nanoTime() < deadline) {
            selector.select(10);
            selector.selectedKeys().clear();
            scratch.clear();
            if (channel.read(scratch) < 0) {
                return;
            }
        }
    }
}
