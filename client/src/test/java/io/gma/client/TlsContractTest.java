package io.gma.client;

/** The contract suite over direct TLS links in one domain, with tokens in HELLO and rules. */
class TlsContractTest extends ContractSuite {
    @Override
    Fixture fixture() throws Exception {
        return new TlsFixture();
    }
}
