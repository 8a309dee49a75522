package io.gma.examples.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gma.client.Producer;
import io.gma.examples.Ping;
import io.gma.examples.Pong;
import io.gma.pcservlet.PcServer;
import io.gma.registry.Registry;
import io.gma.registry.Scrape;
import io.gma.registry.api.RegistryClient;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.condition.EnabledIfEnvironmentVariable;

/**
 * Registry scale-out, as the issue asks: two registries on the CI's PostgreSQL, the first stopped mid-run. The PC
 * servlets and the endpoint, given both URLs, keep their leases (2 s here) on the second, a new endpoint registers
 * there and reaches the first across domains, and {@code gma query} with both URLs answers. Each run has a schema
 * of its own in GMA_TEST_POSTGRES_URL's database. Skipped, saying so, without GMA_TEST_POSTGRES_URL (.ci/run sets
 * it).
 */
@EnabledIfEnvironmentVariable(named = "GMA_TEST_POSTGRES_URL", matches = "jdbc:postgresql:.+",
        disabledReason = "GMA_TEST_POSTGRES_URL is not set: the registry failover test on PostgreSQL is skipped"
                + " (.ci/run sets it after starting a throwaway PostgreSQL)")
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class RegistryFailoverTest {
    private static final String DATABASE = System.getenv("GMA_TEST_POSTGRES_URL");
    private static final Duration LEASE = Duration.ofSeconds(2);

    @Test
    void leasesOutliveTheRegistryThatStoppedAndNewRegistrationsGoToTheOther() throws Exception {
        String schema = "gma_failover_" + UUID.randomUUID().toString().substring(0, 8);
        sql("CREATE SCHEMA " + schema);
        String jdbc = DATABASE + (DATABASE.contains("?") ? "&" : "?") + "currentSchema=" + schema;
        Registry first = Registry.builder().port(0).jdbc(jdbc, "", "").build().start();
        try (Registry second = Registry.builder().port(0).jdbc(jdbc, "", "").build().start()) {
            String both = first.url() + "," + second.url();
            try (PcServer east = PcServer.builder("east", both).lease(LEASE).start();
                    PcServer west = PcServer.builder("west", both).lease(LEASE).start();
                    Producer pong = Pong.start(Producer.builder().registry(both).domain("east").label("pong")
                            .exactLabel(true).pcServlet(east.uplink()).lease(LEASE))) {
                RegistryClient atSecond = RegistryClient.create(second.url());
                Instant pongSince = atSecond.lookup("pong@east").registeredAt();
                Instant eastSince = atSecond.lookupDomain("east").registeredAt();
                Instant westSince = atSecond.lookupDomain("west").registeredAt();
                assertEquals(0, counted(second, "gma_registry_renewals_total", "endpoint")
                        + counted(second, "gma_registry_registrations_total", "endpoint"),
                        "the first URL is tried first: the second has had no call of the endpoint yet");

                first.close();

                // four leases: each renewal goes on to the second, and no registration lapses (a lookup of a lapsed
                // one fails with NOT_FOUND; one registered again has a new registeredAt)
                long until = System.nanoTime() + 4 * LEASE.toNanos();
                while (System.nanoTime() - until < 0) {
                    assertEquals(pongSince, atSecond.lookup("pong@east").registeredAt());
                    assertEquals(eastSince, atSecond.lookupDomain("east").registeredAt());
                    assertEquals(westSince, atSecond.lookupDomain("west").registeredAt());
                    Thread.sleep(100);
                }
                assertTrue(counted(second, "gma_registry_renewals_total", "endpoint") >= 4,
                        "pong renewed at the second, every third of its lease");
                assertTrue(counted(second, "gma_registry_renewals_total", "domain") >= 8, "and so did east and west");

                try (Ping ping = Ping.start(both, "west", west.uplink())) {
                    assertEquals(1, counted(second, "gma_registry_registrations_total", "endpoint"),
                            "the new endpoint registered at the second");
                    assertEquals(20, ping.run("pong@east", 20, 100, true).length,
                            "ping@west reaches pong@east: the PC servlets look both up at the second");

                    GmaCommandsTest.Run query = GmaCommandsTest.gma("query", "--registry", both,
                            "SELECT name, domain FROM endpoints ORDER BY domain");
                    assertEquals(0, query.status(), query.err());
                    assertTrue(query.out().matches("(?s)name +domain\n-+ +-+\npong@east +east\nping-[a-z2-7]{6}@west"
                            + " +west\n2 rows\n"), query.out());
                }
            }
        } finally {
            first.close();
            sql("DROP SCHEMA " + schema + " CASCADE");
        }
    }

    /** What a registry's counter {@code name} of {@code kind} (endpoint, domain) says now. */
    private static long counted(Registry registry, String name, String kind) throws Exception {
        return (long) Scrape.get(registry.url() + "/metrics").value(name, "kind", kind);
    }

    private static void sql(String statement) throws Exception {
        try (Connection c = DriverManager.getConnection(DATABASE); Statement s = c.createStatement()) {
            s.execute(statement);
        }
    }
}
