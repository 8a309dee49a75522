package io.gma.registry;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A registry that misbehaves at one step, on a real socket: it reads each request whole and then, as scripted,
 * closes the connection without an answer, answers a status with a registry's error body, or passes the request
 * on to a real registry and then closes without passing the answer back (a registry that stored a registration
 * and died before it answered). It counts the requests it read. One request per connection.
 */
final class FakeRegistry implements AutoCloseable {
    /** What the fake does with a request it has read. */
    interface Script {
        void act(String method, String path, String contentType, String body, OutputStream out) throws IOException;
    }

    private final ServerSocket server;
    private final Script script;
    private final AtomicInteger requests = new AtomicInteger();
    private final Thread acceptor;

    private FakeRegistry(Script script) throws IOException {
        this.server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        this.script = script;
        this.acceptor = new Thread(this::accept, "fake-registry-" + server.getLocalPort());
        acceptor.setDaemon(true);
        acceptor.start();
    }

    /** Closes every connection once the request is read, without an answer. */
    static FakeRegistry dropping() throws IOException {
        return new FakeRegistry((method, path, type, body, out) -> { });
    }

    /** Answers every request with {@code status} and the registry's error body {@code {"error": code, ...}}. */
    static FakeRegistry answering(int status, String code) throws IOException {
        return new FakeRegistry((method, path, type, body, out) -> {
            byte[] json = ("{\"error\":\"" + code + "\",\"message\":\"the fake answers " + status + "\"}")
                    .getBytes(StandardCharsets.UTF_8);
            out.write(("HTTP/1.1 " + status + " Fake\r\nContent-Type: application/json\r\nContent-Length: "
                    + json.length + "\r\nConnection: close\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
            out.write(json);
            out.flush();
        });
    }

    /** Answers every request with {@code status} and {@code body}, as a server that is no registry may. */
    static FakeRegistry answeringText(int status, String body) throws IOException {
        return new FakeRegistry((method, path, type, request, out) -> {
            byte[] text = body.getBytes(StandardCharsets.UTF_8);
            out.write(("HTTP/1.1 " + status + " Fake\r\nContent-Type: text/html\r\nContent-Length: " + text.length
                    + "\r\nConnection: close\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
            out.write(text);
            out.flush();
        });
    }

    /** Passes every request on to the registry at {@code baseUrl}, then closes without giving its answer. */
    static FakeRegistry forwardingThenDropping(String baseUrl) throws IOException {
        return new FakeRegistry((method, path, type, body, out) -> Http.send(method, baseUrl + path, type, body));
    }

    /** The base URL, as a registry's {@code url()}. */
    String url() {
        return "http://127.0.0.1:" + server.getLocalPort();
    }

    /** How many requests it has read. */
    int requests() {
        return requests.get();
    }

    private void accept() {
        while (!server.isClosed()) {
            Socket s;
            try {
                s = server.accept();
            } catch (IOException closed) {
                return;
            }
            Thread t = new Thread(() -> serve(s), "fake-registry-connection");
            t.setDaemon(true);
            t.start();
        }
    }

    private void serve(Socket s) {
        try (s) {
            InputStream in = s.getInputStream();
            String head = head(in);
            if (head == null) {
                return;
            }
            String[] lines = head.split("\r\n");
            String[] requestLine = lines[0].split(" ");
            String contentType = null;
            int length = 0;
            for (String line : lines) {
                String lower = line.toLowerCase(Locale.ROOT);
                if (lower.startsWith("content-length:")) {
                    length = Integer.parseInt(line.substring(15).trim());
                } else if (lower.startsWith("content-type:")) {
                    contentType = line.substring(13).trim();
                }
            }
            String body = new String(in.readNBytes(length), StandardCharsets.UTF_8);
            requests.incrementAndGet();
            script.act(requestLine[0], requestLine[1], contentType, length == 0 ? null : body, s.getOutputStream());
        } catch (IOException e) {
            // the client went away: nothing to do
        }
    }

    /** The request line and headers, up to the blank line; null if the connection ended first. */
    private static String head(InputStream in) throws IOException {
        ByteArrayOutputStream head = new ByteArrayOutputStream();
        int matched = 0;
        byte[] end = {'\r', '\n', '\r', '\n'};
        while (matched < end.length) {
            int b = in.read();
            if (b < 0) {
                return null;
            }
            head.write(b);
            matched = b == end[matched] ? matched + 1 : b == '\r' ? 1 : 0;
        }
        return head.toString(StandardCharsets.US_ASCII);
    }

    @Override
    public void close() throws IOException {
        server.close();
    }
}
