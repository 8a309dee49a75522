import jakarta.servlet.http.*;
import jakarta.servlet.*;
import java.io.*;
import java.net.*;
import java.nio.charset.StandardCharsets;
import org.eclipse.jetty.ee10.servlet.*;
import org.eclipse.jetty.server.*;

public class UpEcho {
    public static class Echo implements HttpUpgradeHandler {
        @Override public void init(WebConnection wc) {
            Thread t = new Thread(() -> {
                try (InputStream in = wc.getInputStream(); OutputStream out = wc.getOutputStream()) {
                    DataInputStream din = new DataInputStream(new BufferedInputStream(in, 65536));
                    byte[] buf = new byte[1 << 20];
                    while (true) {
                        int n = din.readInt();
                        din.readFully(buf, 0, n);
                        byte[] frame = new byte[n + 4];
                        frame[0] = (byte) (n >>> 24); frame[1] = (byte) (n >>> 16); frame[2] = (byte) (n >>> 8); frame[3] = (byte) n;
                        System.arraycopy(buf, 0, frame, 4, n);
                        out.write(frame);
                        out.flush();
                    }
                } catch (Exception e) {
                    System.err.println("server: " + e);
                }
            });
            t.setDaemon(true);
            t.start();
        }
        @Override public void destroy() {}
    }

    public static class S extends HttpServlet {
        @Override protected void service(HttpServletRequest req, HttpServletResponse resp) throws IOException, ServletException {
            if ("gma-tunnel".equals(req.getHeader("Upgrade"))) {
                resp.setStatus(101);
                resp.setHeader("Upgrade", "gma-tunnel");
                resp.setHeader("Connection", "Upgrade");
                req.upgrade(Echo.class);
                return;
            }
            byte[] b = req.getInputStream().readAllBytes();
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
        server.setHandler(ctx);
        server.start();
        int port = c.getLocalPort();
        Socket s = new Socket("127.0.0.1", port);
        s.setTcpNoDelay(true);
        OutputStream out = s.getOutputStream();
        out.write(("GET /t HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: Upgrade\r\nUpgrade: gma-tunnel\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
        out.flush();
        InputStream in = new BufferedInputStream(s.getInputStream());
        StringBuilder head = new StringBuilder();
        while (!head.toString().endsWith("\r\n\r\n")) head.append((char) in.read());
        System.out.print(head); if (a.length > 1) { byte[] more = new byte[400]; s.setSoTimeout(2000); out.write(new byte[] {0, 0, 0, 4, 1, 2, 3, 4}); out.flush(); int k = in.read(more); System.out.println("MORE: " + new String(more, 0, Math.max(k,0))); System.exit(0);} 
        DataInputStream din = new DataInputStream(in);
        int size = Integer.parseInt(a.length > 0 ? a[0] : "1024");
        int rounds = 20000;
        byte[] frame = new byte[size + 4];
        frame[0] = (byte) (size >>> 24); frame[1] = (byte) (size >>> 16); frame[2] = (byte) (size >>> 8); frame[3] = (byte) size;
        byte[] back = new byte[size];
        long[] t = new long[rounds];
        for (int r = 0; r < rounds * 2; r++) {
            long t0 = System.nanoTime();
            out.write(frame); out.flush();
            int n = din.readInt(); din.readFully(back, 0, n);
            if (r >= rounds) t[r - rounds] = System.nanoTime() - t0;
        }
        java.util.Arrays.sort(t);
        System.out.printf("upgrade echo %d B: p50 %.1f us p99 %.1f us%n", size, t[rounds / 2] / 1000.0, t[rounds * 99 / 100] / 1000.0);
        // raw POST echo with OkHttp
        okhttp3.OkHttpClient http = new okhttp3.OkHttpClient.Builder().socketFactory(io.gma.security.NoDelaySocketFactory.INSTANCE).build();
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
        server.stop();
        System.exit(0);
    }
}
