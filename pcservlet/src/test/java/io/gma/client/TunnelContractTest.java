package io.gma.client;

/** The contract suite again, the producer and the consumer in two domains joined by their PC servlets. */
class TunnelContractTest extends ContractSuite {
    @Override
    Fixture fixture() throws Exception {
        return new TunnelFixture(TunnelFixture.Firewalls.NONE);
    }
}
