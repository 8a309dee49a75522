package io.gma.pcservlet;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gma.registry.Registry;
import io.gma.registry.api.RegistryClient;
import io.gma.wire.Command;
import io.gma.wire.Packed;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import okhttp3.MediaType;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;
import org.eclipse.jetty.ee10.servlet.ServletContextHandler;
import org.eclipse.jetty.ee10.servlet.ServletHolder;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * TunnelServlet deployed in a container from its init parameters, not marked async-supported: its long polls
 * wait on their request's thread, as a servlet's would, and are answered all the same.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ContainerPollTest {
    @Test
    void withoutAsynchronousSupportAPollWaitsOnItsThreadAndIsAnsweredItsBatch() throws Exception {
        Server jetty = new Server();
        ServerConnector connector = new ServerConnector(jetty);
        connector.setHost("127.0.0.1");
        connector.setPort(0);
        jetty.addConnector(connector);
        try (Registry registry = Registry.builder().port(0).build().start()) {
            ServletContextHandler context = new ServletContextHandler("/");
            ServletHolder holder = new ServletHolder("gma-pc", TunnelServlet.class);
            holder.setAsyncSupported(false);
            holder.setInitParameter("domain", "hub");
            holder.setInitParameter("registry", registry.url());
            holder.setInitParameter("url", "http://127.0.0.1:1"); // how others would reach it: unused here
            holder.setInitParameter("memory", "true");
            holder.setInitParameter("uplinkHost", "127.0.0.1");
            holder.setInitParameter("uplinkPort", "0");
            holder.setInitOrder(1);
            context.addServlet(holder, "/*");
            jetty.setHandler(context);
            jetty.start();
            String base = "http://127.0.0.1:" + connector.getLocalPort();
            RegistryClient.create(registry.url()).registerDomain("far", null, "hub", Duration.ofMinutes(5));
            OkHttpClient http = new OkHttpClient.Builder().readTimeout(Duration.ofSeconds(30)).build();
            Request nothing = new Request.Builder().url(base + Tunnel.MESSAGES_PATH + "?domain=far&wait=0").build();
            try (Response r = http.newCall(nothing).execute()) {
                assertEquals(204, r.code());
            }
            CompletableFuture<String> polled = CompletableFuture.supplyAsync(() -> {
                Request wait = new Request.Builder().url(base + Tunnel.MESSAGES_PATH + "?domain=far&wait=20").build();
                try (Response r = http.newCall(wait).execute()) {
                    return r.code() + " " + r.header(Tunnel.BATCH_HEADER) + " " + r.body().bytes().length;
                } catch (java.io.IOException e) {
                    throw new java.io.UncheckedIOException(e);
                }
            });
            Thread.sleep(300); // a window, on purpose: the poll waits before the batch comes
            byte[] batch = Packed.make(1, Command.DATA, "src-aaaaaa@west", "sink-aaaaaa@far", "x".getBytes(UTF_8));
            Request post = new Request.Builder().url(base + Tunnel.MESSAGES_PATH).header(Tunnel.DOMAIN_HEADER, "west")
                    .post(RequestBody.create(batch, MediaType.get(Tunnel.MEDIA_TYPE))).build();
            try (Response r = http.newCall(post).execute()) {
                assertEquals(200, r.code(), r.body().string());
            }
            String answer = polled.get(20, TimeUnit.SECONDS);
            assertTrue(answer.startsWith("200 ") && answer.endsWith(" " + batch.length), answer);
            Request ack = new Request.Builder().url(base + Tunnel.MESSAGES_PATH + "?domain=far&wait=0&ack="
                    + answer.split(" ")[1]).build();
            try (Response r = http.newCall(ack).execute()) {
                assertEquals(204, r.code(), "acknowledged: the relay queue is empty, and the stop need not wait");
            }
            http.dispatcher().executorService().shutdown();
        } finally {
            jetty.stop();
        }
    }
}
