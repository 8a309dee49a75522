import jakarta.servlet.http.*;
import java.io.*;
import java.nio.ByteBuffer;
import java.util.concurrent.*;
import org.eclipse.jetty.ee10.servlet.*;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.websocket.api.*;
import org.eclipse.jetty.websocket.server.*;

public class WsEcho {
    public static class Echo implements Session.Listener.AutoDemanding {
        Session s;
        @Override public void onWebSocketOpen(Session session) { s = session; }
        @Override public void onWebSocketBinary(ByteBuffer payload, Callback callback) {
            ByteBuffer copy = ByteBuffer.allocate(payload.remaining());
            copy.put(payload).flip();
            callback.succeed();
            s.sendBinary(copy, Callback.NOOP);
        }
    }

    public static class Sink implements Session.Listener.AutoDemanding {
        Session s;
        @Override public void onWebSocketOpen(Session session) { s = session; }
        @Override public void onWebSocketBinary(ByteBuffer payload, Callback callback) {
            byte[] copy = new byte[payload.remaining()];
            payload.get(copy);
            callback.succeed();
            s.sendBinary(ByteBuffer.wrap(new byte[1]), Callback.NOOP);
        }
    }

    public static class Back implements Session.Listener.AutoDemanding {
        final BlockingQueue<ByteBuffer> q;
        public Back(BlockingQueue<ByteBuffer> q) { this.q = q; }
        @Override public void onWebSocketBinary(ByteBuffer payload, Callback callback) {
            ByteBuffer copy = ByteBuffer.allocate(payload.remaining()); copy.put(payload).flip(); callback.succeed(); q.add(copy);
        }
    }

    public static class S extends HttpServlet {
        @Override protected void service(HttpServletRequest req, HttpServletResponse resp) throws IOException {
            byte[] b = req.getInputStream().readAllBytes();
            if (req.getRequestURI().endsWith("/sink")) {
                resp.setContentLength(0);
                return;
            }
            resp.setContentLength(b.length);
            resp.getOutputStream().write(b);
        }
    }

