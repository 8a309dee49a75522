package io.gma.pcservlet;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.gma.client.DirectFixture;
import io.gma.client.EndpointException;
import io.gma.client.Producer;
import io.gma.client.TestKeys;
import io.gma.security.Security;
import io.gma.wire.ErrorCode;
import io.gma.wire.Message;
import java.nio.file.Path;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** A PC servlet applies its {@code send} rules to every message an uplink carries, answers included. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class UplinkAuthorizationTest {
    private final Path keys = TestKeys.main();

    @Test
    void aPcServletRoutesOnlyWhatTheRulesAllowEachUplink() throws Exception {
        RecordingUpstream router = new RecordingUpstream();
        LinkedBlockingQueue<Message> routed = router.routed;
        String rules = "send alice *@east\nsend bob *@north\nregister alice,bob *@west";
        Security west = TestKeys.security(keys, "west", rules);
        try (DirectFixture fixture = new DirectFixture(keys);
                TestUplinks pc = TestUplinks.start("west", router, west, fixture.registryUrl())) {
            String uplink = pc.uplink();
            try (Producer alice = fixture.producer("alice").domain("west").pcServlet(uplink)
                    .security(TestKeys.security(keys, "alice", rules)).build();
                    Producer bob = fixture.producer("bob").domain("west").pcServlet(uplink)
                            .security(TestKeys.security(keys, "bob", rules)).build()) {
                alice.send("x-aaaaaa@east", "allowed".getBytes(UTF_8)).acknowledged().get(10, TimeUnit.SECONDS);
                Message m = routed.poll(10, TimeUnit.SECONDS);
                assertEquals(alice.name(), m.from());
                assertEquals("x-aaaaaa@east", m.to());

                ExecutionException e = assertThrows(ExecutionException.class, () -> bob.requestAsync("x-aaaaaa@east",
                        "denied".getBytes(UTF_8)).get(10, TimeUnit.SECONDS));
                EndpointException why = (EndpointException) e.getCause();
                assertEquals(ErrorCode.FORBIDDEN, why.code(), why.getMessage());
                assertEquals("pc@west answered ERROR FORBIDDEN \"bob\" may not send to \"x-aaaaaa@east\": no send rule"
                        + " in test rules allows it", why.getMessage());
                assertNull(routed.poll(200, TimeUnit.MILLISECONDS));

                bob.send("y-aaaaaa@north", "allowed".getBytes(UTF_8)).acknowledged().get(10, TimeUnit.SECONDS);
                assertEquals(bob.name(), routed.poll(10, TimeUnit.SECONDS).from());
                ExecutionException e2 = assertThrows(ExecutionException.class, () -> alice.requestAsync(
                        "y-aaaaaa@north", "denied".getBytes(UTF_8)).get(10, TimeUnit.SECONDS));
                assertEquals(ErrorCode.FORBIDDEN, ((EndpointException) e2.getCause()).code());
                assertNull(routed.poll(200, TimeUnit.MILLISECONDS));
            }
        }
    }
}
