package io.gma.client;

/** The contract suite again, with the producer's domain outbound-only behind a third domain that relays. */
class RelayedContractTest extends ContractSuite {
    @Override
    Fixture fixture() throws Exception {
        return new TunnelFixture(TunnelFixture.Firewalls.EAST);
    }
}
