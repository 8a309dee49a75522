package io.gma.registry;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gma.registry.api.ColumnDeclaration;
import io.gma.registry.api.ColumnType;
import io.gma.registry.api.EndpointInfo;
import io.gma.registry.api.Kind;
import io.gma.registry.api.Lease;
import io.gma.registry.api.Publication;
import io.gma.registry.api.Registration;
import io.gma.registry.api.RegistryClient;
import io.gma.registry.api.RegistryException;
import io.gma.registry.api.TableDeclaration;
import io.gma.wire.Threads;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * What every database behind the registry must do, run once per database (H2 in memory, H2 on file,
 * PostgreSQL). Each test works in a domain of its own, so a shared database needs no cleaning.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
abstract class StoreContract {
    protected Registry registry;
    protected RegistryClient client;
    protected String domain;

    /** The database URL, user and password; the same URL on every call means the same database. */
    abstract String[] jdbc();

    Registry.Builder newRegistry() {
        String[] jdbc = jdbc();
        return Registry.builder().port(0).jdbc(jdbc[0], jdbc[1], jdbc[2]).sweepInterval(Duration.ofMillis(200));
    }

    @BeforeEach
    void start() throws Exception {
        registry = newRegistry().build().start();
        client = RegistryClient.create(registry.url());
        domain = "t" + UUID.randomUUID().toString().substring(0, 8);
    }

    @AfterEach
    void stop() throws Exception {
        if (registry != null) {
            registry.close();
        }
    }

    Registration.Builder producer(String label) {
        return Registration.builder(Kind.PRODUCER, label, domain).port(4000);
    }

    @Test
    void registersLooksUpAndQueriesThroughTheViews() throws Exception {
        Lease p = client.register(producer("cpu").attribute("site", "cardiff").build());
        Lease c = client.register(Registration.builder(Kind.CONSUMER, "collector", domain).port(4001).build());
        assertEquals("cpu", client.lookup(p.name()).label());
        assertEquals(List.of(List.of(p.name())), client.query("SELECT p.name FROM producers p JOIN attributes a"
                + " ON a.name = p.name WHERE p.domain = '" + domain + "' AND a.key = 'site' AND a.value = 'cardiff'")
                .rows());
        assertEquals(List.of(List.of(c.name())),
                client.query("SELECT name FROM consumers WHERE domain = '" + domain + "'").rows());
        assertEquals(List.of(List.of(2L)), client.query(
                "SELECT COUNT(*) AS n FROM endpoints WHERE domain = '" + domain + "'").rows().stream()
                .map(r -> List.<Object>of(((Number) r.get(0)).longValue())).toList());
    }

    @Test
    void endpointNotRenewedIsGoneWithinLeasePlusOneSecondAndRenewedOneStays() throws Exception {
        Lease lapsing = client.register(producer("lapsing").attribute("k", "v").lease(Duration.ofSeconds(2)).build());
        Lease renewed = client.register(producer("renewed").attribute("k", "kept").lease(Duration.ofSeconds(2))
                .build());
        long registered = System.nanoTime(); // after its lease began, by the database's clock
        AtomicReference<Exception> renewal = new AtomicReference<>();
        ScheduledExecutorService renewer = Executors.newSingleThreadScheduledExecutor(Threads.named("renewer"));
        try {
            // one is renewed every 400 ms, well within its lease, as an endpoint renews
            renewer.scheduleWithFixedDelay(() -> {
                try {
                    client.renew(renewed.name());
                } catch (Exception e) {
                    renewal.compareAndSet(null, e);
                }
            }, 0, 400, TimeUnit.MILLISECONDS);
            // leaseSeconds + 1 s after registration: gone from every view, and from lookup
            await().atMost(Duration.ofMillis(3000)).untilAsserted(() -> {
                assertEquals(404, assertThrows(RegistryException.class, () -> client.lookup(lapsing.name()))
                        .status());
                for (String view : List.of("endpoints", "producers", "attributes")) {
                    assertEquals(List.of(), client.query("SELECT name FROM " + view + " WHERE name = '"
                            + lapsing.name() + "'").rows(), view);
                }
            });
            // and the other is past the lease it registered with: only its renewals keep it
            await().atMost(Duration.ofSeconds(3))
                    .until(() -> System.nanoTime() - registered > TimeUnit.SECONDS.toNanos(2));
        } finally {
            renewer.shutdownNow();
        }
        if (renewal.get() != null) {
            throw renewal.get();
        }
        assertEquals(404, assertThrows(RegistryException.class, () -> client.renew(lapsing.name())).status());
        assertEquals(renewed.name(), client.lookup(renewed.name()).name());
        assertEquals(1, client.query("SELECT name FROM producers WHERE name = '" + renewed.name() + "'").rows()
                .size());
        assertEquals(List.of(List.of("kept")), client.query("SELECT value FROM attributes WHERE name = '"
                + renewed.name() + "'").rows());
    }

