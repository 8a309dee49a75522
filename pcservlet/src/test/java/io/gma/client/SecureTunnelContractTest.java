package io.gma.client;

import java.nio.file.Path;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.io.TempDir;

/**
 * The contract suite across two domains with security on every hop: TLS and signed tokens on the uplinks, HTTPS
 * and signed tokens between the PC servlets and to the registry, and the rules of {@link TunnelFixture#RULES}.
 */
class SecureTunnelContractTest extends ContractSuite {
    @TempDir
    static Path keys;

    @BeforeAll
    static void makeKeys() throws Exception {
        TunnelFixture.makeKeys(keys);
    }

    @Override
    Fixture fixture() throws Exception {
        return new TunnelFixture(TunnelFixture.Firewalls.NONE, keys);
    }
}
