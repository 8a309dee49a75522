package io.gma.client;

import io.gma.security.Keys;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.io.TempDir;

/**
 * The contract suite across two domains with security on every hop: TLS and tokens on the uplinks, HTTPS and
 * tokens between the PC servlets and to the registry, and the rules of {@link TunnelFixture#RULES}.
 */
class SecureTunnelContractTest extends ContractSuite {
    @TempDir
    static Path keys;

    @BeforeAll
    static void makeKeys() throws Exception {
        Keys.make(keys, List.of("localhost", "127.0.0.1"), List.of("producer", "consumer"));
        Files.writeString(keys.resolve("rules"), TunnelFixture.RULES);
    }

    @Override
    Fixture fixture() throws Exception {
        return new TunnelFixture(TunnelFixture.Firewalls.NONE, keys);
    }
}
