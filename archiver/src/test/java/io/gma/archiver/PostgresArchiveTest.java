package io.gma.archiver;

import java.security.SecureRandom;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.util.HexFormat;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.condition.EnabledIfEnvironmentVariable;

/**
 * {@link ArchiveContract} on PostgreSQL: GMA_TEST_POSTGRES_URL names the database (with its user and password), as
 * for the registry's store tests; each test has a schema of its own there, dropped after. Skipped, saying so,
 * without it; {@link PostgresRequiredTest} fails then if GMA_REQUIRE_POSTGRES is set (.ci/run sets both: CI has
 * PostgreSQL, so there these must run).
 */
@EnabledIfEnvironmentVariable(named = "GMA_TEST_POSTGRES_URL", matches = "jdbc:postgresql:.+",
        disabledReason = "GMA_TEST_POSTGRES_URL is not set: the archive's PostgreSQL tests are skipped")
class PostgresArchiveTest extends ArchiveContract {
    private static final String DATABASE = System.getenv("GMA_TEST_POSTGRES_URL");
    private String schema;

    @BeforeEach
    void createSchema() throws Exception {
        schema = "archive_" + HexFormat.of().formatHex(new SecureRandom().generateSeed(6));
        try (Connection c = DriverManager.getConnection(DATABASE); Statement s = c.createStatement()) {
            s.execute("CREATE SCHEMA " + schema);
        }
    }

    /** Everything stopped first, then its schema goes. */
    @Override
    @AfterEach
    void stop() throws Exception {
        try {
            super.stop();
        } finally {
            try (Connection c = DriverManager.getConnection(DATABASE); Statement s = c.createStatement()) {
                s.execute("DROP SCHEMA " + schema + " CASCADE");
            }
        }
    }

    @Override
    Archiver.Builder database(Archiver.Builder b) {
        return b.jdbc(DATABASE + (DATABASE.contains("?") ? "&" : "?") + "currentSchema=" + schema);
    }
}
