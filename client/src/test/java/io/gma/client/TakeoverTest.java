package io.gma.client;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gma.registry.api.Kind;
import io.gma.registry.api.Registration;
import io.gma.registry.api.RegistryClient;
import io.gma.registry.api.RegistryException;
import io.gma.security.Security;
import io.gma.wire.ErrorCode;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * An endpoint restarted under its exact name takes the name over at once from its crashed run, whose lease has
 * not run out ({@link EndpointBuilder#takeOver}); a live holder is never displaced, and another identity never
 * takes a name over. A real registry, real endpoints, and a JVM killed with SIGKILL.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class TakeoverTest {
    /** Far longer than the test waits: without a takeover, the name would stay the crashed run's. */
    private static final Duration LEASE = Duration.ofSeconds(60);

    @Test
    void aConsumerKilledAndStartedAgainTakesItsNameBackAtOnceAndReceivesAgain() throws Exception {
        try (DirectFixture f = new DirectFixture(); Producer p = f.producer("source").build()) {
            String sink;
            try (ChildJvm child = ChildJvm.start(List.of("-Xmx64m"), ExactSinkMain.class.getName(),
                    List.of(f.registryUrl(), "sink", p.name(), "run1"))) {
                sink = child.await(Pattern.compile("ready (.*)"), 30_000).group(1);
                assertEquals("sink@lan", sink);
                // acknowledged before the kill: else it goes out again to the next run, which cannot know it had it
                p.publish("before".getBytes(UTF_8)).get(0).acknowledged().get(10, TimeUnit.SECONDS);
                child.await(Pattern.compile("got before"), 10_000);
                child.kill();
            }
            int oldPort = f.portOf(sink);

            // without takeOver: refused while the dead run's lease lasts, saying so and what to do
            EndpointException held = assertThrows(EndpointException.class,
                    () -> f.consumer("sink").exactLabel(true).lease(LEASE).build());
            assertEquals(ErrorCode.FORBIDDEN, held.code());
            assertTrue(held.getMessage().startsWith("register sink@lan: the registry answered 409 CONFLICT (name"
                    + " \"sink@lan\" is taken by a live endpoint; registered at 127.0.0.1:" + oldPort + ", its lease"
                    + " ending by "), held.getMessage());
            assertTrue(held.getMessage().endsWith("build with takeOver(true) to take the name back at once once it"
                    + " no longer answers, or wait until its lease ends; otherwise give this endpoint another label"),
                    held.getMessage());
            assertEquals(409, ((RegistryException) held.getCause()).status());

            LinkedBlockingQueue<String> got = new LinkedBlockingQueue<>();
            long started = System.nanoTime();
            try (Consumer again = f.consumer("sink").exactLabel(true).takeOver(true).lease(LEASE)
                    .onMessage(m -> got.add(new String(m.data(), UTF_8))).build()) {
                long tookMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
                assertTrue(tookMillis < 10_000, "the takeover took " + tookMillis + " ms");
                assertEquals(sink, again.name());
                assertTrue(f.portOf(sink) != oldPort, "the registry still has the dead run's port");
                // its subscription anew, with another filter: numbered above the dead run's, it is not taken
                // for a duplicate of the dead run's SUBSCRIBE
                again.subscribe(p.name(), "run2").acknowledged().get(10, TimeUnit.SECONDS);
                await().atMost(Duration.ofSeconds(10)).until(() -> "run2".equals(p.subscribers().get(sink)));
                p.publish("after".getBytes(UTF_8), "run2"::equals);
                assertEquals("after", got.poll(15, TimeUnit.SECONDS));
                p.send(sink, "direct".getBytes(UTF_8)).acknowledged().get(10, TimeUnit.SECONDS);
                assertEquals("direct", got.poll(10, TimeUnit.SECONDS));
            }
        }
    }

    @Test
    void aLiveHolderOfTheNameIsNotDisplaced() throws Exception {
        LinkedBlockingQueue<String> got = new LinkedBlockingQueue<>();
        try (DirectFixture f = new DirectFixture(); Producer p = f.producer("source").build();
                Consumer live = f.consumer("busy").exactLabel(true).onMessage(m -> got.add(new String(m.data(),
                        UTF_8))).build()) {
            int port = f.portOf(live.name());
            EndpointException refused = assertThrows(EndpointException.class,
                    () -> f.consumer("busy").exactLabel(true).takeOver(true).build());
            assertEquals(ErrorCode.FORBIDDEN, refused.code());
            assertEquals("register busy@lan: the name is held by the endpoint registered at 127.0.0.1:" + port
                    + ", which answered as busy@lan; takeOver replaces only an endpoint that no longer"
                    + " answers, and a second instance does not displace a live one: stop that one first, or give"
                    + " this one another label", refused.getMessage());
            assertEquals(port, f.portOf(live.name()));
            p.send(live.name(), "still mine".getBytes(UTF_8)).acknowledged().get(10, TimeUnit.SECONDS);
            assertEquals("still mine", got.poll(10, TimeUnit.SECONDS));
        }
    }

    @Test
    void withSecurityOnlyTheIdentityThatRegisteredANameTakesItOver() throws Exception {
        Path keys = TestKeys.main();
        Security alice = TestKeys.security(keys, "alice", "send * *");
        Security bob = TestKeys.security(keys, "bob", "send * *");
        try (DirectFixture f = new DirectFixture(keys)) {
            // alice's endpoint registered the name and is gone: nothing listens at its port any more
            int dead;
            try (ServerSocket s = new ServerSocket(0)) {
                dead = s.getLocalPort();
            }
            RegistryClient.builder(f.registryUrl()).security(alice).build().register(Registration.builder(
                    Kind.CONSUMER, "vault", "lan").exact(true).port(dead).lease(LEASE).build());
            EndpointException refused = assertThrows(EndpointException.class,
                    () -> f.consumer("vault").exactLabel(true).takeOver(true).security(bob).build());
            assertEquals(ErrorCode.FORBIDDEN, refused.code());
            assertEquals("register vault@lan: the registry refused to take the name over from 127.0.0.1:" + dead
                    + " (409 CONFLICT: name \"vault@lan\" is held by a live endpoint of another identity than"
                    + " \"bob\": only the identity that registered a name may take it over)", refused.getMessage());
            assertEquals(dead, f.portOf("vault@lan"));

            LinkedBlockingQueue<String> got = new LinkedBlockingQueue<>();
            try (Consumer back = f.consumer("vault").exactLabel(true).takeOver(true).security(alice)
                    .onMessage(m -> got.add(new String(m.data(), UTF_8))).build();
                    Producer p = f.producer("teller").security(bob).build()) {
                assertEquals("vault@lan", back.name());
                p.send(back.name(), "in".getBytes(UTF_8)).acknowledged().get(10, TimeUnit.SECONDS);
                assertEquals("in", got.poll(10, TimeUnit.SECONDS));
                // and alice's live endpoint, asked over TLS, answers as the name: a second one stays out
                EndpointException live = assertThrows(EndpointException.class,
                        () -> f.consumer("vault").exactLabel(true).takeOver(true).security(alice).build());
                assertTrue(live.getMessage().contains(", which answered as vault@lan; takeOver replaces"
                        + " only an endpoint that no longer answers"), live.getMessage());
            }
        }
    }
}
