package io.gma.registry;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gma.registry.api.Kind;
import io.gma.registry.api.Lease;
import io.gma.registry.api.Registration;
import io.gma.registry.api.RegistryClient;
import io.gma.registry.api.RegistryException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A client given several registry URLs: the order it tries them in, the rest of one that failed, which failures
 * go on to the next registry and which do not, and that a registration sent on is not made twice. On real
 * sockets: a live registry (H2 in memory) behind a {@link FakeRegistry} that fails as each test needs.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class RegistryFailoverTest {
    private Registry live;
    private FakeRegistry fake;

    @BeforeEach
    void start() throws Exception {
        live = Registry.builder().port(0).build().start();
    }

    @AfterEach
    void stop() throws Exception {
        if (fake != null) {
            fake.close();
        }
        live.close();
    }

    private static Registration.Builder producer(String label) {
        return Registration.builder(Kind.PRODUCER, label, "lan").host("127.0.0.1").port(7000);
    }

    private static int freePort() throws Exception {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }

    @Test
    void goesOnToTheNextRegistryWhenOneGivesNoAnswerAndRestsTheOneThatFailed() throws Exception {
        fake = FakeRegistry.dropping();
        RegistryClient client = RegistryClient.create(fake.url() + "," + live.url());

        Lease lease = client.register(producer("cpu").build());
        int tried = fake.requests();
        assertTrue(tried >= 1, "the first URL is tried first");
        assertEquals("cpu", client.lookup(lease.name()).label(), "the next registry answered");
        client.renew(lease.name());
        assertEquals(tried, fake.requests(), "a registry that failed rests: calls go to the next meanwhile");

        // its first rest is 2 s: then it is tried first again, and the call still ends at the live one
        await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(200)).until(() -> {
            client.renew(lease.name());
            return fake.requests() > tried;
        });
    }

    @Test
    void goesOnWhenARegistryAnswersUnavailable() throws Exception {
        fake = FakeRegistry.answering(503, "UNAVAILABLE");
        RegistryClient client = RegistryClient.create(fake.url() + "," + live.url());

        String name = client.register(producer("cpu").build()).name();

        assertEquals(name, client.lookup(name).name());
        assertEquals(1, fake.requests(), "503 went on to the next; then the first rested");
    }

    @Test
    void anAnswerOfTheDatabaseIsNotSentOn() throws Exception {
        String name = RegistryClient.create(live.url()).register(producer("svc").exact(true).build()).name();
        for (int status : new int[] {500, 404, 403}) {
            String code = status == 500 ? "INTERNAL" : status == 404 ? "NOT_FOUND" : "FORBIDDEN";
            try (FakeRegistry refusing = FakeRegistry.answering(status, code)) {
                RegistryClient client = RegistryClient.create(refusing.url() + "," + live.url());

                RegistryException e = assertThrows(RegistryException.class, () -> client.lookup(name));

                assertEquals(status, e.status(), "the next registry, which knows " + name + ", was not asked");
                assertEquals(code, e.code());
                assertEquals("the fake answers " + status, e.getMessage());
                assertEquals(1, refusing.requests());
            }
        }
    }

    @Test
    void failsNamingEveryRegistryWhenNoneAnswers() throws Exception {
        int first = freePort();
        int second = freePort();
        RegistryClient client = RegistryClient.builder("http://127.0.0.1:" + first + ", http://127.0.0.1:" + second)
                .timeout(Duration.ofSeconds(2)).build();

        RegistryException e = assertThrows(RegistryException.class, () -> client.lookup("a@b"));

        assertEquals(0, e.status());
        assertEquals("UNREACHABLE", e.code());
        String m = e.getMessage();
        assertTrue(m.startsWith("none of the 2 registries answered: registry at http://127.0.0.1:" + first
                + "/registry/v1 did not answer GET /registry/v1/endpoints/a@b: nothing listens at 127.0.0.1:" + first
                + " ("), m);
        assertTrue(m.contains("; registry at http://127.0.0.1:" + second + "/registry/v1 did not answer GET"
                + " /registry/v1/endpoints/a@b: nothing listens at 127.0.0.1:" + second + " ("), m);
        assertEquals(1, e.getSuppressed().length, "the first registry's failure");

        // both rest now, and are still both tried: a call fails only when every registry has failed it
        RegistryException again = assertThrows(RegistryException.class, () -> client.lookup("a@b"));
        assertTrue(again.getMessage().startsWith("none of the 2 registries answered"), again.getMessage());
    }

    @Test
    void aRegistrationStoredByARegistryThatGaveNoAnswerIsNotMadeTwice() throws Exception {
        fake = FakeRegistry.forwardingThenDropping(live.url());
        RegistryClient client = RegistryClient.create(fake.url() + "," + live.url());

        Lease exact = client.register(producer("svc").exact(true).build());
        Lease nonce = client.register(producer("cpu").build());

        assertEquals("svc@lan", exact.name(), "the stored name is taken over from this call's own registration");
        assertTrue(fake.requests() >= 1, "the first registry stored it: " + fake.requests());
        RegistryClient direct = RegistryClient.create(live.url());
        assertEquals(List.of(List.of(nonce.name())),
                direct.query("SELECT name FROM endpoints WHERE label = 'cpu'").rows(),
                "one registration, under the name the client chose and both registries were asked for");
        assertEquals(1L, ((Number) direct.query("SELECT COUNT(*) FROM endpoints WHERE label = 'svc'").rows()
                .get(0).get(0)).longValue());
    }

    @Test
    void aNameHeldElsewhereStaysTakenAfterAFailover() throws Exception {
        RegistryClient direct = RegistryClient.create(live.url());
        direct.register(producer("busy").exact(true).port(7001).build());
        fake = FakeRegistry.dropping();
        RegistryClient client = RegistryClient.create(fake.url() + "," + live.url());

        RegistryException e = assertThrows(RegistryException.class,
                () -> client.register(producer("busy").exact(true).port(7002).build()));

        assertEquals(409, e.status());
        assertEquals("name \"busy@lan\" is taken by a live endpoint", e.getMessage());
        assertEquals(7001, direct.lookup("busy@lan").port(), "the holder at another address keeps it");
    }

    @Test
    void refusesAnEmptyEntryOrAURLGivenTwice() {
        IllegalArgumentException empty = assertThrows(IllegalArgumentException.class,
                () -> RegistryClient.builder(live.url() + ",,http://127.0.0.1:1"));
        assertEquals("registry URLs \"" + live.url() + ",,http://127.0.0.1:1\": entry 2 is empty (give base URLs"
                + " separated by commas)", empty.getMessage());
        IllegalArgumentException twice = assertThrows(IllegalArgumentException.class,
                () -> RegistryClient.builder(live.url() + "," + live.url()));
        assertEquals("registry URLs \"" + live.url() + "," + live.url() + "\": " + live.url() + " is given twice",
                twice.getMessage());
        IllegalArgumentException notUrl = assertThrows(IllegalArgumentException.class,
                () -> RegistryClient.builder(live.url() + ",ftp://x"));
        assertEquals("registry URL \"ftp://x\" is not an http or https URL", notUrl.getMessage());
    }
}
