package io.gma.client;

/**
 * How the contract suite makes its endpoints: the transport under test. The direct fixture puts both in one
 * domain; the PC servlet's fixture puts them in two domains joined by the HTTP tunnel.
 */
interface Fixture extends AutoCloseable {
    EndpointBuilder<Producer> producer(String label);

    EndpointBuilder<Consumer> consumer(String label);

    /**
     * Whether a send's future completes when the destination acknowledges it (a direct link), rather than when
     * a PC servlet on the way takes it (the HTTP tunnel, where later failures come back as ERROR messages).
     */
    default boolean acknowledgedByDestination() {
        return true;
    }

    @Override
    void close() throws Exception;
}
