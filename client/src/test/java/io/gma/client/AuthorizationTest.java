package io.gma.client;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gma.registry.api.Kind;
import io.gma.registry.api.Registration;
import io.gma.registry.api.RegistryClient;
import io.gma.security.Rules;
import io.gma.security.Security;
import io.gma.security.Tls;
import io.gma.wire.Command;
import io.gma.wire.ErrorCode;
import io.gma.wire.Message;
import io.gma.wire.Packed;
import io.gma.wire.StreamDecoder;
import io.gma.wire.WireCodec;
import java.io.InputStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLSocket;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The {@code send} rules: who may send to whom, on direct links (through uplinks: the PC servlet's
 * UplinkAuthorizationTest).
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class AuthorizationTest {
    private final Path keys = TestKeys.main();
    private DirectFixture fixture;

    @BeforeEach
    void start() throws Exception {
        fixture = new DirectFixture(keys);
    }

    @AfterEach
    void stop() throws Exception {
        fixture.close();
    }

    private Producer sender(String identity, Security security) throws EndpointException {
        return fixture.producer(identity).security(security).build();
    }

    private static void delivered(Producer from, Consumer to, LinkedBlockingQueue<Incoming> at) throws Exception {
        from.send(to.name(), "allowed".getBytes(UTF_8)).acknowledged().get(10, TimeUnit.SECONDS);
        Incoming m = at.poll(10, TimeUnit.SECONDS);
        assertEquals(from.name(), m.from());
        assertEquals("allowed", new String(m.data(), UTF_8));
    }

    private static void forbidden(Producer from, String identity, Consumer to, LinkedBlockingQueue<Incoming> at)
            throws Exception {
        Probes.refused(from, to.name(), ErrorCode.FORBIDDEN, "refused the link: FORBIDDEN \"" + identity
                + "\" may not send to \"" + to.name() + "\": no send rule in test rules allows it");
        assertNull(at.poll(200, TimeUnit.MILLISECONDS));
    }

    @Test
    void eachIdentitySendsWhereTheRulesAllowAndNowhereElse() throws Exception {
        String rules = "send alice alices-*\nsend bob bobs-*\nregister alice,bob *";
        LinkedBlockingQueue<Incoming> atAlices = new LinkedBlockingQueue<>();
        LinkedBlockingQueue<Incoming> atBobs = new LinkedBlockingQueue<>();
        try (Consumer alices = fixture.consumer("alices-inbox").security(TestKeys.security(keys, "alice", rules))
                .onMessage(atAlices::add).build();
                Consumer bobs = fixture.consumer("bobs-inbox").security(TestKeys.security(keys, "bob", rules))
                        .onMessage(atBobs::add).build();
                Producer alice = sender("alice", TestKeys.security(keys, "alice", rules));
                Producer bob = sender("bob", TestKeys.security(keys, "bob", rules))) {
            delivered(alice, alices, atAlices);
            forbidden(bob, "bob", alices, atAlices);
            delivered(bob, bobs, atBobs);
            forbidden(alice, "alice", bobs, atBobs);
        }
    }

    @Test
    void aClientCertificateIsTheIdentityWithoutAToken() throws Exception {
        String rules = "send alice *\nregister alice,bob *";
        Security strict = TestKeys.builder(keys, "alice", Tls.ClientAuth.NEED).rules(Rules.parse(rules, "test rules"))
                .build();
        LinkedBlockingQueue<Incoming> at = new LinkedBlockingQueue<>();
        try (Consumer inbox = fixture.consumer("inbox").security(strict).onMessage(at::add).build();
                Producer alice = sender("alice", certificateOnly("alice"));
                Producer bob = sender("bob", certificateOnly("bob"))) {
            delivered(alice, inbox, at);
            forbidden(bob, "bob", inbox, at);
        }
    }

    /** TLS with {@code identity}'s certificate, and no token: HELLO's data is empty. */
    private Security certificateOnly(String identity) throws Exception {
        char[] pass = SecureLinkTest.password(keys);
        return Security.builder().tls(Tls.builder().keyStore(keys.resolve("client-" + identity + ".p12"), pass)
                .trustStore(keys.resolve("truststore.p12"), pass).clientAuth(Tls.ClientAuth.WANT).build()).build();
    }

    @Test
    void aMessageNotFromTheNameSaidInHelloIsRefused() throws Exception {
        LinkedBlockingQueue<Incoming> at = new LinkedBlockingQueue<>();
        Security alice = TestKeys.security(keys, "alice", "send alice *\nregister alice raw@lan");
        RegistryClient registry = RegistryClient.builder(fixture.registryUrl()).security(alice).build();
        String me = registry.register(Registration.builder(Kind.PRODUCER, "raw", "lan").exact(true).port(1).build())
                .name();
        try (Consumer inbox = fixture.consumer("inbox").security(alice).onMessage(at::add).build();
                SSLSocket s = (SSLSocket) alice.tls().socketFactory().createSocket("127.0.0.1",
                        registry.lookup(inbox.name()).port())) {
            s.getOutputStream().write(Packed.make(0, Command.HELLO, me, "", alice.bearer(inbox.name())
                    .getBytes(UTF_8)));
            s.getOutputStream().write(Packed.make(7, Command.DATA, "mallory-aaaaaa@lan", inbox.name(), new byte[1]));
            s.getOutputStream().write(Packed.make(8, Command.DATA, me, inbox.name(), "honest".getBytes(UTF_8)));
            List<Message> got = read(s.getInputStream(), 2, Command.WELCOME, Command.ERROR);
            assertEquals(7, got.get(1).sequence());
            assertEquals("FORBIDDEN \"mallory-aaaaaa@lan\" is not the name this link's peer said in HELLO, \"" + me
                    + "\"", got.get(1).dataAsString());
            Incoming m = at.poll(10, TimeUnit.SECONDS);
            assertEquals(me, m.from());
            assertEquals("honest", new String(m.data(), UTF_8));
            assertNull(at.poll(200, TimeUnit.MILLISECONDS));
        }
    }

    /** Reads until {@code n} messages of the given commands came (others, ACK and PING, are skipped). */
    private static List<Message> read(InputStream in, int n, Command... wanted) throws Exception {
        List<Message> got = new ArrayList<>();
        StreamDecoder decoder = WireCodec.standard().newStreamDecoder();
        byte[] buf = new byte[8192];
        List<Command> kinds = List.of(wanted);
        while (got.size() < n) {
            int r = in.read(buf);
            assertTrue(r > 0, "closed after " + got);
            decoder.feed(buf, 0, r, m -> {
                if (kinds.contains(m.command())) {
                    got.add(m);
                }
            });
        }
        return got;
    }
}
