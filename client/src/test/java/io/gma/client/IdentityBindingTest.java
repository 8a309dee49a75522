package io.gma.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.gma.registry.api.RegistryClient;
import io.gma.security.Security;
import io.gma.wire.Command;
import io.gma.wire.Message;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
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

    private static Security as(Path keys, String identity) {
        return TestKeys.security(keys, identity, Probes.NAME_RULES);
    }

    /** The case: a suffix that looks like a nonce makes mallory's x@east no way into bob's x-abc234. */
    @Test
    void aNonceLikeSuffixGivesNoRightToANameOnADirectLink() throws Exception {
        try (DirectFixture fixture = new DirectFixture(keys)) {
            Security mallory = as(keys, "mallory");
            String bobs = Probes.registerExactly(fixture.registryUrl(), as(keys, "bob"), "x-abc234", "lan");
            assertEquals("x-abc234@lan", bobs);
            String sentence = "FORBIDDEN \"mallory\" may not go by the name \"x-abc234@lan\": another identity"
                    + " registered it";
            // the same on an uplink: UplinkIdentityTest, in the PC servlet's module
            LinkedBlockingQueue<Incoming> at = new LinkedBlockingQueue<>();
            try (Consumer inbox = fixture.consumer("inbox").security(as(keys, "alice")).onMessage(at::add).build()) {
                int port = RegistryClient.builder(fixture.registryUrl()).security(mallory).build().lookup(inbox.name())
                        .port();
                Probes.refusedAsAnother(Probes.hello(mallory, port, bobs, inbox.name(), inbox.name()), sentence);
                assertNull(at.poll(300, TimeUnit.MILLISECONDS), "mallory's message was delivered as bob's");
                // mallory under her own registration goes in
                String own = Probes.registerExactly(fixture.registryUrl(), mallory, "x", "lan");
                List<Message> got = Probes.hello(mallory, port, own, inbox.name(), inbox.name());
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
                Probes.refusedAsAnother(Probes.hello(alice, port, "boss-aaaaaa@lan", inbox.name(), inbox.name()),
                        "FORBIDDEN \"alice\" may not go by the name \"boss-aaaaaa@lan\": no endpoint of that name is"
                                + " registered");
                assertNull(at.poll(300, TimeUnit.MILLISECONDS));
            }
        }
    }
}