    @Test
    void expiredExactNameCanBeTakenAgain() throws Exception {
        client.register(producer("svc").exact(true).lease(Duration.ofSeconds(1)).build());
        assertEquals(409, assertThrows(RegistryException.class,
                () -> client.register(producer("svc").exact(true).build())).status());
        // its lease lapses after 1 s: the name is free once a look-up no longer finds it
        await().atMost(Duration.ofSeconds(2)).untilAsserted(() -> assertEquals(404,
                assertThrows(RegistryException.class, () -> client.lookup("svc@" + domain)).status()));
        assertEquals("svc@" + domain, client.register(producer("svc").exact(true).build()).name());
    }

    @Test
    void twoRegistriesOnOneDatabaseSeeTheSameEndpoints() throws Exception {
        try (Registry second = newRegistry().build().start()) {
            RegistryClient other = RegistryClient.create(second.url());
            Lease lease = client.register(producer("shared").exact(true).build());
            assertEquals(lease.name(), other.lookup(lease.name()).name());
            assertEquals(409, assertThrows(RegistryException.class,
                    () -> other.register(producer("shared").exact(true).build())).status());
            other.unregister(lease.name());
            assertEquals(404, assertThrows(RegistryException.class, () -> client.lookup(lease.name())).status());
        }
    }

    @Test
    void nestedCommentsCannotSmuggleStatements() throws Exception {
        Lease lease = client.register(producer("victim").attribute("k", "v").build());
        for (String payload : List.of("UPDATE gma_endpoints SET port = 1", "DELETE FROM gma_attributes",
                "DROP VIEW domains")) {
            Http.Answer a = Http.send("POST", registry.url() + Registry.API_PATH + "/query", "text/plain",
                    "SELECT name FROM endpoints /* /* */ WHERE name = ' */ ; " + payload + " --'");
            assertEquals(200, a.status(), a.toString());
            assertEquals("{\"columns\":[\"name\"],\"rows\":[],\"truncated\":false}", a.body());
        }
        EndpointInfo after = client.lookup(lease.name());
        assertEquals(4000, after.port());
        assertEquals(java.util.Map.of("k", "v"), after.attributes());
        client.query("SELECT domain FROM domains");
    }

    @Test
    void readerConnectionCannotWriteEvenPastTheGuard() throws Exception {
        String[] jdbc = jdbc();
        Settings d = Settings.defaults();
        RegistryCore core = new RegistryCore(new Settings(jdbc[0], jdbc[1], jdbc[2], 10, d.queryTimeout(),
                d.defaultLease(), d.maxLease(), d.sweepInterval(), d.maxSqlChars(), 2, null, null), null, null);
        try {
            for (String sql : List.of("UPDATE gma_endpoints SET port = 1", "DELETE FROM gma_domains",
                    "DROP VIEW domains", "CREATE TABLE stolen (a INT)")) {
                ApiException e = assertThrows(ApiException.class, () -> core.queries.run(sql), sql);
                assertEquals("QUERY_FAILED", e.code(), sql + ": " + e.getMessage());
            }
            assertEquals(List.of("domain"), core.queries.run("SELECT domain FROM domains").columns());
        } finally {
            core.close();
        }
    }

