package io.gma.registry;

import java.io.IOException;
import java.net.InetAddress;
import java.net.Socket;
import javax.net.SocketFactory;

/**
 * Plain sockets with TCP_NODELAY on. OkHttp leaves Nagle's algorithm on, and a small request then waits for
 * the peer's delayed ACK: tens of milliseconds per call (NOTES.md measured 44 ms for a 32 KB POST).
 */
final class NoDelaySocketFactory extends SocketFactory {
    static final NoDelaySocketFactory INSTANCE = new NoDelaySocketFactory();

    private static Socket noDelay(Socket socket) throws IOException {
        socket.setTcpNoDelay(true);
        return socket;
    }

    @Override
    public Socket createSocket() throws IOException {
        return noDelay(new Socket());
    }

    @Override
    public Socket createSocket(String host, int port) throws IOException {
        return noDelay(new Socket(host, port));
    }

    @Override
    public Socket createSocket(String host, int port, InetAddress localHost, int localPort) throws IOException {
        return noDelay(new Socket(host, port, localHost, localPort));
    }

    @Override
    public Socket createSocket(InetAddress host, int port) throws IOException {
        return noDelay(new Socket(host, port));
    }

    @Override
    public Socket createSocket(InetAddress address, int port, InetAddress localAddress, int localPort)
            throws IOException {
        return noDelay(new Socket(address, port, localAddress, localPort));
    }
}
