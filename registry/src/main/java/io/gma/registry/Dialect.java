package io.gma.registry;

import java.util.List;

/**
 * The schema, in the SQL that H2 and PostgreSQL share. Private tables ({@code gma_*}) hold the rows; the
 * views that queries read ({@code endpoints}, {@code producers}, {@code consumers}, {@code attributes},
 * {@code domains}, {@code publishers}) show only rows whose lease has not passed, so an expired endpoint vanishes
 * from every one at the instant of expiry, whatever the sweeper has done yet. Declared tables ({@code tables},
 * {@code table_columns}) have no lease: they stay.
 *
 * <p>All times come from the database's clock ({@code CURRENT_TIMESTAMP}), so several registry instances
 * sharing one PostgreSQL agree on expiry whatever their own clocks say.
 */
enum Dialect {
    H2, POSTGRESQL;

    /** The tables and views a query may read. */
    static final List<String> QUERYABLE = List.of("endpoints", "producers", "consumers", "attributes", "domains",
            "tables", "table_columns", "publishers");

    /** The expiry time as many seconds from now as the statement's parameter says. */
    static final String EXPIRY_FROM_PARAMETER = expiry("CAST(? AS INTEGER)");

    /** The expiry time {@code seconds} from now, by the database's clock; {@code seconds} is SQL, often "?". */
    static String expiry(String seconds) {
        return "CURRENT_TIMESTAMP + (INTERVAL '1' SECOND * " + seconds + ")";
    }

    /** The advisory lock (PostgreSQL) held while a registry creates the schema: see {@link #lock}. */
    static final long SCHEMA_LOCK = 0x676d615f736368L; // "gma_sch"
    /** The advisory lock (PostgreSQL) a registry's sweep holds: see {@link #tryLock}. */
    static final long SWEEP_LOCK = 0x676d615f737765L; // "gma_swe"

    /**
     * A statement that waits for the lock {@code key} until the transaction ends, or null when the database
     * needs none: registries that share a PostgreSQL and start together would otherwise create the same tables
     * and views at once, which PostgreSQL refuses one of ({@code pg_type} unique violation, "tuple concurrently
     * updated"). An H2 database has one registry.
     */
    String lock(long key) {
        return this == POSTGRESQL ? "SELECT pg_advisory_xact_lock(" + key + ")" : null;
    }

    /**
     * A query answering whether this transaction took the lock {@code key} (held until it ends), at once, or null
     * when the database needs none. Registries sharing a PostgreSQL each run a sweeper: the one that takes the
     * lock sweeps, and the others skip that turn rather than wait on the same rows.
     */
    String tryLock(long key) {
        return this == POSTGRESQL ? "SELECT pg_try_advisory_xact_lock(" + key + ")" : null;
    }

    static Dialect of(String jdbcUrl) {
        if (jdbcUrl.startsWith("jdbc:h2:")) {
            return H2;
        }
        if (jdbcUrl.startsWith("jdbc:postgresql:")) {
            return POSTGRESQL;
        }
        throw new IllegalArgumentException("jdbc URL " + Settings.masked(jdbcUrl)
                + " is not H2 (jdbc:h2:) or PostgreSQL (jdbc:postgresql:), the two databases GMA is tested on");
    }

