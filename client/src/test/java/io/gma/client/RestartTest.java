package io.gma.client;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertEquals;

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
                try (Producer p = f.producer("agent").exactLabel(true).build()) {
                    for (int i = 0; i < 5; i++) {
                        p.send(sink.name(), ("run" + run + "-" + i).getBytes(UTF_8)).acknowledged()
                                .get(10, TimeUnit.SECONDS);
                    }
                }
                for (int i = 0; i < 5; i++) {
                    assertEquals("run" + run + "-" + i, got.poll(10, TimeUnit.SECONDS));
                }
                Thread.sleep(200); // the BYE reaches the sink
            }
        }
    }
}
