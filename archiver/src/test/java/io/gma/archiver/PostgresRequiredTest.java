package io.gma.archiver;

import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfEnvironmentVariable;

/**
 * Where GMA_REQUIRE_POSTGRES is set (CI: .ci/run), {@link PostgresArchiveTest} must run, not be skipped: so
 * GMA_TEST_POSTGRES_URL must name a PostgreSQL database.
 */
@EnabledIfEnvironmentVariable(named = "GMA_REQUIRE_POSTGRES", matches = ".+")
class PostgresRequiredTest {
    @Test
    void thePostgresTestsRunWhereTheyAreRequired() {
        String url = System.getenv("GMA_TEST_POSTGRES_URL");
        assertTrue(url != null && url.startsWith("jdbc:postgresql:"), "GMA_REQUIRE_POSTGRES is set, but"
                + " GMA_TEST_POSTGRES_URL (" + (url == null ? "not set" : "not jdbc:postgresql:") + ") names no"
                + " PostgreSQL database: the archive's PostgreSQL tests would be skipped (source .ci/postgres.sh;"
                + " gma_postgres_start sets it)");
    }
}
