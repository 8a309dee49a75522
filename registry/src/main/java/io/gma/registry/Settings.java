package io.gma.registry;

import java.time.Duration;
import java.util.UUID;

/**
 * A registry's limits and storage, checked once. {@link Registry.Builder} and {@link RegistryServlet}'s
 * init parameters both end here.
 */
record Settings(String jdbcUrl, String jdbcUser, String jdbcPassword, int maxRows, Duration queryTimeout,
        Duration defaultLease, Duration maxLease, Duration sweepInterval, int maxSqlChars, int maxConnections,
        String queryUser, String queryPassword) {

    static final int DEFAULT_MAX_ROWS = 10_000;
    static final Duration DEFAULT_QUERY_TIMEOUT = Duration.ofSeconds(5);
    static final Duration DEFAULT_LEASE = Duration.ofSeconds(30);
    static final Duration DEFAULT_MAX_LEASE = Duration.ofHours(1);
    static final Duration DEFAULT_SWEEP_INTERVAL = Duration.ofSeconds(5);
    static final int DEFAULT_MAX_SQL_CHARS = 16 * 1024;
    static final int DEFAULT_MAX_CONNECTIONS = 8;
    /** The most a JSON body may hold: a registration with 64 attributes of 1 KB fits with room to spare. */
    static final int MAX_JSON_BYTES = 256 * 1024;

    Settings {
        if (jdbcUrl == null || jdbcUrl.isBlank()) {
            jdbcUrl = memoryUrl();
        }
        Dialect.of(jdbcUrl);
        positive("maxRows", maxRows, 1_000_000);
        seconds("queryTimeout", queryTimeout, 1, 3600);
        seconds("defaultLease", defaultLease, 1, Integer.MAX_VALUE);
        seconds("maxLease", maxLease, 1, Integer.MAX_VALUE);
        if (defaultLease.compareTo(maxLease) > 0) {
            throw new IllegalArgumentException("defaultLease " + defaultLease.toSeconds()
                    + " s is longer than maxLease " + maxLease.toSeconds() + " s");
        }
        if (sweepInterval.isNegative() || sweepInterval.toMillis() < 10) {
            throw new IllegalArgumentException("sweepInterval " + sweepInterval.toMillis() + " ms is under 10 ms");
        }
        positive("maxSqlChars", maxSqlChars, 1 << 20);
        positive("maxConnections", maxConnections, 1000);
        if ((queryUser == null) != (queryPassword == null)) {
            throw new IllegalArgumentException("the query user and its password go together");
        }
        if (queryUser != null && Dialect.of(jdbcUrl) != Dialect.POSTGRESQL) {
            throw new IllegalArgumentException("a query user is for PostgreSQL; on H2 the registry makes its own");
        }
    }

    static Settings defaults() {
        return new Settings(null, "sa", "", DEFAULT_MAX_ROWS, DEFAULT_QUERY_TIMEOUT, DEFAULT_LEASE, DEFAULT_MAX_LEASE,
                DEFAULT_SWEEP_INTERVAL, DEFAULT_MAX_SQL_CHARS, DEFAULT_MAX_CONNECTIONS, null, null);
    }

    /** A private in-memory H2 database, volatile as jGMA's registry was. */
    static String memoryUrl() {
        return "jdbc:h2:mem:gma-" + UUID.randomUUID();
    }

    /** The JDBC URL with any password in it masked, for logs. */
    String safeJdbcUrl() {
        return masked(jdbcUrl);
    }

    /** {@code url} with its password, of whatever case the key is written in, as {@code ***}: for sentences. */
    static String masked(String url) {
        return url.replaceAll("(?i)(password=)[^;&]*", "$1***");
    }

    private static void positive(String name, int value, int max) {
        if (value < 1 || value > max) {
            throw new IllegalArgumentException(name + " " + value + " is outside 1.." + max);
        }
    }

    private static void seconds(String name, Duration value, long min, long max) {
        if (value == null || value.toSeconds() < min || value.toSeconds() > max || value.toNanosPart() != 0) {
            throw new IllegalArgumentException(name + " " + value + " is not a whole number of seconds in " + min
                    + ".." + max);
        }
    }
}
