package io.gma.client;

/**
 * The contract suite with security on every hop (the keys and rules of {@link SecureTunnelContractTest}) and
 * the producer's domain outbound-only behind hub: hub posts on east's behalf, which the receiving PC servlet
 * must take as hub relaying for east, not as a sender forging another domain.
 */
class SecureRelayedContractTest extends SecureTunnelContractTest {
    @Override
    Fixture fixture() throws Exception {
        return new TunnelFixture(TunnelFixture.Firewalls.EAST, keys);
    }
}
