package io.gma.registry;

import org.junit.jupiter.api.condition.EnabledIfEnvironmentVariable;

/**
 * The store contract against a real PostgreSQL: set GMA_TEST_POSTGRES_URL to a JDBC URL with user and
 * password in it (.ci/run starts a throwaway server and sets it). Skipped, saying so, without it.
 */
@EnabledIfEnvironmentVariable(named = "GMA_TEST_POSTGRES_URL", matches = "jdbc:postgresql:.+",
        disabledReason = "GMA_TEST_POSTGRES_URL is not set: the PostgreSQL store tests are skipped"
                + " (.ci/run sets it after starting a throwaway PostgreSQL)")
class PostgresStoreTest extends StoreContract {
    @Override
    String[] jdbc() {
        return new String[] {System.getenv("GMA_TEST_POSTGRES_URL"), "", ""};
    }
}
