package io.gma.registry;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.gma.registry.api.EndpointInfo;
import io.gma.registry.api.Lease;
import io.gma.registry.api.RegistryClient;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class H2FileStoreTest extends StoreContract {
    @TempDir
    static Path dir;

    @Override
    String[] jdbc() {
        // AUTO_SERVER lets the second registry of twoRegistriesOnOneDatabase open the same file
        return new String[] {"jdbc:h2:file:" + dir.resolve("gma") + ";AUTO_SERVER=TRUE", "sa", ""};
    }

    @Test
    void endpointSurvivesARestart() throws Exception {
        Lease lease = client.register(producer("durable").attribute("site", "cardiff")
                .lease(Duration.ofMinutes(5)).build());
        registry.close();
        registry = newRegistry().build().start();
        client = RegistryClient.create(registry.url());
        EndpointInfo back = client.lookup(lease.name());
        assertEquals(Map.of("site", "cardiff"), back.attributes());
        assertEquals(lease.expiresAt(), back.expiresAt());
        client.renew(lease.name());
    }
}
