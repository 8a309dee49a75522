package io.gma.client;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gma.registry.api.EndpointInfo;
import io.gma.registry.api.RegistryClient;
import io.gma.registry.api.RegistryException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(value = 60, unit = TimeUnit.SECONDS)
class LeaseAndOptionsTest {
    @Test
    void leaseIsRenewedAndALostOneRegistersTheSameNameAgain() throws Exception {
        try (DirectFixture f = new DirectFixture();
                Producer p = f.producer("leased").lease(Duration.ofSeconds(1)).attribute("site", "cardiff").build()) {
            RegistryClient registry = RegistryClient.create(f.registryUrl());
            Thread.sleep(2_500); // a deliberate pause, not a wait: past two leases, only renewal keeps it
            assertEquals(p.name(), registry.lookup(p.name()).name());

            registry.unregister(p.name()); // as if the registry had lost it
            EndpointInfo again = await(p.name() + " was not registered again").atMost(Duration.ofSeconds(5))
                    .pollInterval(Duration.ofMillis(100)).ignoreException(RegistryException.class)
                    .until(() -> registry.lookup(p.name()), Objects::nonNull);
            assertEquals("cardiff", again.attributes().get("site"));
        }
    }

    @Test
    void aLostLeaseOfTheLongestLabelComesBackUnderTheSameNameAndLabel() throws Exception {
        String label = "l".repeat(64);
        try (DirectFixture f = new DirectFixture();
                Producer p = f.producer(label).lease(Duration.ofSeconds(1)).build()) {
            RegistryClient registry = RegistryClient.create(f.registryUrl());
            registry.unregister(p.name()); // as if the registry had lost it
            EndpointInfo again = await(p.name() + " was not registered again").atMost(Duration.ofSeconds(5))
                    .pollInterval(Duration.ofMillis(100)).ignoreException(RegistryException.class)
                    .until(() -> registry.lookup(p.name()), Objects::nonNull);
            assertEquals(label, again.label());
        }
    }

    @Test
    void queryReturnsRows() throws Exception {
        try (DirectFixture f = new DirectFixture();
                Producer p = f.producer("cpu").attribute("metric", "load").build();
                Consumer c = f.consumer("collector").build()) {
            assertEquals(List.of(List.of(p.name())), c.query("SELECT p.name FROM producers p JOIN attributes a"
                    + " ON a.name = p.name WHERE a.key = 'metric' AND a.value = 'load'").rows());
            EndpointException e = assertThrows(EndpointException.class, () -> c.query("DELETE FROM endpoints"));
            assertTrue(e.getMessage().contains("only SELECT is allowed, and this is DELETE"), e.getMessage());
        }
    }

