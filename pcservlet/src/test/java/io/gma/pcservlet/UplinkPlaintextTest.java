package io.gma.pcservlet;

import io.gma.client.DirectFixture;
import io.gma.client.Probes;
import io.gma.client.Producer;
import io.gma.client.TestKeys;
import io.gma.security.Security;
import io.gma.wire.ErrorCode;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * An uplink is TLS at both ends or not at all: a plaintext endpoint is refused by a PC servlet that speaks TLS,
 * and an endpoint with security refuses a PC servlet that answers in plaintext (its HELLO, which carries its
 * token, is never written: TLS comes first). Either way, what it sends to other domains fails UNAUTHORIZED.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class UplinkPlaintextTest {
    private final Path keys = TestKeys.main();
    private static final String RULES = "send * *";

    @Test
    void aPlaintextEndpointIsRefusedByATlsUplink() throws Exception {
        Security west = TestKeys.security(keys, "west", RULES);
        try (DirectFixture secure = new DirectFixture(keys);
                DirectFixture plain = new DirectFixture();
                TestUplinks pc = TestUplinks.start("west", new RecordingUpstream(), west, secure.registryUrl());
                Producer p = plain.producer("plain").domain("west").pcServlet(pc.uplink()).build()) {
            Probes.refused(p, "x-aaaaaa@east", ErrorCode.UNAUTHORIZED,
                    "refused the link: UNAUTHORIZED this port speaks TLS: connect with TLS");
        }
    }

    @Test
    void anEndpointWithSecurityRefusesAPlaintextUplink() throws Exception {
        try (DirectFixture secure = new DirectFixture(keys);
                TestUplinks pc = TestUplinks.start("lan", new RecordingUpstream());
                Producer p = secure.producer("alice").pcServlet(pc.uplink())
                        .security(TestKeys.security(keys, "alice", RULES)).build()) {
            Probes.refused(p, "x-aaaaaa@east", ErrorCode.UNAUTHORIZED, "answered in plaintext GMA: it does not"
                    + " speak TLS");
        }
    }
}
