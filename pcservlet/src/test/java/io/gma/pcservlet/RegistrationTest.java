package io.gma.pcservlet;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.gma.registry.Registry;
import io.gma.registry.api.DomainInfo;
import io.gma.registry.api.RegistryClient;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** A PC servlet registers its domain, with its URL or its via, and keeps it registered past its lease. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class RegistrationTest {
    @Test
    void theDomainStaysRegisteredPastItsLease() throws Exception {
        try (Registry registry = Registry.builder().port(0).build().start();
                PcServer hub = PcServer.builder("hub", registry.url()).lease(Duration.ofSeconds(1)).start();
                PcServer edge = PcServer.builder("edge", registry.url()).via("hub").lease(Duration.ofSeconds(1))
                        .start()) {
            RegistryClient client = RegistryClient.create(registry.url());
            // found all along, past two leases: only renewal keeps them (a look-up that fails ends the wait)
            await().pollDelay(Duration.ZERO).during(Duration.ofMillis(2_500)).atMost(Duration.ofSeconds(5))
                    .until(() -> client.lookupDomain("hub") != null && client.lookupDomain("edge") != null);
            DomainInfo h = client.lookupDomain("hub");
            assertEquals(hub.url(), h.url());
            assertNull(h.via());
            DomainInfo e = client.lookupDomain("edge");
            assertNull(e.url(), "an outbound-only domain registers no URL");
            assertEquals("hub", e.via());
            assertEquals("edge", edge.domain());
        }
    }
}