    @Test
    void handlerRunsOnTheGivenExecutorAndMayBlockThere() throws Exception {
        ExecutorService pool = Executors.newSingleThreadExecutor(r -> new Thread(r, "app-handler"));
        LinkedBlockingQueue<String> threads = new LinkedBlockingQueue<>();
        try (DirectFixture f = new DirectFixture();
                Producer echo = f.producer("echo").onMessage(m -> m.reply(m.data())).build();
                Consumer c = f.consumer("c").executor(pool).onMessage(m -> {
                    threads.add(Thread.currentThread().getName());
                }).build();
                Producer asker = f.producer("asker").executor(pool).onMessage(m -> {
                    // blocking request from a handler: allowed on an executor thread
                    threads.add(new String(c.request(echo.name(), m.data(), Duration.ofSeconds(5))));
                }).build()) {
            c.send(asker.name(), "hi".getBytes()).acknowledged().get(5, TimeUnit.SECONDS);
            asker.send(c.name(), "x".getBytes());
            java.util.Set<String> seen = new java.util.HashSet<>();
            seen.add(threads.poll(5, TimeUnit.SECONDS));
            seen.add(threads.poll(5, TimeUnit.SECONDS));
            assertEquals(java.util.Set.of("app-handler", "hi"), seen);
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void blockingRequestIsRefusedOnAnIoThread() throws Exception {
        LinkedBlockingQueue<Throwable> refused = new LinkedBlockingQueue<>();
        try (DirectFixture f = new DirectFixture();
                Producer echo = f.producer("echo").onMessage(m -> m.reply(m.data())).build()) {
            Consumer[] self = new Consumer[1];
            try (Consumer c = f.consumer("c").onMessage(m -> {
                try {
                    self[0].request(echo.name(), m.data(), Duration.ofSeconds(1));
                } catch (IllegalStateException e) {
                    refused.add(e);
                }
            }).build()) {
                self[0] = c;
                echo.send(c.name(), "go".getBytes());
                Throwable e = refused.poll(5, TimeUnit.SECONDS);
                assertTrue(e != null && e.getMessage().startsWith("request() would block this link's event loop"),
                        String.valueOf(e));
            }
        }
    }

    @Test
    void builderRefusesBadValuesNamingThem() {
        assertEquals("maxQueuedBytes 10 is outside 1024..1073741824", assertThrows(IllegalArgumentException.class,
                () -> Producer.builder().maxQueuedBytes(10)).getMessage());
        assertEquals("label \"a b\" is not 1..64 of [A-Za-z0-9._-]", assertThrows(IllegalArgumentException.class,
                () -> Producer.builder().label("a b")).getMessage());
        assertEquals("pingInterval PT0.001S is outside 10 ms..1 h", assertThrows(IllegalArgumentException.class,
                () -> Producer.builder().pingInterval(Duration.ofMillis(1))).getMessage());
        assertEquals("registry, domain and label are required; missing: registry domain", assertThrows(
                IllegalStateException.class, () -> Producer.builder().label("x").build()).getMessage());
        assertTrue(assertThrows(IllegalStateException.class, () -> Producer.builder().registry("http://127.0.0.1:1")
                .domain("d").label("x").host("0.0.0.0").build()).getMessage().startsWith(
                "endpoint x@d would listen on 0.0.0.0, beyond this machine, without security"));
        assertEquals("pcServlet \"localhost\" is not host:port", assertThrows(IllegalArgumentException.class,
                () -> Producer.builder().pcServlet("localhost")).getMessage());
        assertEquals("pcServlet \"[::1]:70000\": port is not 1..65535", assertThrows(IllegalArgumentException.class,
                () -> Producer.builder().pcServlet("[::1]:70000")).getMessage());
        assertEquals("::1", EndpointBuilder.hostPort("pc", "[::1]:8082").getHostString());
    }

    @Test
    void anotherDomainIsUnreachableWithoutAPcServlet() throws Exception {
        try (DirectFixture f = new DirectFixture(); Producer p = f.producer("alone").build()) {
            EndpointException e = assertThrows(EndpointException.class,
                    () -> p.send("cpu-aaaaaa@elsewhere", new byte[1]));
            assertEquals(io.gma.wire.ErrorCode.NO_ROUTE, e.code());
            assertEquals("cpu-aaaaaa@elsewhere is in domain elsewhere; " + p.name() + " has no PC servlet"
                    + " (EndpointBuilder.pcServlet, --pc on the command line) and reaches only its own domain, lan",
                    e.getMessage());
        }
    }

    @Test
    void aNameNotFoundIsLookedUpAgainByTheNextSend() throws Exception {
        String late = "late@lan"; // one String instance for every send, as a stream to one name would use
        try (DirectFixture f = new DirectFixture(); Producer p = f.producer("early").build()) {
            ExecutionException gone = assertThrows(ExecutionException.class,
                    () -> p.send(late, new byte[1]).acknowledged().get(10, TimeUnit.SECONDS));
            assertEquals(io.gma.wire.ErrorCode.NO_ROUTE, ((EndpointException) gone.getCause()).code());
            BlockingQueue<String> got = new LinkedBlockingQueue<>();
            try (Consumer c = f.consumer("late").exactLabel(true).onMessage(m -> got.add(new String(m.data(),
                    StandardCharsets.UTF_8))).build()) {
                assertEquals(late, c.name());
                p.send(late, "now".getBytes(StandardCharsets.UTF_8)).acknowledged().get(10, TimeUnit.SECONDS);
                assertEquals("now", got.poll(10, TimeUnit.SECONDS));
            }
        }
    }
}
