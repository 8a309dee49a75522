package io.gma.client;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gma.registry.api.DomainInfo;
import io.gma.registry.api.RegistryClient;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Two domains behind firewalls talk through a third: the traffic really goes through the relay's queues. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class RelayTest {
    private final HttpClient http = HttpClient.newHttpClient();

    @Test
    void outboundOnlyDomainsRegisterNoUrlAndTheHubRelaysBothWays() throws Exception {
        LinkedBlockingQueue<Incoming> got = new LinkedBlockingQueue<>();
        try (TunnelFixture f = new TunnelFixture(TunnelFixture.Firewalls.BOTH);
                Producer p = f.producer("sensor").onMessage(m -> m.reply(m.data())).build();
                Consumer c = f.consumer("collector").onMessage(got::add).build()) {
            RegistryClient registry = RegistryClient.create(f.registry.url());
            for (String d : new String[] {"east", "west"}) {
                DomainInfo info = registry.lookupDomain(d);
                assertNull(info.url(), d + " must register no URL");
                assertEquals("hub", info.via());
            }
            assertEquals("pong", new String(c.request(p.name(), "pong".getBytes(UTF_8),
                    java.time.Duration.ofSeconds(10)), UTF_8));
            p.send(c.name(), "up".getBytes(UTF_8)).acknowledged().get(10, TimeUnit.SECONDS);
            assertEquals("up", new String(got.poll(10, TimeUnit.SECONDS).data(), UTF_8));
            String hub = get(f.hub.url() + "/metrics").body();
            assertTrue(counter(hub, "gma_pc_relayed_total") >= 3, hub); // request, reply, data: each relayed
        }
    }

    @Test
    void pollsAreRefusedForDomainsTheHubDoesNotRelayFor() throws Exception {
        try (TunnelFixture f = new TunnelFixture(TunnelFixture.Firewalls.EAST)) {
            HttpResponse<String> r = get(f.hub.url() + "/gma/v1/messages?domain=west&wait=0");
            assertEquals(403, r.statusCode());
            assertEquals("FORBIDDEN domain west is not registered with via hub", r.body());
            r = get(f.hub.url() + "/gma/v1/messages?domain=east&wait=61");
            assertEquals(400, r.statusCode());
            assertEquals("MALFORMED wait 61 is outside 0..60 seconds", r.body());
        }
    }

    private HttpResponse<String> get(String url) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create(url)).build(), HttpResponse.BodyHandlers.ofString());
    }

    private static double counter(String metrics, String name) {
        for (String line : metrics.split("\n")) {
            if (line.startsWith(name + " ")) {
                return Double.parseDouble(line.substring(name.length() + 1));
            }
        }
        throw new AssertionError(name + " is missing");
    }
}
