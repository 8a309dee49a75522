package io.gma.client;

import io.gma.registry.Registry;
import java.nio.file.Path;
import java.time.Duration;

/**
 * Both endpoints in one domain, talking over a direct TCP link; a real registry on an ephemeral port: plaintext,
 * or over TLS with test keys (for endpoints with security, which show their credentials over TLS only).
 */
final class DirectFixture implements Fixture {
    private final Registry registry;
    private final boolean owned;

    DirectFixture() throws Exception {
        registry = Registry.builder().port(0).build().start();
        owned = true;
    }

    /** With a registry over TLS, with the keys in {@code keys} and rules that allow everything. */
    DirectFixture(Path keys) throws Exception {
        registry = TestKeys.registry(keys);
        owned = true;
    }

    /** With {@code registry}, which the caller closes. */
    DirectFixture(Registry registry) {
        this.registry = registry;
        owned = false;
    }

    String registryUrl() {
        return registry.url();
    }

    @Override
    public EndpointBuilder<Producer> producer(String label) {
        return Producer.builder().registry(registry.url()).domain("lan").label(label)
                .requestTimeout(Duration.ofSeconds(10));
    }

    @Override
    public EndpointBuilder<Consumer> consumer(String label) {
        return Consumer.builder().registry(registry.url()).domain("lan").label(label)
                .requestTimeout(Duration.ofSeconds(10));
    }

    @Override
    public void close() throws Exception {
        if (owned) {
            registry.close();
        }
    }
}
