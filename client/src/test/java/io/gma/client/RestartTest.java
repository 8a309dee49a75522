package io.gma.client;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.time.Duration;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(value = 60, unit = TimeUnit.SECONDS)
class RestartTest {
    @Test
    void exactNamedEndpointClosedAndStartedAgainIsHeardFromTheStart() throws Exception {
        LinkedBlockingQueue<String> got = new LinkedBlockingQueue<>();
        try (DirectFixture f = new DirectFixture();
                Consumer sink = f.consumer("sink").onMessage(m -> got.add(new String(m.data(), UTF_8))).build()) {
            for (int run = 1; run <= 2; run++) {
                String agent;
                try (Producer p = f.producer("agent").exactLabel(true).build()) {
                    agent = p.name();
                    for (int i = 0; i < 5; i++) {
                        p.send(sink.name(), ("run" + run + "-" + i).getBytes(UTF_8)).acknowledged()
                                .get(10, TimeUnit.SECONDS);
                    }
                }
                for (int i = 0; i < 5; i++) {
                    assertEquals("run" + run + "-" + i, got.poll(10, TimeUnit.SECONDS));
                }
                // the BYE reaches the sink: it forgets the agent's numbers
                await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(5))
                        .until(() -> !sink.core().remembers(agent));
            }
        }
    }
}
