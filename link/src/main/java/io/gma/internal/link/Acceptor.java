package io.gma.internal.link;

import io.gma.security.Tls;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Accepts connections on a listening socket until its owner closes, each an accepted {@link Link} handed to the
 * owner to start. A connection over a cap of the {@link HandshakeAdmission} is closed at once, before a link, a
 * thread or a buffer is made for it, and counted ({@code connectionsOverCap}). Out of file descriptors, it pauses
 * and tries again, and says so once ({@link OpenFileLimit}). Run it on a thread of its own.
 */
public final class Acceptor implements Runnable {
    private static final Logger LOG = LoggerFactory.getLogger(Acceptor.class);
    /** After a failed accept (out of file descriptors, say), a pause, so as not to spin. */
    private static final long PAUSE_MILLIS = 100;

    private final ServerSocketChannel server;
    private final LinkConfig config;
    private final HandshakeAdmission admission;
    private final Supplier<LinkListener> listeners;
    private final BooleanSupplier closed;
    private final Consumer<Link> start;
    private final OpenFileLimit files;

    /**
     * @param listeners makes the listener of each accepted link
     * @param closed whether the owner closed: the loop ends
     * @param start starts an accepted link ({@link IoThreads}), or aborts it if the owner closed meanwhile
     */
    public Acceptor(ServerSocketChannel server, LinkConfig config, HandshakeAdmission admission,
            Supplier<LinkListener> listeners, BooleanSupplier closed, Consumer<Link> start) {
        this.server = server;
        this.config = config;
        this.admission = admission;
        this.listeners = listeners;
        this.closed = closed;
        this.start = start;
        this.files = new OpenFileLimit(config.name(), config.limit());
    }

    @Override
    public void run() {
        while (!closed.getAsBoolean()) {
            SocketChannel accepted = null;
            HandshakeAdmission.Ticket ticket = null;
            try {
                accepted = server.accept();
                ticket = admission.admit(((InetSocketAddress) accepted.getRemoteAddress()).getAddress(),
                        config.name());
                if (ticket == null) {
                    config.counters().connectionsOverCap.increment();
                    closeQuietly(accepted); // before a link, a thread or a buffer is made for it
                    continue;
                }
                Tls tls = config.security().tls();
                start.accept(Link.accepted(config, listeners.get(), accepted, tls == null ? null : tls.serverEngine(),
                        ticket));
                files.accepted(); // a link's selector takes descriptors too: only now is it over
            } catch (IOException | RuntimeException | Error ex) {
                // an Error too (a class that could not load while descriptors ran out, say): the loop goes on
                if (ticket != null) {
                    ticket.release();
                }
                if (accepted != null) {
                    closeQuietly(accepted);
                }
                if (!closed.getAsBoolean()) {
                    IOException io = ex instanceof UncheckedIOException u ? u.getCause()
                            : ex instanceof IOException i ? i : null;
                    if (io != null && OpenFileLimit.isExhaustion(io)) {
                        files.exhausted(io); // once, with the limit: not a line every pause
                    } else {
                        LOG.warn("{}: accept failed: {}", config.name(), ex.getMessage());
                    }
                    try {
                        Thread.sleep(PAUSE_MILLIS); // out of file descriptors, say: do not spin
                    } catch (InterruptedException interrupted) {
                        return;
                    }
                }
            }
        }
    }

    private static void closeQuietly(SocketChannel channel) {
        try {
            channel.close();
        } catch (IOException ignored) {
            // it failed already
        }
    }
}