    @Test
    void domainsLeaseAndExpire() throws Exception {
        client.registerDomain(domain, "http://127.0.0.1:9/", null, Duration.ofSeconds(1));
        assertEquals("http://127.0.0.1:9/", client.lookupDomain(domain).url());
        // its lease lapses after 1 s
        await().atMost(Duration.ofSeconds(2)).untilAsserted(() -> assertEquals(404,
                assertThrows(RegistryException.class, () -> client.lookupDomain(domain)).status()));
        assertEquals(List.of(), client.query("SELECT domain FROM domains WHERE domain = '" + domain + "'").rows());
        // an expired domain is taken over as new
        Http.Answer again = Http.send("POST", registry.url() + Registry.API_PATH + "/domains", "application/json",
                "{\"domain\":\"" + domain + "\",\"via\":\"elsewhere\"}");
        assertEquals(201, again.status(), again.toString());
        assertEquals(true, Json.MAPPER.readTree(again.body()).get("created").asBoolean(), again.body());
        assertEquals("elsewhere", client.lookupDomain(domain).via());
    }

    /** A table of this test's own: tables stay, and a PostgreSQL is shared by every test. */
    TableDeclaration hostCpu() {
        return new TableDeclaration("host_cpu_" + domain, List.of(new ColumnDeclaration("host", ColumnType.STRING),
                new ColumnDeclaration("cpu", ColumnType.INTEGER), new ColumnDeclaration("load1", ColumnType.DOUBLE),
                new ColumnDeclaration("up", ColumnType.BOOLEAN), new ColumnDeclaration("at", ColumnType.TIMESTAMP)),
                List.of("host", "cpu"));
    }

    @Test
    void declaresPublishesAndQueriesTablesThroughTheViews() throws Exception {
        TableDeclaration t = hostCpu();
        assertTrue(client.declareTable(t));
        assertEquals(t, client.table(t.name()).declaration());
        Lease cardiff = client.register(producer("cpu").build());
        Lease swansea = client.register(producer("cpu").build());
        client.register(producer("idle").build());
        client.publish(cardiff.name(), new Publication(t.name(), "site = 'cardiff'", Duration.ofMinutes(10),
                Duration.ofHours(1)));
        client.publish(swansea.name(), new Publication(t.name(), null, Duration.ofSeconds(1), Duration.ZERO));

        // what the mediator asks: the live producers of a table, with their predicates
        assertEquals(List.of(List.of(cardiff.name(), "site = 'cardiff'", 600L, 3600L, domain),
                List.of(swansea.name(), "", 1L, 0L, domain)), longs(client.query("SELECT p.name,"
                        + " COALESCE(p.predicate, '') AS predicate, p.latest_retention_s, p.history_retention_s,"
                        + " e.domain FROM publishers p JOIN endpoints e ON e.name = p.name WHERE p.table_name = '"
                        + t.name() + "' ORDER BY p.latest_retention_s DESC").rows()));
        assertEquals(List.of(List.of(1L, "host", "STRING", true, 1L), List.of(2L, "cpu", "INTEGER", true, 2L),
                List.of(3L, "load1", "DOUBLE", false, -1L), List.of(4L, "up", "BOOLEAN", false, -1L),
                List.of(5L, "at", "TIMESTAMP", false, -1L)), longs(client.query("SELECT position, name, type, in_key,"
                        + " COALESCE(key_position, -1) AS k FROM table_columns WHERE table_name = '" + t.name()
                        + "' ORDER BY position").rows()));
        assertEquals(List.of(List.of("host, cpu", "anonymous")), client.query("SELECT primary_key, declared_by"
                + " FROM tables WHERE name = '" + t.name() + "'").rows());
        assertEquals(List.of(List.of(t.name(), 2L)), longs(client.query("SELECT t.name, COUNT(p.name) AS n"
                + " FROM tables t JOIN publishers p ON p.table_name = t.name WHERE t.name = '" + t.name()
                + "' GROUP BY t.name").rows()));
    }

