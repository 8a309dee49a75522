package io.gma.pcservlet;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gma.client.Consumer;
import io.gma.client.Producer;
import io.gma.registry.Registry;
import io.gma.security.HttpProxy;
import io.gma.security.Keys;
import io.gma.security.Security;
import io.gma.security.Tls;
import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import okhttp3.Credentials;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Through the corporate firewall as it is: east's PC servlet reaches west's, and the registry, only through an
 * HTTP forward proxy (a real one, {@link ForwardProxy}, between them), with proxy authentication, plaintext and
 * TLS (CONNECT).
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class ProxyTest {
    private static final int MESSAGES = 200;

    @Test
    void postsGoThroughAnAuthenticatingProxyAndTheRegistryBypassesIt(@TempDir Path dir) throws Exception {
        Path password = Files.writeString(dir.resolve("proxy.pass"), "s3cret\n");
        try (ForwardProxy proxy = new ForwardProxy(Credentials.basic("gma", "s3cret"));
                Registry registry = Registry.builder().port(0).build().start();
                PcServer west = PcServer.builder("west", registry.url()).start();
                // the registry by name, which --no-proxy names; west's registered URL by address, through it
                PcServer east = PcServer.builder("east", registry.url().replace("127.0.0.1", "localhost"))
                        .proxy(PcCommand.proxy(proxy.url(), "gma", password, "localhost")).start()) {
            List<String> got = stream(registry.url(), east, west, null, null);
            assertEquals(numbers(), got, "lost, duplicated or out of order through the proxy");
            String westTarget = hostPort(west.url());
            assertTrue(proxy.tunnels.stream().anyMatch(t -> t.method().equals("POST")
                    && t.target().equals(westTarget)), "east's posts did not go through the proxy: " + proxy.tunnels);
            assertTrue(proxy.tunnels.stream().allMatch(t -> t.target().equals(westTarget)),
                    "only west is called through the proxy (the registry is bypassed): " + proxy.tunnels);
            assertEquals(0, proxy.refused.get(), "the credentials go with the first request, not after a 407");
        }
    }

    @Test
    void wrongProxyCredentialsAreRefusedAndRetriedNotLost(@TempDir Path dir) throws Exception {
        Path password = Files.writeString(dir.resolve("proxy.pass"), "wrong\n");
        try (ForwardProxy proxy = new ForwardProxy(Credentials.basic("gma", "s3cret"));
                Registry registry = Registry.builder().port(0).build().start();
                PcServer west = PcServer.builder("west", registry.url()).start()) {
            // with the registry behind the proxy, the PC servlet cannot register, and says so
            Exception refused = assertThrows(Exception.class, () -> PcServer.builder("east", registry.url())
                    .proxy(PcCommand.proxy(proxy.url(), "gma", password, null)).start());
            assertTrue(refused.getMessage().contains("407"), refused.getMessage());
            try (PcServer east = PcServer.builder("east", registry.url().replace("127.0.0.1", "localhost"))
                            .proxy(PcCommand.proxy(proxy.url(), "gma", password, "localhost")).start();
                    Consumer sink = Consumer.builder().registry(registry.url()).domain("west")
                            .pcServlet(west.uplink()).label("sink").onMessage(m -> { }).build();
                    Producer source = Producer.builder().registry(registry.url()).domain("east")
                            .pcServlet(east.uplink()).label("source").build()) {
                int before = proxy.refused.get();
                source.send(sink.name(), "held".getBytes(UTF_8)).acknowledged().get(10, TimeUnit.SECONDS);
                // refused with 407, and posted again after a back-off: held, not dropped
                await().atMost(Duration.ofSeconds(30)).until(() -> proxy.refused.get() >= before + 2);
                assertEquals(0, proxy.tunnels.size(), "the proxy let a call through without the right credentials");
                assertEquals(1, TestPages.sample(TestPages.metrics(east),
                        "gma_pc_outbound_queue_messages{domain=\"west\"}"), "the message is no longer held for west");
            }
        }
    }

    @Test
    void httpsGoesThroughTheProxyByConnect(@TempDir Path keys) throws Exception {
        Keys.make(keys, List.of("localhost", "127.0.0.1"), List.of("alice", "bob"));
        Keys.addIdentities(keys, List.of("east", "west"));
        Files.writeString(keys.resolve("rules"), """
                register  alice,bob     *
                domain    east,west     *
                send      *             *
                post      east,west     *
                """);
        try (ForwardProxy proxy = new ForwardProxy(null);
                Registry registry = Registry.builder().port(0).security(as(keys, "registry")).build().start();
                PcServer west = PcServer.builder("west", registry.url()).security(as(keys, "west")).start();
                PcServer east = PcServer.builder("east", registry.url()).security(as(keys, "east"))
                        .proxy(HttpProxy.parse(proxy.url())).start()) {
            List<String> got = stream(registry.url(), east, west, as(keys, "alice"), as(keys, "bob"));
            assertEquals(numbers(), got, "lost, duplicated or out of order through the proxy");
            assertTrue(proxy.tunnels.contains(new ForwardProxy.Tunnel("CONNECT", hostPort(west.url()))),
                    "east's posts did not go through the proxy: " + proxy.tunnels);
            assertTrue(proxy.tunnels.contains(new ForwardProxy.Tunnel("CONNECT", hostPort(registry.url()))),
                    "east's registry calls did not go through the proxy: " + proxy.tunnels);
            assertTrue(proxy.tunnels.stream().allMatch(t -> t.method().equals("CONNECT")),
                    "https went through the proxy in plaintext: " + proxy.tunnels);
        }
    }

    private static Security as(Path keys, String identity) throws IOException {
        return Security.fromDirectory(keys, identity, Tls.ClientAuth.NONE).build();
    }

    /** Streams numbered messages from a producer in east to a consumer in west; what the consumer got. */
    private static List<String> stream(String registry, PcServer east, PcServer west, Security producer,
            Security consumer) throws Exception {
        List<String> got = new CopyOnWriteArrayList<>();
        var cb = Consumer.builder().registry(registry).domain("west").pcServlet(west.uplink()).label("sink")
                .onMessage(m -> got.add(new String(m.data(), UTF_8)));
        var pb = Producer.builder().registry(registry).domain("east").pcServlet(east.uplink()).label("source");
        if (producer != null) {
            cb.security(consumer);
            pb.security(producer);
        }
        try (Consumer sink = cb.build(); Producer source = pb.build()) {
            for (int i = 0; i < MESSAGES; i++) {
                source.send(sink.name(), Integer.toString(i).getBytes(UTF_8));
            }
            await().atMost(Duration.ofSeconds(60)).until(() -> got.size() >= MESSAGES);
            Thread.sleep(200); // a duplicate would come right behind
        }
        return got;
    }

    private static List<String> numbers() {
        return java.util.stream.IntStream.range(0, MESSAGES).mapToObj(Integer::toString).toList();
    }

    private static String hostPort(String url) {
        URI u = URI.create(url);
        return u.getHost() + ":" + u.getPort();
    }
}
