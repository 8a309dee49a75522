package io.gma.pcservlet;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gma.client.Consumer;
import io.gma.client.EndpointBuilder;
import io.gma.client.EndpointException;
import io.gma.client.Producer;
import io.gma.client.SniffingListener;
import io.gma.registry.api.RegistryException;
import io.gma.security.Keys;
import io.gma.security.Security;
import io.gma.security.Tls;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A sniffing listener stands where the registry would be, behind an {@code http://} URL. A caller with security
 * on (an endpoint, a PC servlet) refuses that URL before it connects: the listener sees no connection, so no
 * {@code Authorization} header and no token, and the caller fails with a sentence naming the URL. The same URL
 * without security is called, and the listener sees the request: it would see a credential too.
 *
 * <p>The listener is checked before the caller's failure, so that a leak fails with what leaked.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class PlaintextRegistryUrlTest {
    /** Long enough for a call that was going to be made anyway to reach the listener. */
    private static final Duration QUIET = Duration.ofMillis(500);
    /** A control's wait for the bytes a plaintext caller sends. */
    private static final Duration ARRIVAL = Duration.ofSeconds(10);

    @TempDir
    static Path keys;
    private SniffingListener sniffer;

    @BeforeAll
    static void makeKeys() throws IOException {
        Keys.make(keys, List.of("localhost", "127.0.0.1"), List.of("producer"));
        Keys.addIdentities(keys, List.of("east"));
    }

    @BeforeEach
    void listen() throws IOException {
        sniffer = SniffingListener.start();
    }

    @AfterEach
    void stopListening() throws Exception {
        sniffer.close();
    }

    private static Security secure(String identity) throws IOException {
        return Security.fromDirectory(keys, identity, Tls.ClientAuth.WANT).build();
    }

    /** What RegistryClient.Builder.build() says of the sniffer's URL when security is on. */
    private String refusal() {
        return "registry URL " + sniffer.url() + "/registry/v1: expected scheme 'https' but was 'http' (security is"
                + " on: credentials must not cross the network in plaintext)";
    }

    private <T> EndpointBuilder<T> endpoint(EndpointBuilder<T> b, Security security) {
        return b.registry(sniffer.url()).domain("east").label("sniffed").security(security);
    }

    @Test
    void aSecuredProducerRefusesAnHttpRegistryBeforeConnecting() throws Exception {
        Exception e = assertThrows(Exception.class,
                () -> endpoint(Producer.builder(), secure("producer")).build().close());
        sniffer.assertNothingReceived(QUIET);
        assertInstanceOf(IllegalArgumentException.class, e);
        assertEquals(refusal(), e.getMessage());
    }

    @Test
    void aSecuredConsumerRefusesAnHttpRegistryBeforeConnecting() throws Exception {
        Exception e = assertThrows(Exception.class,
                () -> endpoint(Consumer.builder(), secure("producer")).build().close());
        sniffer.assertNothingReceived(QUIET);
        assertInstanceOf(IllegalArgumentException.class, e);
        assertEquals(refusal(), e.getMessage());
    }

    @Test
    void aSecuredPcServletRefusesAnHttpRegistryBeforeConnecting() throws Exception {
        Exception e = assertThrows(Exception.class,
                () -> PcServer.builder("east", sniffer.url()).security(secure("east")).start().close());
        sniffer.assertNothingReceived(QUIET);
        assertInstanceOf(IllegalArgumentException.class, e);
        assertEquals(refusal(), e.getMessage());
    }

    /** Other domains would post their credentials to such a URL: a secured PC servlet does not register one. */
    @Test
    void aSecuredPcServletRefusesToRegisterAnHttpUrlForItsDomain() throws Exception {
        Exception e = assertThrows(Exception.class, () -> PcServer.builder("east", "https://127.0.0.1:1")
                .publicUrl(sniffer.url()).security(secure("east")).start().close());
        assertInstanceOf(IllegalArgumentException.class, e);
        assertEquals("publicUrl " + sniffer.url() + ": expected scheme 'https' but was 'http' (security is on:"
                + " credentials must not cross the network in plaintext)", e.getMessage());
    }

    @Test
    void anInsecureEndpointCallsTheSameUrlAndTheListenerSeesIt() throws Exception {
        EndpointException e = assertThrows(EndpointException.class,
                () -> endpoint(Producer.builder(), Security.insecure()).build().close());
        assertTrue(e.getMessage().contains("registry at " + sniffer.url() + "/registry/v1 did not answer"),
                e.getMessage());
        assertTrue(sniffer.awaitReceived("POST /registry/v1/endpoints HTTP/1.1", ARRIVAL), sniffer.received());
        assertTrue(sniffer.connections() > 0);
        assertFalse(sniffer.received().contains("Authorization"), "insecure: no credentials to show");
    }

    @Test
    void anInsecurePcServletCallsTheSameUrlAndTheListenerSeesIt() throws Exception {
        RegistryException e = assertThrows(RegistryException.class,
                () -> PcServer.builder("east", sniffer.url()).security(Security.insecure()).start().close());
        assertTrue(e.getMessage().startsWith("registry at " + sniffer.url() + "/registry/v1 did not answer POST"
                + " /registry/v1/domains"), e.getMessage());
        assertTrue(sniffer.awaitReceived("POST /registry/v1/domains HTTP/1.1", ARRIVAL), sniffer.received());
        assertTrue(sniffer.connections() > 0);
    }
}
