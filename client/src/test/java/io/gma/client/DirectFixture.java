package io.gma.client;

import io.gma.registry.Registry;
import io.gma.registry.api.RegistryClient;
import java.nio.file.Path;
import java.time.Duration;

/**
 * Both endpoints in one domain, talking over a direct TCP link; a real registry on an ephemeral port: plaintext,
 * or over TLS with test keys (for endpoints with security, which show their credentials over TLS only). Public
 * for the PC servlet's tests, in this module's test jar.
 */
public final class DirectFixture implements Fixture {
    private final Registry registry;
    private final boolean owned;
    /** A client that may look every endpoint up: plaintext, or alice's over TLS. */
    private final RegistryClient lookups;

    public DirectFixture() throws Exception {
        registry = Registry.builder().port(0).build().start();
        owned = true;
        lookups = RegistryClient.create(registry.url());
    }

    /** With a registry over TLS, with the keys in {@code keys} and rules that allow everything. */
    public DirectFixture(Path keys) throws Exception {
        registry = TestKeys.registry(keys);
        owned = true;
        lookups = lookupsOf(registry, keys);
    }

    private static RegistryClient lookupsOf(Registry registry, Path keys) {
        return RegistryClient.builder(registry.url()).security(TestKeys.security(keys, "alice", "")).build();
    }

    /** With {@code registry}, over TLS with the keys in {@code keys}, which the caller closes. */
    DirectFixture(Registry registry, Path keys) {
        this.registry = registry;
        owned = false;
        lookups = lookupsOf(registry, keys);
    }

    public String registryUrl() {
        return registry.url();
    }

    /** The port {@code endpoint} listens on, as the registry says. */
    int portOf(String endpoint) throws Exception {
        return lookups.lookup(endpoint).port();
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
