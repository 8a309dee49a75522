package io.gma.pcservlet;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.gma.client.EndpointException;
import io.gma.client.Producer;
import io.gma.registry.Registry;
import io.gma.wire.ErrorCode;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** A destination's queue and its forwarder thread go when idle, and come back with the next message. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class IdleQueueTest {
    @Test
    void anIdleDestinationIsRetiredAndServedAgainLater() throws Exception {
        try (Registry registry = Registry.builder().port(0).build().start();
                PcServer east = PcServer.builder("east", registry.url()).registryGrace(Duration.ZERO)
                        .idleQueue(Duration.ofMillis(200)).start();
                Producer p = Producer.builder().registry(registry.url()).domain("east").pcServlet(east.uplink())
                        .label("p").requestTimeout(Duration.ofSeconds(10)).build()) {
            for (int round = 0; round < 2; round++) {
                EndpointException e = assertThrows(EndpointException.class,
                        () -> p.request("x-aaaaaa@nowhere", new byte[1], Duration.ofSeconds(10)));
                assertEquals(ErrorCode.NO_ROUTE, e.code(), e.getMessage());
                assertEquals(1, outbound(east).size(), "a queue for nowhere while it has traffic");
                await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(50)).untilAsserted(() -> {
                    assertEquals(0, outbound(east).size(), "the idle queue was not retired");
                    assertEquals(0, forwarders(), "its thread did not end");
                });
            }
        }
    }

    private static long forwarders() {
        return Thread.getAllStackTraces().keySet().stream().filter(t -> t.getName().equals("gma-pc-east-to-nowhere"))
                .count();
    }

    private static JsonNode outbound(PcServer pc) throws Exception {
        String body = HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create(pc.url()
                + "/gma/v1/status")).build(), HttpResponse.BodyHandlers.ofString()).body();
        return new ObjectMapper().readTree(body).path("outbound");
    }
}
