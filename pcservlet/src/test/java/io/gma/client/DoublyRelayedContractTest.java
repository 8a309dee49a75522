package io.gma.client;

/** The contract suite again, both domains outbound-only (behind firewalls), talking through a third. */
class DoublyRelayedContractTest extends ContractSuite {
    @Override
    Fixture fixture() throws Exception {
        return new TunnelFixture(TunnelFixture.Firewalls.BOTH);
    }
}
