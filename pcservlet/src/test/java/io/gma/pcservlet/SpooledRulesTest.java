package io.gma.pcservlet;

import static io.gma.pcservlet.TestPages.freePort;
import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.gma.client.DirectFixture;
import io.gma.client.EndpointException;
import io.gma.client.Producer;
import io.gma.client.Sent;
import io.gma.client.TestKeys;
import io.gma.wire.ErrorCode;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The spool keeps who sent each message: one an uplink carried, read back after a restart, is checked against the
 * send rules of the new run, which may have taken the sender's right away meanwhile.
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class SpooledRulesTest {
    private static final String ALLOWED = "register alice *@west\nsend alice *";
    private static final String DENIED = "register alice *@west";

    @TempDir
    Path dir;

    private static PcServer west(DirectFixture f, Path keys, String rules, Path spool, int http, int uplink)
            throws Exception {
        return PcServer.builder("west", f.registryUrl()).httpPort(http).uplinkPort(uplink)
                .security(TestKeys.security(keys, "west", rules)).drainTimeout(Duration.ZERO)
                .spool(SpoolOptions.in(spool)).start();
    }

    @Test
    void aMessageReadBackIsCheckedAgainstTheRulesOfTheNewRun() throws Exception {
        Path keys = TestKeys.main();
        int http = freePort();
        int uplink = freePort();
        try (DirectFixture f = new DirectFixture(keys)) {
            PcServer west = west(f, keys, ALLOWED, dir, http, uplink);
            try (Producer alice = f.producer("alice").domain("west").pcServlet("127.0.0.1:" + uplink)
                    .security(TestKeys.security(keys, "alice", ALLOWED)).receipts(Duration.ofSeconds(60)).build()) {
                // domain east is not registered, and the registry is young: the message waits in west's spool
                Sent sent = alice.send("x-aaaaaa@east", "then allowed".getBytes(UTF_8));
                sent.acknowledged().get(10, TimeUnit.SECONDS);
                west.close();
                west = west(f, keys, DENIED, dir, http, uplink);
                ExecutionException e = assertThrows(ExecutionException.class, () -> sent.delivered().get(30,
                        TimeUnit.SECONDS));
                EndpointException why = (EndpointException) e.getCause();
                assertEquals(ErrorCode.FORBIDDEN, why.code(), why.getMessage());
                assertEquals("x-aaaaaa@east answered ERROR FORBIDDEN \"alice\" may not send to \"x-aaaaaa@east\": no"
                        + " send rule in test rules allows it", why.getMessage());
            } finally {
                west.close();
            }
        }
    }
}
