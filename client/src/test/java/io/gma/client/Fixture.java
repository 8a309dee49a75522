package io.gma.client;

/**
 * How the contract suite makes its endpoints: the transport under test. The direct fixture puts both in one
 * domain; the PC servlet's fixture puts them in two domains joined by the HTTP tunnel.
 */
interface Fixture extends AutoCloseable {
    EndpointBuilder<Producer> producer(String label);

    EndpointBuilder<Consumer> consumer(String label);

    @Override
    void close() throws Exception;
}