    List<String> schema() {
        String time = "TIMESTAMP WITH TIME ZONE";
        String live = "expires_at > CURRENT_TIMESTAMP";
        String endpointColumns = "name, label, kind, domain, host, port, registered_at, expires_at";
        return List.of(
                "CREATE TABLE IF NOT EXISTS gma_endpoints (name VARCHAR(200) PRIMARY KEY, label VARCHAR(64) NOT NULL,"
                        + " kind VARCHAR(8) NOT NULL, domain VARCHAR(64) NOT NULL, host VARCHAR(255) NOT NULL,"
                        + " port INTEGER NOT NULL, lease_seconds INTEGER NOT NULL, owner VARCHAR(255) NOT NULL,"
                        + " registered_at " + time + " NOT NULL, expires_at " + time + " NOT NULL)",
                "CREATE INDEX IF NOT EXISTS gma_endpoints_expiry ON gma_endpoints (expires_at)",
                "CREATE INDEX IF NOT EXISTS gma_endpoints_domain ON gma_endpoints (domain, kind)",
                // expires_at is the endpoint's, kept equal by EndpointStore: the view then needs no join
                "CREATE TABLE IF NOT EXISTS gma_attributes (name VARCHAR(200) NOT NULL"
                        + " REFERENCES gma_endpoints (name) ON DELETE CASCADE, attr_key VARCHAR(64) NOT NULL,"
                        + " attr_value VARCHAR(1024) NOT NULL, expires_at " + time + " NOT NULL,"
                        + " PRIMARY KEY (name, attr_key))",
                "CREATE INDEX IF NOT EXISTS gma_attributes_pair ON gma_attributes (attr_key, attr_value)",
                "CREATE TABLE IF NOT EXISTS gma_domains (domain VARCHAR(64) PRIMARY KEY, url VARCHAR(2048),"
                        + " via VARCHAR(64), owner VARCHAR(255) NOT NULL, lease_seconds INTEGER NOT NULL,"
                        + " registered_at " + time + " NOT NULL, expires_at " + time + " NOT NULL)",
                "CREATE OR REPLACE VIEW endpoints AS SELECT " + endpointColumns + " FROM gma_endpoints WHERE " + live,
                "CREATE OR REPLACE VIEW producers AS SELECT " + endpointColumns + " FROM gma_endpoints WHERE "
                        + live + " AND kind = 'producer'",
                "CREATE OR REPLACE VIEW consumers AS SELECT " + endpointColumns + " FROM gma_endpoints WHERE "
                        + live + " AND kind = 'consumer'",
                "CREATE OR REPLACE VIEW attributes AS SELECT name, attr_key AS key, attr_value AS value"
                        + " FROM gma_attributes WHERE " + live,
                "CREATE OR REPLACE VIEW domains AS SELECT domain, url, via, registered_at FROM gma_domains WHERE "
                        + live,
                // declared tables (TableStore): primary_key repeats the key's names, in order, for people to read
                "CREATE TABLE IF NOT EXISTS gma_tables (name VARCHAR(64) PRIMARY KEY, primary_key VARCHAR(4200)"
                        + " NOT NULL, declared_by VARCHAR(255) NOT NULL, declared_at " + time + " NOT NULL)",
                "CREATE TABLE IF NOT EXISTS gma_table_columns (table_name VARCHAR(64) NOT NULL"
                        + " REFERENCES gma_tables (name) ON DELETE CASCADE, position INTEGER NOT NULL,"
                        + " name VARCHAR(64) NOT NULL, type VARCHAR(16) NOT NULL, key_position INTEGER,"
                        + " PRIMARY KEY (table_name, position), UNIQUE (table_name, name))",
                // a publication goes with its producer's registration; domain and expires_at are the endpoint's,
                // kept equal by TableStore and EndpointStore, so the view needs no join
                "CREATE TABLE IF NOT EXISTS gma_publishers (name VARCHAR(200) NOT NULL"
                        + " REFERENCES gma_endpoints (name) ON DELETE CASCADE, table_name VARCHAR(64) NOT NULL"
                        + " REFERENCES gma_tables (name) ON DELETE CASCADE, domain VARCHAR(64) NOT NULL,"
                        + " predicate VARCHAR(1024), latest_retention_s INTEGER NOT NULL,"
                        + " history_retention_s INTEGER NOT NULL, published_at " + time + " NOT NULL,"
                        + " expires_at " + time + " NOT NULL, archive BOOLEAN DEFAULT FALSE NOT NULL,"
                        + " PRIMARY KEY (name, table_name))",
                // archivers (issue 24): a database made before them gets the column; kept last, so that the view
                // below may add it at its end (PostgreSQL replaces a view only by appending columns)
                "ALTER TABLE gma_publishers ADD COLUMN IF NOT EXISTS archive BOOLEAN DEFAULT FALSE NOT NULL",
                // the mediator's look-up: the producers of one table
                "CREATE INDEX IF NOT EXISTS gma_publishers_table ON gma_publishers (table_name)",
                "CREATE OR REPLACE VIEW tables AS SELECT name, primary_key, declared_by, declared_at FROM gma_tables",
                "CREATE OR REPLACE VIEW table_columns AS SELECT table_name, position, name, type,"
                        + " CASE WHEN key_position IS NULL THEN FALSE ELSE TRUE END AS in_key, key_position"
                        + " FROM gma_table_columns",
                "CREATE OR REPLACE VIEW publishers AS SELECT table_name, name, domain, predicate,"
                        + " latest_retention_s, history_retention_s, published_at, archive FROM gma_publishers WHERE "
                        + live);
    }
}
