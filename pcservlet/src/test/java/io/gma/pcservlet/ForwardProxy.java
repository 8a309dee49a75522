package io.gma.pcservlet;

import static java.nio.charset.StandardCharsets.ISO_8859_1;

import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A small HTTP forward proxy for tests, as a corporate firewall has one: CONNECT for https (then bytes both ways,
 * unread), requests in absolute form for http (the first request of a connection is passed on in origin form,
 * the rest of the connection piped), and, with credentials, 407 to a request without the right
 * {@code Proxy-Authorization: Basic}. It records each connection's target.
 */
final class ForwardProxy implements AutoCloseable {
    /** One connection through the proxy: its method (CONNECT, POST, GET, PUT...) and its host:port. */
    record Tunnel(String method, String target) {
    }

    private final ServerSocket server;
    private final String basic;
    final List<Tunnel> tunnels = new CopyOnWriteArrayList<>();
    final AtomicInteger refused = new AtomicInteger();
    private final List<Socket> open = new CopyOnWriteArrayList<>();

    /** @param basic the expected {@code Proxy-Authorization} value, or null for none */
    ForwardProxy(String basic) throws IOException {
        this.basic = basic;
        this.server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        Thread accept = new Thread(this::accept, "test-proxy-accept");
        accept.setDaemon(true);
        accept.start();
    }

    String url() {
        return "http://127.0.0.1:" + server.getLocalPort();
    }

    private void accept() {
        while (!server.isClosed()) {
            try {
                Socket client = server.accept();
                open.add(client);
                Thread t = new Thread(() -> serve(client), "test-proxy-conn");
                t.setDaemon(true);
                t.start();
            } catch (IOException closed) {
                return;
            }
        }
    }

    private void serve(Socket client) {
        try (client) {
            InputStream in = new BufferedInputStream(client.getInputStream());
            OutputStream out = client.getOutputStream();
            String head = readHead(in);
            if (head == null) {
                return;
            }
            String[] lines = head.split("\r\n");
            String[] first = lines[0].split(" ");
            String auth = header(lines, "proxy-authorization");
            if (basic != null && !basic.equals(auth)) {
                refused.incrementAndGet();
                out.write(("HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic realm=\"test\"\r\n"
                        + "Content-Length: 0\r\nConnection: close\r\n\r\n").getBytes(ISO_8859_1));
                out.flush();
                return;
            }
            String method = first[0];
            String target;
            byte[] forward = null;
            if (method.equals("CONNECT")) {
                target = first[1];
            } else {
                URI uri = URI.create(first[1]);
                target = uri.getHost() + ":" + uri.getPort();
                StringBuilder b = new StringBuilder(method + " " + uri.getRawPath()
                        + (uri.getRawQuery() != null ? "?" + uri.getRawQuery() : "") + " " + first[2] + "\r\n");
                for (int i = 1; i < lines.length; i++) {
                    if (!lines[i].toLowerCase(Locale.ROOT).startsWith("proxy-")) {
                        b.append(lines[i]).append("\r\n");
                    }
                }
                forward = b.append("\r\n").toString().getBytes(ISO_8859_1);
            }
            tunnels.add(new Tunnel(method, target));
            int colon = target.lastIndexOf(':');
            int port = Integer.parseInt(target.substring(colon + 1));
            try (Socket server = new Socket(target.substring(0, colon), port)) {
                open.add(server);
                if (forward == null) {
                    out.write("HTTP/1.1 200 Connection established\r\n\r\n".getBytes(ISO_8859_1));
                    out.flush();
                } else {
                    server.getOutputStream().write(forward);
                }
                Thread back = new Thread(() -> pipe(server, client), "test-proxy-back");
                back.setDaemon(true);
                back.start();
                pipe(in, server);
                back.join(5_000);
            }
        } catch (IOException | RuntimeException | InterruptedException e) {
            // a connection cut by either side ends here
        }
    }

    private static void pipe(Socket from, Socket to) {
        try {
            pipe(from.getInputStream(), to);
        } catch (IOException e) {
            // closed
        }
    }

    private static void pipe(InputStream from, Socket to) {
        byte[] buf = new byte[16 * 1024];
        try {
            OutputStream out = to.getOutputStream();
            int n;
            while ((n = from.read(buf)) > 0) {
                out.write(buf, 0, n);
                out.flush();
            }
            to.shutdownOutput();
        } catch (IOException e) {
            // closed
        }
    }

    /** The request head up to its blank line, or null at the end of the stream. */
    private static String readHead(InputStream in) throws IOException {
        ByteArrayOutputStream head = new ByteArrayOutputStream();
        int c;
        while ((c = in.read()) >= 0) {
            head.write(c);
            byte[] b = head.toByteArray();
            int n = b.length;
            if (n >= 4 && b[n - 4] == '\r' && b[n - 3] == '\n' && b[n - 2] == '\r' && b[n - 1] == '\n') {
                return new String(b, 0, n - 4, ISO_8859_1);
            }
            if (n > 64 * 1024) {
                throw new IOException("request head over 64 KiB");
            }
        }
        return null;
    }

    private static String header(String[] lines, String name) {
        for (int i = 1; i < lines.length; i++) {
            int colon = lines[i].indexOf(':');
            if (colon > 0 && lines[i].substring(0, colon).trim().toLowerCase(Locale.ROOT).equals(name)) {
                return lines[i].substring(colon + 1).trim();
            }
        }
        return null;
    }

    @Override
    public void close() throws IOException {
        server.close();
        for (Socket s : open) {
            s.close();
        }
    }
}
