package io.gma.registry;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import java.security.SecureRandom;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.HexFormat;
import java.util.Locale;
import java.util.StringJoiner;
import javax.sql.DataSource;

/**
 * The two connection pools: a writer for registrations, and a reader that runs user queries. The reader is
 * the second line behind the SQL guard. On H2 it logs in as a user that holds SELECT on the views and
 * nothing else, so even a statement the guard let through by mistake could not write, read the private
 * tables, or call an administrator's function (files, scripts, links). On PostgreSQL every reader transaction
 * is read-only, and with a query role of its own (SELECT on the views only) it cannot read the private
 * tables either.
 */
final class Database implements AutoCloseable {
    static final String H2_READER = "GMA_READER";

    private final Dialect dialect;
    private final HikariDataSource writer;
    private final HikariDataSource reader;

    Database(String jdbcUrl, String user, String password, int maxConnections, String queryUser,
            String queryPassword) throws SQLException {
        this.dialect = Dialect.of(jdbcUrl);
        String url = dialect == Dialect.H2 ? h2Url(jdbcUrl) : jdbcUrl;
        this.writer = pool("gma-registry-writer", url, user, password, maxConnections, false);
        // a reader may not change database settings; it gets the session ones only
        String readerUrl = dialect == Dialect.H2 ? url.replaceAll("(?i);DB_CLOSE_DELAY=[^;]*", "") : url;
        try {
            createSchema();
            if (dialect == Dialect.H2) {
                String readerPassword = HexFormat.of().formatHex(new SecureRandom().generateSeed(16));
                createH2Reader(readerPassword);
                this.reader = pool("gma-registry-reader", readerUrl, H2_READER, readerPassword, maxConnections, true);
            } else {
                this.reader = pool("gma-registry-reader", url, queryUser != null ? queryUser : user,
                        queryUser != null ? queryPassword : password, maxConnections, true);
            }
        } catch (SQLException | RuntimeException e) {
            writer.close();
            throw e;
        }
    }

    /** H2 needs KEY and VALUE as plain identifiers (the attributes view's columns), and a memory DB kept open. */
    static String h2Url(String url) {
        String upper = url.toUpperCase(Locale.ROOT);
        StringBuilder out = new StringBuilder(url);
        if (!upper.contains(";NON_KEYWORDS=")) {
            out.append(";NON_KEYWORDS=KEY,VALUE");
        }
        if (upper.startsWith("JDBC:H2:MEM:") && !upper.contains(";DB_CLOSE_DELAY=")) {
            out.append(";DB_CLOSE_DELAY=-1");
        }
        return out.toString();
    }

    private static HikariDataSource pool(String name, String url, String user, String password, int size,
            boolean readOnly) {
        HikariConfig config = new HikariConfig();
        config.setPoolName(name);
        config.setJdbcUrl(url);
        config.setUsername(user);
        config.setPassword(password);
        config.setMaximumPoolSize(size);
        config.setMinimumIdle(Math.min(2, size));
        config.setReadOnly(readOnly);
        config.setConnectionTimeout(5_000);
        if (readOnly && url.startsWith("jdbc:postgresql:")) {
            // every statement in a read-only transaction, even in what would be autocommit: writes fail in the
            // server; and autocommit off so that rows stream in batches of the fetch size
            config.addDataSourceProperty("readOnlyMode", "always");
            config.setAutoCommit(false);
        }
        return new HikariDataSource(config);
    }

    /** Creates what is missing, in one transaction; on PostgreSQL under a lock, one registry after another. */
    private void createSchema() throws SQLException {
        try (Connection c = writer.getConnection(); Statement s = c.createStatement()) {
            c.setAutoCommit(false);
            try {
                String lock = dialect.lock(Dialect.SCHEMA_LOCK);
                if (lock != null) {
                    s.execute(lock);
                }
                for (String ddl : dialect.schema()) {
                    s.execute(ddl);
                }
                c.commit();
            } catch (SQLException | RuntimeException e) {
                c.rollback();
                throw e;
            } finally {
                c.setAutoCommit(true);
            }
        }
    }

    private void createH2Reader(String password) throws SQLException {
        // the password is hex, so it can stand in the statement (H2 takes no parameter there)
        try (Connection c = writer.getConnection(); Statement s = c.createStatement()) {
            s.execute("CREATE USER IF NOT EXISTS " + H2_READER + " PASSWORD '" + password + "'");
            s.execute("ALTER USER " + H2_READER + " SET PASSWORD '" + password + "'");
            StringJoiner views = new StringJoiner(", ");
            Dialect.QUERYABLE.forEach(views::add);
            s.execute("GRANT SELECT ON " + views + " TO " + H2_READER);
        }
    }

    Dialect dialect() {
        return dialect;
    }

    DataSource writer() {
        return writer;
    }

    DataSource reader() {
        return reader;
    }

    @Override
    public void close() {
        reader.close();
        writer.close();
    }
}
