package io.gma.client;

import io.gma.registry.Registry;
import java.time.Duration;

/** Both endpoints in one domain, talking over a direct TCP link; a real registry on an ephemeral port. */
final class DirectFixture implements Fixture {
    private final Registry registry;

    DirectFixture() throws Exception {
        registry = Registry.builder().port(0).build().start();
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
        registry.close();
    }
}
