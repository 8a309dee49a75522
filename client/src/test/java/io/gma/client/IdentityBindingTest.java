package io.gma.client;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gma.security.Security;
import io.gma.wire.Command;
import io.gma.wire.ErrorCode;
import io.gma.wire.Message;
import io.gma.wire.Packed;
import io.gma.wire.StreamDecoder;
import io.gma.wire.WireCodec;
import java.io.InputStream;
import java.net.SocketTimeoutException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLSocket;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Review of issue 6: the name a peer says in HELLO must be one its identity may be. Without that, any
 * authenticated identity may take another endpoint's name, and with it the messages addressed to it.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class IdentityBindingTest {
    private final Path keys = TestKeys.main();

    private static final Gateway.Router NOWHERE = new Gateway.Router() {
        @Override
        public boolean route(Message m) {
            return true;
        }

        @Override
        public void undeliverable(Message m, ErrorCode code, String reason) {
            // none here
        }
    };

    /**
     * Alice may send to east, nothing else; she is not "victim". She opens an uplink to west's PC servlet with
     * her own valid token, saying HELLO as victim-aaaaaa@west, and is handed what waits for the victim.
     */
    @Test
    void anUplinkMayNotTakeTheNameOfAnEndpointItsIdentityMayNotBe() throws Exception {
        String rules = "send alice *@east\nregister victim victim-*@west";
        Security alice = TestKeys.security(keys, "alice", rules);
        try (Gateway pc = Gateway.builder("west", NOWHERE).security(TestKeys.security(keys, "west", rules)).build()
                .start()) {
            String victim = "victim-aaaaaa@west";
            assertNull(pc.deliverAll(List.of(Message.of(Command.DATA, "x-bbbbbb@east", victim, 1,
                    "for the victim only".getBytes(UTF_8)))));
            try (SSLSocket s = (SSLSocket) alice.tls().socketFactory().createSocket("127.0.0.1",
                    pc.address().getPort())) {
                s.setSoTimeout(3000);
                s.getOutputStream().write(Packed.make(0, Command.HELLO, victim, "", alice.bearer().getBytes(UTF_8)));
                List<Message> got = readAll(s.getInputStream());
                assertTrue(got.stream().noneMatch(m -> m.command() == Command.DATA),
                        "alice, holding no right to the name " + victim + ", was handed its messages: " + got);
                assertEquals(Command.ERROR, got.get(0).command(), "HELLO as another's name was answered " + got);
                assertTrue(got.get(0).dataAsString().startsWith("FORBIDDEN "), got.get(0).dataAsString());
            }
        }
    }

    /**
     * On a direct link the same: an identity that may send to the consumer, HELLO as another name (that of an
     * endpoint the consumer trusts), has its messages delivered with that name as their sender.
     */
    @Test
    void aDirectLinkMayNotTakeTheNameOfAnEndpointItsIdentityMayNotBe() throws Exception {
        try (DirectFixture fixture = new DirectFixture()) {
            String rules = "send alice *\nregister alice alice-*@lan";
            Security alice = TestKeys.security(keys, "alice", rules);
            java.util.concurrent.LinkedBlockingQueue<Incoming> at = new java.util.concurrent.LinkedBlockingQueue<>();
            try (Consumer inbox = fixture.consumer("inbox").security(TestKeys.security(keys, "bob", rules))
                    .onMessage(at::add).build();
                    SSLSocket s = (SSLSocket) alice.tls().socketFactory().createSocket("127.0.0.1",
                            io.gma.registry.RegistryClient.create(fixture.registryUrl()).lookup(inbox.name()).port())) {
                s.setSoTimeout(3000);
                String boss = "boss-aaaaaa@lan";
                s.getOutputStream().write(Packed.make(0, Command.HELLO, boss, "", alice.bearer().getBytes(UTF_8)));
                s.getOutputStream().write(Packed.make(7, Command.DATA, boss, inbox.name(),
                        "shut down".getBytes(UTF_8)));
                Incoming m = at.poll(1, TimeUnit.SECONDS);
                assertNull(m, "alice's message was delivered as from " + (m == null ? null : m.from()));
            }
        }
    }

    /** What comes until the peer closes or is silent for the socket's timeout (ACK and PING skipped). */
    private static List<Message> readAll(InputStream in) throws Exception {
        List<Message> got = new ArrayList<>();
        StreamDecoder decoder = WireCodec.standard().newStreamDecoder();
        byte[] buf = new byte[8192];
        try {
            for (int r; (r = in.read(buf)) > 0;) {
                decoder.feed(buf, 0, r, m -> {
                    if (m.command() != Command.ACK && m.command() != Command.PING) {
                        got.add(m);
                    }
                });
            }
        } catch (SocketTimeoutException | javax.net.ssl.SSLException quiet) {
            // what came is all
        }
        return got;
    }
}
