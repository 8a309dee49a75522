package io.gma.pcservlet;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.gma.client.DirectFixture;
import io.gma.client.EndpointException;
import io.gma.client.Producer;
import io.gma.client.Sent;
import io.gma.client.TestKeys;
import io.gma.security.Security;
import io.gma.wire.ErrorCode;
import io.gma.wire.Message;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Receipts at the first hop of another domain's message: the uplink carries a DATA's REPLY_EXPECTED as it came,
 * and an ERROR from the sender's own PC servlet (in its own name, pc@domain) fails the message's delivered()
 * with its code, as it fails a request.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ReceiptsOnTheUplinkTest {
    private final Path keys = TestKeys.main();

    @Test
    void theUplinkCarriesTheFlagAndItsPcServletsRefusalFailsDelivered() throws Exception {
        RecordingUpstream router = new RecordingUpstream();
        String rules = "send alice *@east\nregister alice,bob *@west";
        Security west = TestKeys.security(keys, "west", rules);
        try (DirectFixture fixture = new DirectFixture(keys);
                TestUplinks pc = TestUplinks.start("west", router, west, fixture.registryUrl());
                Producer alice = fixture.producer("alice").domain("west").pcServlet(pc.uplink())
                        .security(TestKeys.security(keys, "alice", rules)).receipts(Duration.ofSeconds(30)).build();
                Producer bob = fixture.producer("bob").domain("west").pcServlet(pc.uplink())
                        .security(TestKeys.security(keys, "bob", rules)).receipts(Duration.ofSeconds(30)).build()) {
            Sent allowed = alice.send("x-aaaaaa@east", "allowed".getBytes(UTF_8));
            allowed.acknowledged().get(10, TimeUnit.SECONDS);
            Message m = router.routed.poll(10, TimeUnit.SECONDS);
            assertEquals(allowed.sequence(), m.sequence());
            assertEquals(Message.REPLY_EXPECTED, m.flags(), "the PC servlet took the DATA without its flag");
            assertFalse(allowed.delivered().isDone(), "delivered on the PC servlet's ACK");

            Sent denied = bob.send("x-aaaaaa@east", "denied".getBytes(UTF_8));
            ExecutionException e = assertThrows(ExecutionException.class,
                    () -> denied.delivered().get(10, TimeUnit.SECONDS));
            EndpointException why = (EndpointException) e.getCause();
            assertEquals(ErrorCode.FORBIDDEN, why.code(), why.getMessage());
            assertEquals("pc@west answered ERROR FORBIDDEN \"bob\" may not send to \"x-aaaaaa@east\": no send rule in"
                    + " test rules allows it", why.getMessage());
            assertEquals(0, bob.stats().receiptsAwaited());
        }
    }
}
