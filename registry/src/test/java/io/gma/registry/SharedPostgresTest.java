package io.gma.registry;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.gma.registry.api.Kind;
import io.gma.registry.api.Registration;
import io.gma.registry.api.RegistryClient;
import io.gma.registry.api.RegistryException;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.condition.EnabledIfEnvironmentVariable;

/**
 * Two registries on one PostgreSQL, as scale-out runs them: they start together, write the same rows, and both
 * sweep. Each run has a schema of its own in GMA_TEST_POSTGRES_URL's database, so the counts are its own. Skipped,
 * saying so, without GMA_TEST_POSTGRES_URL (.ci/run sets it).
 */
@EnabledIfEnvironmentVariable(named = "GMA_TEST_POSTGRES_URL", matches = "jdbc:postgresql:.+",
        disabledReason = "GMA_TEST_POSTGRES_URL is not set: the PostgreSQL store tests are skipped"
                + " (.ci/run sets it after starting a throwaway PostgreSQL)")
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class SharedPostgresTest {
    private static final String DATABASE = System.getenv("GMA_TEST_POSTGRES_URL");
    private final String schema = "gma_shared_" + UUID.randomUUID().toString().substring(0, 8);
    private final List<Registry> registries = new ArrayList<>();

    @BeforeEach
    void startTwoAtOnce() throws Exception {
        sql("CREATE SCHEMA " + schema);
        String url = DATABASE + (DATABASE.contains("?") ? "&" : "?") + "currentSchema=" + schema;
        ExecutorService starting = Executors.newFixedThreadPool(2);
        try {
            // both create the schema at once: one waits for the other (Dialect.lock), neither fails
            List<Future<Registry>> started = new ArrayList<>();
            for (int i = 0; i < 2; i++) {
                started.add(starting.submit(() -> Registry.builder().port(0).jdbc(url, "", "")
                        .sweepInterval(Duration.ofMillis(100)).build().start()));
            }
            Exception failed = null;
            for (Future<Registry> f : started) {
                try {
                    registries.add(f.get(30, TimeUnit.SECONDS));
                } catch (Exception e) {
                    failed = e; // the other is closed after the test
                }
            }
            if (failed != null) {
                throw failed;
            }
        } finally {
            starting.shutdownNow();
        }
    }

    @AfterEach
    void stop() throws Exception {
        for (Registry r : registries) {
            r.close();
        }
        sql("DROP SCHEMA " + schema + " CASCADE");
    }

    @Test
    void eachExpiredRegistrationIsSweptAndCountedOnce() throws Exception {
        int n = 40;
        for (int i = 0; i < n; i++) {
            RegistryClient.create(registries.get(i % 2).url()).register(Registration.builder(Kind.PRODUCER, "p" + i,
                    "lan").port(7000).attribute("i", "" + i).lease(Duration.ofSeconds(1)).build());
        }

        await().atMost(Duration.ofSeconds(20)).until(() -> count("gma_endpoints") == 0);

        assertEquals(0, count("gma_attributes"), "the attributes went with their endpoints");
        await().during(Duration.ofMillis(500)).atMost(Duration.ofSeconds(5)).until(() -> expiries() == n);
    }

    @Test
    void ofTwoRegistrationsOfOneNameAtOnceThroughEachRegistryOneWins() throws Exception {
        ExecutorService both = Executors.newFixedThreadPool(2);
        try {
            for (int round = 0; round < 10; round++) {
                Registration r = Registration.builder(Kind.PRODUCER, "svc" + round, "lan").exact(true).port(7000)
                        .build();
                List<CompletableFuture<Integer>> status = new ArrayList<>();
                for (Registry registry : registries) {
                    RegistryClient client = RegistryClient.create(registry.url());
                    status.add(CompletableFuture.supplyAsync(() -> {
                        try {
                            client.register(r);
                            return 201;
                        } catch (RegistryException e) {
                            return e.status();
                        }
                    }, both));
                }
                List<Integer> answers = new ArrayList<>();
                for (CompletableFuture<Integer> s : status) {
                    answers.add(s.get(20, TimeUnit.SECONDS));
                }
                answers.sort(null);
                assertEquals(List.of(201, 409), answers, "round " + round);
            }
        } finally {
            both.shutdownNow();
        }
        assertEquals(10, count("gma_endpoints"));
    }

    /** The lease expiries both registries counted. */
    private long expiries() throws Exception {
        double sum = 0;
        for (Registry r : registries) {
            sum += Scrape.get(r.url() + "/metrics").value("gma_registry_lease_expiries_total", "kind", "endpoint");
        }
        return (long) sum;
    }

    private long count(String table) throws Exception {
        try (Connection c = DriverManager.getConnection(DATABASE); Statement s = c.createStatement();
                ResultSet rs = s.executeQuery("SELECT COUNT(*) FROM " + schema + "." + table)) {
            rs.next();
            return rs.getLong(1);
        }
    }

    private static void sql(String statement) throws Exception {
        try (Connection c = DriverManager.getConnection(DATABASE); Statement s = c.createStatement()) {
            s.execute(statement);
        }
    }
}
