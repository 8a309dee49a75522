package io.gma.client;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gma.registry.api.Kind;
import io.gma.registry.api.Registration;
import io.gma.registry.api.RegistryClient;
import io.gma.security.Security;
import io.gma.wire.Command;
import io.gma.wire.Message;
import io.gma.wire.Packed;
import io.gma.wire.StreamDecoder;
import io.gma.wire.WireCodec;
import java.io.InputStream;
import java.net.SocketTimeoutException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLSocket;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The name a peer says in HELLO must be one its identity may be: one the registry says it registered. Without
 * that, any authenticated identity may take another endpoint's name, and with it the messages addressed to it.
 * A name's label is what was registered, never inferred from its shape: {@code x-abc234@east} registered exactly
 * by bob is not {@code x@east} with a nonce, which mallory may register.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class IdentityBindingTest {
    private final Path keys = TestKeys.main();

    /** The registry lets bob register the exact label x-abc234, and mallory only x, as the case. */
    private static final String RULES = "send * *\nregister bob x-abc234@east,x-abc234@lan\n"
            + "register mallory x@east,x@lan\nregister alice,victim *";

    private static Security as(Path keys, String identity) {
        return TestKeys.security(keys, identity, RULES);
    }

    /**
     * HELLO as {@code name} with {@code security}'s token for {@code audience}, then a DATA from it, on a raw TLS
     * connection; what came back until the peer closed or was silent.
     */
    private static List<Message> hello(Security security, int port, String name, String audience, String to)
            throws Exception {
        try (SSLSocket s = (SSLSocket) security.tls().socketFactory().createSocket("127.0.0.1", port)) {
            s.setSoTimeout(3000);
            s.getOutputStream().write(Packed.make(0, Command.HELLO, name, "", security.bearer(audience)
                    .getBytes(UTF_8)));
            s.getOutputStream().write(Packed.make(7, Command.DATA, name, to, "as another".getBytes(UTF_8)));
            return readAll(s.getInputStream());
        }
    }

    /** Registers {@code label} exactly in {@code domain} as {@code security}'s identity; the name. */
    private static String registerExactly(String registryUrl, Security security, String label, String domain)
            throws Exception {
        return RegistryClient.builder(registryUrl).security(security).build().register(Registration.builder(
                Kind.CONSUMER, label, domain).exact(true).port(1).build()).name();
    }

    private static void refusedAsAnother(List<Message> got, String sentence) {
        assertTrue(got.stream().noneMatch(m -> m.command() == Command.WELCOME || m.command() == Command.DATA),
                "a name of another identity was let in: " + got);
        assertEquals(Command.ERROR, got.get(0).command(), "HELLO as another's name was answered " + got);
        assertEquals(sentence, got.get(0).dataAsString());
    }

    /**
     * Alice may send to east; she is not the victim. She opens an uplink to west's PC servlet with her own valid
     * token, saying HELLO as the victim's registered name, to be handed what waits for it.
     */
    @Test
    void anUplinkMayNotTakeTheNameAnotherIdentityRegistered() throws Exception {
        try (DirectFixture fixture = new DirectFixture(keys)) {
            Security west = as(keys, "west");
            Security alice = as(keys, "alice");
            String victim = registerExactly(fixture.registryUrl(), as(keys, "bob"), "x-abc234", "lan");
            try (Gateway pc = Gateway.builder("lan", new RecordingRouter()).security(west).registry(RegistryClient
                    .builder(fixture.registryUrl()).security(west).build()).build().start()) {
                assertNull(pc.deliverAll(List.of(Message.of(Command.DATA, "y-bbbbbb@east", victim, 1,
                        "for the victim only".getBytes(UTF_8)))));
                refusedAsAnother(hello(alice, pc.address().getPort(), victim, "lan", "y-bbbbbb@east"),
                        "FORBIDDEN \"alice\" may not go by the name \"" + victim + "\": another identity"
                                + " registered it");
            }
        }
    }

    /** The case: a suffix that looks like a nonce makes mallory's x@east no way into bob's x-abc234. */
    @Test
    void aNonceLikeSuffixGivesNoRightToANameOnTheUplinkNorOnADirectLink() throws Exception {
        try (DirectFixture fixture = new DirectFixture(keys)) {
            Security mallory = as(keys, "mallory");
            String bobs = registerExactly(fixture.registryUrl(), as(keys, "bob"), "x-abc234", "lan");
            assertEquals("x-abc234@lan", bobs);
            String sentence = "FORBIDDEN \"mallory\" may not go by the name \"x-abc234@lan\": another identity"
                    + " registered it";
            Security west = as(keys, "west");
            try (Gateway pc = Gateway.builder("lan", new RecordingRouter()).security(west).registry(RegistryClient
                    .builder(fixture.registryUrl()).security(west).build()).build().start()) {
                refusedAsAnother(hello(mallory, pc.address().getPort(), bobs, "lan", "y-bbbbbb@east"), sentence);
            }
            LinkedBlockingQueue<Incoming> at = new LinkedBlockingQueue<>();
            try (Consumer inbox = fixture.consumer("inbox").security(as(keys, "alice")).onMessage(at::add).build()) {
                int port = RegistryClient.builder(fixture.registryUrl()).security(mallory).build().lookup(inbox.name())
                        .port();
                refusedAsAnother(hello(mallory, port, bobs, inbox.name(), inbox.name()), sentence);
                assertNull(at.poll(300, TimeUnit.MILLISECONDS), "mallory's message was delivered as bob's");
                // mallory under her own registration goes in
                String own = registerExactly(fixture.registryUrl(), mallory, "x", "lan");
                List<Message> got = hello(mallory, port, own, inbox.name(), inbox.name());
                assertEquals(Command.WELCOME, got.get(0).command(), got.toString());
                assertEquals(own, at.poll(10, TimeUnit.SECONDS).from());
            }
        }
    }

    /** A name nobody registered is nobody's, not the one whose rules its shape would match. */
    @Test
    void aDirectLinkMayNotGoByANameNobodyRegistered() throws Exception {
        try (DirectFixture fixture = new DirectFixture(keys)) {
            Security alice = as(keys, "alice");
            LinkedBlockingQueue<Incoming> at = new LinkedBlockingQueue<>();
            try (Consumer inbox = fixture.consumer("inbox").security(as(keys, "bob")).onMessage(at::add).build()) {
                int port = RegistryClient.builder(fixture.registryUrl()).security(alice).build().lookup(inbox.name())
                        .port();
                refusedAsAnother(hello(alice, port, "boss-aaaaaa@lan", inbox.name(), inbox.name()),
                        "FORBIDDEN \"alice\" may not go by the name \"boss-aaaaaa@lan\": no endpoint of that name is"
                                + " registered");
                assertNull(at.poll(300, TimeUnit.MILLISECONDS));
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
