package io.gma.internal.link;

import io.gma.security.Security;
import io.gma.wire.WireCodec;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.time.Duration;
import java.util.function.Supplier;

/**
 * Real links over loopback for tests, plaintext: a server socket on an ephemeral port whose accepted links get
 * the listener a test gives, on loops of their own, and links connected to it on other loops. Closes them all.
 */
final class LoopbackLinks implements AutoCloseable {
    private final IoThreads serverLoops;
    private final IoThreads clientLoops;
    private final ServerSocketChannel server;
    private volatile boolean stopped;

    /**
     * @param prefix of the loops' thread names
     * @param accepted the listener of each accepted link (it may throw, as a test's failing acceptor does)
     */
    LoopbackLinks(String prefix, Supplier<LinkListener> accepted) throws IOException {
        serverLoops = new IoThreads(prefix + "-server-", 1);
        clientLoops = new IoThreads(prefix + "-client-", 1);
        server = ServerSocketChannel.open();
        server.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
        Thread acceptor = new Thread(new Acceptor(server, config("server"), HandshakeAdmission.process(), accepted,
                () -> stopped, serverLoops::start), prefix + "-accept");
        acceptor.setDaemon(true);
        acceptor.start();
    }

    /** A link of {@code name} to the server, whose peer it calls "server". */
    Link connect(String name, LinkListener listener) throws IOException {
        Link link = Link.connect(config(name), listener, SocketChannel.open(server.getLocalAddress()), null, "server");
        clientLoops.start(link);
        return link;
    }

    /** A plaintext link's configuration, named {@code name}. */
    static LinkConfig config(String name) {
        return new LinkConfig(name, name, Security.insecure(), WireCodec.standard(), Duration.ofSeconds(30),
                new LinkCounters(), new LinkLimit(100));
    }

    @Override
    public void close() throws IOException {
        stopped = true;
        server.close();
        serverLoops.close();
        clientLoops.close();
    }
}
