package io.gma.internal.link;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;

/**
 * The last steps of a link that closes in order, on its event loop, each within one deadline: write what waits
 * (the ACK and BYE just queued), end TLS output with close_notify, then half-close and read until the peer
 * closes too. A peer that does not read, or does not close, costs at most the deadline. Nothing here blocks: the
 * loop calls {@link #advance} when the socket is ready and at the deadline, and the link closes once it says so.
 */
final class Goodbye {
    /** What the peer sends meanwhile is read into this much at a time, and dropped. */
    private static final int DISCARD_BYTES = 4 * 1024;

    private enum Phase { NONE, DRAIN, LINGER, OVER }

    private final LinkWriter writer;
    private final SocketChannel channel;
    private Phase phase = Phase.NONE;
    private long deadline;
    private boolean outboundClosed;

    Goodbye(LinkWriter writer, SocketChannel channel) {
        this.writer = writer;
        this.channel = channel;
    }

    /** Whether the link is closing in order now: begun, and not over. */
    boolean active() {
        return phase == Phase.DRAIN || phase == Phase.LINGER;
    }

    /** When it ends, whatever is left (System.nanoTime). */
    long deadline() {
        return deadline;
    }

    /** Starts all three steps, to be over by {@code deadline}; whether they are over already. */
    boolean closeBy(long deadline) throws IOException {
        this.deadline = deadline;
        phase = Phase.DRAIN;
        return advance();
    }

    /**
     * Starts the last step alone (what was to be written was written some other way), to be over by
     * {@code deadline}: see {@link #advance}. Whether it is over already.
     */
    boolean lingerUntilPeerCloses(long deadline) throws IOException {
        this.deadline = deadline;
        outboundClosed = true;
        phase = Phase.DRAIN;
        return advance();
    }

    /**
     * Goes as far as the socket lets it: writes what waits; once all is written, ends TLS output (once) and
     * writes that; then half-closes and reads and discards until the peer closes too (closing a socket with
     * unread input makes the kernel answer with a reset, which can destroy the ACK and BYE just written, and the
     * peer would send again what was taken). Whether it is over: the peer closed, the deadline passed, the channel
     * closed, or what was written cannot be.
     */
    boolean advance() throws IOException {
        if (phase == Phase.OVER || !channel.isOpen() || System.nanoTime() - deadline >= 0) {
            phase = Phase.OVER;
            return true;
        }
        if (phase == Phase.DRAIN) {
            writer.flushClosing();
            if (writer.hasUnwritten()) {
                return false; // the writer asked to hear when the socket is writable
            }
            if (!outboundClosed) {
                outboundClosed = true;
                if (writer.closeOutbound()) {
                    writer.flushClosing();
                    if (writer.hasUnwritten()) {
                        return false;
                    }
                }
            }
            channel.shutdownOutput();
            phase = Phase.LINGER;
        }
        ByteBuffer scratch = ByteBuffer.allocate(DISCARD_BYTES);
        while (true) {
            scratch.clear();
            int n = channel.read(scratch);
            if (n < 0) {
                phase = Phase.OVER;
                return true;
            }
            if (n == 0) {
                return false;
            }
        }
    }
}
