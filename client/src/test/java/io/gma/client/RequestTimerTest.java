package io.gma.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(value = 60, unit = TimeUnit.SECONDS)
class RequestTimerTest {
    @Test
    void requestsRefusedBeforeTheyAreSentLeaveNothingAwaited() throws Exception {
        try (DirectFixture f = new DirectFixture();
                Consumer asker = f.consumer("asker").build()) {
            for (int i = 0; i < 100; i++) {
                assertThrows(IllegalArgumentException.class, () -> asker.requestAsync(asker.name(), new byte[1]),
                        "a request to itself");
            }
            assertEquals(0, asker.core().requestsAwaited(), "answers awaited of requests that were never sent");
        }
    }

    @Test
    void answeredRequestsLeaveNoTimeoutBehind() throws Exception {
        try (DirectFixture f = new DirectFixture();
                Producer echo = f.producer("echo").onMessage(m -> m.reply(m.data())).build();
                Consumer asker = f.consumer("asker").requestTimeout(Duration.ofMinutes(5)).build()) {
            for (int i = 0; i < 2_000; i++) {
                asker.request(echo.name(), new byte[64 * 1024], Duration.ofMinutes(5));
            }
            // each left behind would hold its 64 KiB reply for five minutes
            int tasks = asker.core().timerTasks();
            assertTrue(tasks < 10, tasks + " tasks wait in the timer after 2,000 answered requests");
        }
    }
}
