package io.gma.client;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.gma.registry.Registry;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(value = 60, unit = TimeUnit.SECONDS)
class SmokeTest {
    @Test
    void sendRequestAndPublish() throws Exception {
        try (Registry registry = Registry.builder().port(0).build().start()) {
            LinkedBlockingQueue<String> got = new LinkedBlockingQueue<>();
            try (Producer p = Producer.builder().registry(registry.url()).domain("lan").label("p")
                    .onMessage(m -> {
                        if (m.replyExpected()) {
                            m.reply(m.data());
                        } else {
                            got.add("p:" + new String(m.data(), StandardCharsets.UTF_8));
                        }
                    }).build();
                    Consumer c = Consumer.builder().registry(registry.url()).domain("lan").label("c")
                            .onMessage(m -> got.add("c:" + new String(m.data(), StandardCharsets.UTF_8))).build()) {
                c.send(p.name(), "hello".getBytes(StandardCharsets.UTF_8)).acknowledged().get(5, TimeUnit.SECONDS);
                assertEquals("p:hello", got.poll(5, TimeUnit.SECONDS));
                assertArrayEquals(new byte[] {1, 2, 3}, c.request(p.name(), new byte[] {1, 2, 3},
                        Duration.ofSeconds(5)));
                c.subscribe(p.name(), null).acknowledged().get(5, TimeUnit.SECONDS);
                p.publish("event".getBytes(StandardCharsets.UTF_8));
                assertEquals("c:event", got.poll(5, TimeUnit.SECONDS));
            }
        }
    }
}
