package io.gma.client;

/** The contract suite over a direct TCP link in one domain. */
class DirectContractTest extends ContractSuite {
    @Override
    Fixture fixture() throws Exception {
        return new DirectFixture();
    }
}
