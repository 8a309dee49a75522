package io.gma.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.gma.registry.Registry;
import io.gma.registry.api.RegistryClient;
import io.gma.registry.api.RegistryException;
import java.io.IOException;
import java.net.ServerSocket;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The registry, in memory, restarted under two endpoints of one domain: it knows neither until each renews (a
 * third of the 30 s lease). Meanwhile the registry's "not registered" is not final for an endpoint that
 * registered before the restart (RegistryGrace): messages for a peer it has no link to yet wait, and go once the
 * peer registers again, instead of failing with NO_ROUTE. (That a name the registry never knew still fails at
 * once is in the contract suite: vanishedSubscriberIsDropped, deliveredFailsWithNoRouteForAnEndpointThatIsGone.)
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class RegistryRestartTest {
    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }

    @Test
    void messagesForAPeerTheRestartedRegistryDoesNotKnowYetWaitForIt() throws Exception {
        int port = freePort();
        Registry registry = Registry.builder().port(port).build().start();
        String url = registry.url();
        Set<Long> got = ConcurrentHashMap.newKeySet();
        try (Consumer sink = Consumer.builder().registry(url).domain("lan").label("sink")
                .onMessage(m -> got.add(ByteBuffer.wrap(m.data()).getLong())).build();
                Producer source = Producer.builder().registry(url).domain("lan").label("source").build()) {
            // a deliberate pause: the registry's uptime is in whole seconds, and a start within about a second of
            // the endpoints' registration reads as the start they registered with
            Thread.sleep(1_500);
            registry.close();
            registry = Registry.builder().port(port).build().start();
            RegistryClient lookups = RegistryClient.create(url);
            assertThrows(RegistryException.class, () -> lookups.lookup(sink.name()), "not registered again yet");
            List<Sent> sent = new ArrayList<>();
            for (long n = 1; n <= 100; n++) {
                sent.add(source.send(sink.name(), ByteBuffer.allocate(16).putLong(n).array()));
            }
            for (Sent s : sent) {
                s.acknowledged().get(30, TimeUnit.SECONDS); // NO_ROUTE would fail it
            }
            assertEquals(100, got.size());
            lookups.lookup(sink.name()); // registered again, at its renewal
        } finally {
            registry.close();
        }
    }
}
