package io.gma.pcservlet;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.gma.client.DirectFixture;
import io.gma.client.Probes;
import io.gma.client.TestKeys;
import io.gma.registry.Registry;
import io.gma.registry.api.Kind;
import io.gma.registry.api.Registration;
import io.gma.registry.api.RegistryClient;
import io.gma.security.Security;
import io.gma.wire.Command;
import io.gma.wire.Message;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The name an endpoint says in HELLO on an uplink must be one its identity may be, as on a direct link (the
 * client's IdentityBindingTest): one the registry says it registered, never one inferred from its shape; with a
 * registry that records no owner, one whose registered label the PC servlet's register rules give it.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class UplinkIdentityTest {
    private final Path keys = TestKeys.main();

    private static Security as(Path keys, String identity) {
        return TestKeys.security(keys, identity, Probes.NAME_RULES);
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
            String victim = Probes.registerExactly(fixture.registryUrl(), as(keys, "bob"), "x-abc234", "lan");
            try (TestUplinks pc = TestUplinks.start("lan", new RecordingUpstream(), west, fixture.registryUrl())) {
                assertEquals(Placement.PLACED, pc.deliverAll(List.of(Message.of(Command.DATA, "y-bbbbbb@east",
                        victim, 1, "for the victim only".getBytes(UTF_8)))));
                Probes.refusedAsAnother(Probes.hello(alice, pc.port(), victim, "lan", "y-bbbbbb@east"),
                        "FORBIDDEN \"alice\" may not go by the name \"" + victim + "\": another identity"
                                + " registered it");
            }
        }
    }

    /** The case: a suffix that looks like a nonce makes mallory's x@east no way into bob's x-abc234. */
    @Test
    void aNonceLikeSuffixGivesNoRightToANameOnTheUplink() throws Exception {
        try (DirectFixture fixture = new DirectFixture(keys)) {
            Security mallory = as(keys, "mallory");
            String bobs = Probes.registerExactly(fixture.registryUrl(), as(keys, "bob"), "x-abc234", "lan");
            assertEquals("x-abc234@lan", bobs);
            String sentence = "FORBIDDEN \"mallory\" may not go by the name \"x-abc234@lan\": another identity"
                    + " registered it";
            try (TestUplinks pc = TestUplinks.start("lan", new RecordingUpstream(), as(keys, "west"),
                    fixture.registryUrl())) {
                Probes.refusedAsAnother(Probes.hello(mallory, pc.port(), bobs, "lan", "y-bbbbbb@east"), sentence);
            }
        }
    }

    /**
     * A registry that does not authenticate records every name as anonymous's, so the PC servlet falls back on
     * its own register rules, applied to the label the registry recorded: x-abc234@lan is bob's while it is the
     * exact label x-abc234, and mallory's while it is her label x with the nonce abc234.
     */
    @Test
    void withARegistryThatRecordsNoOwnerTheRegisteredLabelDecides() throws Exception {
        Security bob = as(keys, "bob");
        Security mallory = as(keys, "mallory");
        try (Registry open = Registry.builder().port(0).build().start()) {
            RegistryClient registry = RegistryClient.create(open.url());
            String exact = registry.register(Registration.builder(Kind.CONSUMER, "x-abc234", "lan").port(1)
                    .exact(true).build()).name();
            assertEquals("anonymous", registry.lookup(exact).owner());
            try (TestUplinks pc = TestUplinks.start("lan", new RecordingUpstream(), as(keys, "west"), registry)) {
                Probes.refusedAsAnother(Probes.hello(mallory, pc.port(), exact, "lan", "y-bbbbbb@east"),
                        "FORBIDDEN \"mallory\" may not go by the name \"x-abc234@lan\": no register rule lets it"
                                + " register \"x-abc234@lan\"");
                assertEquals(Command.WELCOME, Probes.helloAnswer(bob, pc.port(), exact, "lan").command());
            }
            registry.unregister(exact);

            String nonce = registry.register(Registration.builder(Kind.CONSUMER, "x", "lan").port(1)
                    .nonce("abc234").build()).name();
            assertEquals(exact, nonce, "the same name, now label x");
            // a new PC servlet: the first one remembers the first registration for 30 s
            try (TestUplinks pc = TestUplinks.start("lan", new RecordingUpstream(), as(keys, "west"), registry)) {
                Probes.refusedAsAnother(Probes.hello(bob, pc.port(), nonce, "lan", "y-bbbbbb@east"),
                        "FORBIDDEN \"bob\" may not go by the name \"x-abc234@lan\": no register rule lets it"
                                + " register \"x@lan\"");
                assertEquals(Command.WELCOME, Probes.helloAnswer(mallory, pc.port(), nonce, "lan")
                        .command());
            }
        }
    }
}
