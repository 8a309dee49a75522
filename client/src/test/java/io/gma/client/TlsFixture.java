package io.gma.client;

import io.gma.registry.Registry;
import io.gma.security.Security;
import java.time.Duration;

/**
 * Both endpoints in one domain over direct TLS links, each proving who it is with a token (the producer is
 * alice, the consumer bob), with rules that let both send anywhere.
 */
final class TlsFixture implements Fixture {
    static final String RULES = "send alice,bob *\nregister alice,bob *";
    private final Registry registry;
    private final Security alice = TestKeys.security(TestKeys.main(), "alice", RULES);
    private final Security bob = TestKeys.security(TestKeys.main(), "bob", RULES);

    TlsFixture() throws Exception {
        registry = TestKeys.registry(TestKeys.main());
    }

    @Override
    public EndpointBuilder<Producer> producer(String label) {
        return Producer.builder().registry(registry.url()).domain("lan").label(label).security(alice)
                .requestTimeout(Duration.ofSeconds(10));
    }

    @Override
    public EndpointBuilder<Consumer> consumer(String label) {
        return Consumer.builder().registry(registry.url()).domain("lan").label(label).security(bob)
                .requestTimeout(Duration.ofSeconds(10));
    }

    @Override
    public void close() throws Exception {
        registry.close();
    }
}