    public static void main(String[] a) throws Exception {
        Server server = new Server();
        ServerConnector c = new ServerConnector(server);
        c.setHost("127.0.0.1");
        server.addConnector(c);
        ServletContextHandler ctx = new ServletContextHandler("/");
        ctx.addServlet(new ServletHolder(new S()), "/*");
        WebSocketUpgradeHandler ws = WebSocketUpgradeHandler.from(server, ctx, container -> {
            container.setMaxBinaryMessageSize(32 << 20);
            container.addMapping("/ws", (rq, rs, cb) -> new Echo());
            container.addMapping("/sink", (rq, rs, cb) -> new Sink());
        });
        ctx.insertHandler(ws);
        server.setHandler(ctx);
        server.start();
        int port = c.getLocalPort();
        int size = Integer.parseInt(a.length > 0 ? a[0] : "1024");
        int rounds = 20000;
        long[] t = new long[rounds];
        okhttp3.OkHttpClient http = new okhttp3.OkHttpClient.Builder().socketFactory(new javax.net.SocketFactory() {
            javax.net.SocketFactory d = javax.net.SocketFactory.getDefault();
            java.net.Socket nd(java.net.Socket s) throws java.net.SocketException { s.setTcpNoDelay(true); return s; }
            public java.net.Socket createSocket() throws IOException { return nd(d.createSocket()); }
            public java.net.Socket createSocket(String h, int p) throws IOException { return nd(d.createSocket(h, p)); }
            public java.net.Socket createSocket(String h, int p, java.net.InetAddress l, int lp) throws IOException { return nd(d.createSocket(h, p, l, lp)); }
            public java.net.Socket createSocket(java.net.InetAddress h, int p) throws IOException { return nd(d.createSocket(h, p)); }
            public java.net.Socket createSocket(java.net.InetAddress h, int p, java.net.InetAddress l, int lp) throws IOException { return nd(d.createSocket(h, p, l, lp)); }
        }).build();
        BlockingQueue<okio.ByteString> back = new LinkedBlockingQueue<>();
        okhttp3.WebSocket sock = http.newWebSocket(new okhttp3.Request.Builder().url("ws://127.0.0.1:" + port + "/ws").build(),
            new okhttp3.WebSocketListener() {
                @Override public void onMessage(okhttp3.WebSocket w, okio.ByteString b) { back.add(b); }
                @Override public void onFailure(okhttp3.WebSocket w, Throwable e, okhttp3.Response r) { e.printStackTrace(); }
            });
        okio.ByteString msg = okio.ByteString.of(new byte[size]);
        org.eclipse.jetty.websocket.client.WebSocketClient jc = new org.eclipse.jetty.websocket.client.WebSocketClient();
        jc.start();
        BlockingQueue<ByteBuffer> jback = new LinkedBlockingQueue<>();
        Session js = jc.connect(new Back(jback), java.net.URI.create("ws://127.0.0.1:" + port + "/ws")).get();
        byte[] raw = new byte[size];
        for (int rep = 0; rep < 3; rep++) {
        for (int r = 0; r < rounds * 2; r++) {
            long t0 = System.nanoTime();
            sock.send(msg);
            back.take();
            if (r >= rounds) t[r - rounds] = System.nanoTime() - t0;
        }
        java.util.Arrays.sort(t);
        System.out.printf("WS echo (OkHttp client) %d B: p50 %.1f us p99 %.1f us%n", size, t[rounds / 2] / 1000.0, t[rounds * 99 / 100] / 1000.0);
        for (int r = 0; r < rounds * 2; r++) {
            long t0 = System.nanoTime();
            js.sendBinary(ByteBuffer.wrap(raw), Callback.NOOP);
            jback.take();
            if (r >= rounds) t[r - rounds] = System.nanoTime() - t0;
        }
        java.util.Arrays.sort(t);
        System.out.printf("WS echo (Jetty client) %d B: p50 %.1f us p99 %.1f us%n", size, t[rounds / 2] / 1000.0, t[rounds * 99 / 100] / 1000.0);
        okhttp3.RequestBody body = okhttp3.RequestBody.create(new byte[size], okhttp3.MediaType.get("application/octet-stream"));
        for (int r = 0; r < rounds * 2; r++) {
            long t0 = System.nanoTime();
            try (okhttp3.Response resp = http.newCall(new okhttp3.Request.Builder().url("http://127.0.0.1:" + port + "/e").post(body).build()).execute()) {
                resp.body().bytes();
            }
            if (r >= rounds) t[r - rounds] = System.nanoTime() - t0;
        }
        java.util.Arrays.sort(t);
        System.out.printf("POST echo %d B: p50 %.1f us p99 %.1f us%n", size, t[rounds / 2] / 1000.0, t[rounds * 99 / 100] / 1000.0);
        }
        // streaming 1 MiB bodies: POST back to back against WS messages, one in flight and all in flight
        int n = 1000;
        byte[] mib = new byte[1 << 20];
        BlockingQueue<ByteBuffer> acks = new LinkedBlockingQueue<>();
        Session sink = jc.connect(new Back(acks), java.net.URI.create("ws://127.0.0.1:" + port + "/sink")).get();
        okhttp3.RequestBody big = okhttp3.RequestBody.create(mib, okhttp3.MediaType.get("application/octet-stream"));
        for (int rep = 0; rep < 3; rep++) {
            long t0 = System.nanoTime();
            for (int i = 0; i < n; i++) {
                try (okhttp3.Response resp = http.newCall(new okhttp3.Request.Builder().url("http://127.0.0.1:" + port + "/sink").post(big).build()).execute()) {
                    resp.body().bytes();
                }
            }
            double post = n / ((System.nanoTime() - t0) / 1e9);
            t0 = System.nanoTime();
            for (int i = 0; i < n; i++) {
                sink.sendBinary(ByteBuffer.wrap(mib), Callback.NOOP);
                acks.take();
            }
            double ws1 = n / ((System.nanoTime() - t0) / 1e9);
            t0 = System.nanoTime();
            for (int i = 0; i < n; i++) {
                sink.sendBinary(ByteBuffer.wrap(mib), Callback.NOOP);
                if (i >= 4) acks.take();
            }
            for (int i = 0; i < 4; i++) acks.take();
            double ws4 = n / ((System.nanoTime() - t0) / 1e9);
            System.out.printf("1 MiB bodies, MiB/s: POST %.0f, WS one in flight %.0f, WS four in flight %.0f%n", post, ws1, ws4);
        }
        server.stop();
        System.exit(0);
    }
}