    @Test
    void publicationsFollowTheLeaseAndGoWithTheRegistration() throws Exception {
        TableDeclaration t = hostCpu();
        client.declareTable(t);
        Lease renewed = client.register(producer("renewed").exact(true).lease(Duration.ofSeconds(2)).build());
        Lease removed = client.register(producer("removed").build());
        Publication all = new Publication(t.name(), null, Duration.ofSeconds(60), Duration.ZERO);
        client.publish(renewed.name(), all);
        client.publish(removed.name(), all);
        String publishers = "SELECT name FROM publishers WHERE table_name = '" + t.name() + "' ORDER BY name";
        assertEquals(List.of(List.of(removed.name()), List.of(renewed.name())), client.query(publishers).rows());

        client.unregister(removed.name());
        assertEquals(List.of(List.of(renewed.name())), client.query(publishers).rows());

        // renewed past the lease it registered with, its publication stays: it follows the renewals
        long until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(3000);
        while (System.nanoTime() < until) {
            client.renew(renewed.name());
            Thread.sleep(400); // an endpoint's renewal period, well within its 2-s lease
        }
        assertEquals(List.of(List.of(renewed.name())), client.query(publishers).rows());

        // not renewed, it is gone when the lease ends; registered again, it publishes nothing until it says so
        await().atMost(Duration.ofSeconds(3)).untilAsserted(() -> assertEquals(List.of(),
                client.query(publishers).rows()));
        client.register(producer("renewed").exact(true).build());
        assertEquals(List.of(), client.query(publishers).rows());
        client.publish(renewed.name(), all);
        assertEquals(List.of(List.of(renewed.name())), client.query(publishers).rows());
    }

    @Test
    void twoRegistriesDeclaringOneTableAtOnceStoreItOnce() throws Exception {
        TableDeclaration t = hostCpu();
        TableDeclaration other = new TableDeclaration(t.name(), t.columns(), List.of("host"));
        try (Registry second = newRegistry().build().start()) {
            RegistryClient[] clients = {client, RegistryClient.create(second.url())};
            ExecutorService pool = Executors.newFixedThreadPool(4, Threads.numbered("declare-"));
            try {
                CountDownLatch go = new CountDownLatch(1);
                List<Future<Boolean>> same = new java.util.ArrayList<>();
                for (int i = 0; i < 4; i++) {
                    RegistryClient c = clients[i % 2];
                    Callable<Boolean> declare = () -> {
                        go.await();
                        return c.declareTable(t);
                    };
                    same.add(pool.submit(declare));
                }
                go.countDown();
                int created = 0;
                for (Future<Boolean> f : same) {
                    created += f.get(30, TimeUnit.SECONDS) ? 1 : 0;
                }
                assertEquals(1, created);
            } finally {
                pool.shutdownNow();
            }
            RegistryException conflict = assertThrows(RegistryException.class, () -> clients[1].declareTable(other));
            assertEquals(409, conflict.status());
            assertEquals("table " + t.name() + ": primary key (host) here, (host, cpu) in the registry",
                    conflict.getMessage());
            assertEquals(t, clients[1].table(t.name()).declaration());
        }
    }

    /** Rows with every whole number as a long, whatever JSON number type the client read it as. */
    static List<List<Object>> longs(List<List<Object>> rows) {
        return rows.stream().map(r -> r.stream().map(v -> v instanceof Integer || v instanceof Long
                ? (Object) ((Number) v).longValue() : v).toList()).toList();
    }
}
