package io.gma.client;

import io.gma.security.Keys;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.io.TempDir;

/**
 * The contract suite with security on every hop and the producer's domain outbound-only behind hub: hub
 * posts on east's behalf, which the receiving PC servlet must take as hub relaying for east, not as a
 * sender forging another domain.
 */
class SecureRelayedContractTest extends ContractSuite {
    @TempDir
    static Path keys;

    @BeforeAll
    static void makeKeys() throws Exception {
        Keys.make(keys, List.of("localhost", "127.0.0.1"), List.of("producer", "consumer"));
        Files.writeString(keys.resolve("rules"), TunnelFixture.RULES);
    }

    @Override
    Fixture fixture() throws Exception {
        return new TunnelFixture(TunnelFixture.Firewalls.EAST, keys);
    }
}
