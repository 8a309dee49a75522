package io.gma.archiver;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.gma.tables.Column;
import io.gma.tables.TableSchema;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.SQLNonTransientConnectionException;
import java.sql.SQLRecoverableException;
import java.sql.SQLTransientConnectionException;
import java.sql.Statement;
import java.time.Duration;
import java.util.StringJoiner;

/**
 * The archive's database: H2 (on file, by default in the data directory) or PostgreSQL, through one HikariCP
 * pool. It holds a table of its own, {@code gma_archive_tables}, naming each table archived (its columns, its
 * primary key, its number, and when it began), and a table per archived table ({@link ArchiveTable}).
 */
final class ArchiveDatabase implements AutoCloseable {
    /** The databases GMA is tested on. */
    enum Dialect { H2, POSTGRESQL }

    /** The advisory lock (PostgreSQL) held while a table is prepared, so that archivers sharing one prepare it once. */
    private static final long PREPARE_LOCK = 0x676d615f617263L; // "gma_arc"
    /** PostgreSQL keeps 63 bytes of a name. */
    static final int POSTGRES_NAME_BYTES = 63;

    private final Dialect dialect;
    private final HikariDataSource pool;
    private final String shown;

    private ArchiveDatabase(Dialect dialect, HikariDataSource pool, String shown) {
        this.dialect = dialect;
        this.pool = pool;
        this.shown = shown;
    }

    /**
     * Opens the database and creates the archive's own table if it is missing.
     *
     * @param connections the pool's size
     * @throws ArchiveException naming the URL (without its password) and what the database said
     */
    static ArchiveDatabase open(String url, String user, String password, int connections) throws ArchiveException {
        String shown = url.replaceAll("(?i)password=[^;&]*", "password=***");
        Dialect dialect;
        if (url.startsWith("jdbc:h2:")) {
            dialect = Dialect.H2;
        } else if (url.startsWith("jdbc:postgresql:")) {
            dialect = Dialect.POSTGRESQL;
        } else {
            throw new ArchiveException("jdbc URL " + shown + " is not H2 (jdbc:h2:) or PostgreSQL (jdbc:postgresql:),"
                    + " the two databases the archiver is tested on");
        }
        HikariConfig config = new HikariConfig();
        config.setPoolName("gma-archiver");
        config.setJdbcUrl(url);
        if (!user.isEmpty() || dialect == Dialect.H2) {
            config.setUsername(user.isEmpty() ? "sa" : user); // H2's first user is the database's owner
        }
        if (!password.isEmpty()) {
            config.setPassword(password); // PostgreSQL's may be in the URL, which an empty one would override
        }
        config.setMaximumPoolSize(connections);
        config.setMinimumIdle(1);
        config.setConnectionTimeout(5_000);
        // the first connection below says whether the database is there, in a sentence of ours
        config.setInitializationFailTimeout(-1);
        HikariDataSource pool = new HikariDataSource(config);
        ArchiveDatabase db = new ArchiveDatabase(dialect, pool, shown);
        try (Connection c = pool.getConnection(); Statement s = c.createStatement()) {
            s.execute("CREATE TABLE IF NOT EXISTS gma_archive_tables (name VARCHAR(64) PRIMARY KEY, number INTEGER NOT"
                    + " NULL, columns VARCHAR(8000) NOT NULL, primary_key VARCHAR(8000) NOT NULL, started_micros BIGINT"
                    + " NOT NULL)");
        } catch (SQLException ex) {
            pool.close();
            Throwable root = ex;
            while (root.getCause() != null && root.getCause() != root) {
                root = root.getCause(); // HikariCP's "Connection is not available" wraps the database's own sentence
            }
            String why = root.getMessage() == null ? root.toString() : root.getMessage().lines().findFirst()
                    .orElse("");
            throw new ArchiveException("cannot open the archive's database " + shown + ": " + why
                    + (why.contains("already in use") || why.contains("locked") ? " (another archiver holds this data"
                            + " directory; give each its own --data-dir)" : ""), ex);
        }
        return db;
    }

    Dialect dialect() {
        return dialect;
    }

    /** The URL, its password hidden: for sentences. */
    String shown() {
        return shown;
    }

    Connection connection() throws SQLException {
        return pool.getConnection();
    }

    /**
     * Readies a table to archive: checks that its names fit the database, that what the database holds of it
     * already is the same table, and creates its table and indexes if they are missing.
     *
     * @param retention the archive's history retention, which its answers are complete for at most
     * @throws ArchiveException naming the table and the difference, or what the database said
     */
    ArchiveTable prepare(TableSchema schema, Duration retention) throws ArchiveException {
        check(schema);
        String columns = describe(schema);
        String key = String.join(", ", schema.primaryKey());
        try (Connection c = pool.getConnection()) {
            c.setAutoCommit(false);
            try (Statement s = c.createStatement()) {
                if (dialect == Dialect.POSTGRESQL) {
                    s.execute("SELECT pg_advisory_xact_lock(" + PREPARE_LOCK + ")");
                }
                int number;
                long started;
                try (PreparedStatement q = c.prepareStatement("SELECT number, columns, primary_key, started_micros"
                        + " FROM gma_archive_tables WHERE name = ?")) {
                    q.setString(1, schema.name());
                    try (ResultSet rs = q.executeQuery()) {
                        if (rs.next()) {
                            number = rs.getInt(1);
                            started = rs.getLong(4);
                            if (!columns.equals(rs.getString(2)) || !key.equals(rs.getString(3))) {
                                throw new ArchiveException("the archive's database " + shown + " holds table "
                                        + schema.name() + " as (" + rs.getString(2) + ") with the key ("
                                        + rs.getString(3) + "), but the registry declares (" + columns + ") with the"
                                        + " key (" + key + "); archive it into another database");
                            }
                        } else {
                            number = nextNumber(c);
                            started = Micros.now();
                            try (PreparedStatement ins = c.prepareStatement("INSERT INTO gma_archive_tables (name,"
                                    + " number, columns, primary_key, started_micros) VALUES (?, ?, ?, ?, ?)")) {
                                ins.setString(1, schema.name());
                                ins.setInt(2, number);
                                ins.setString(3, columns);
                                ins.setString(4, key);
                                ins.setLong(5, started);
                                ins.executeUpdate();
                            }
                        }
                    }
                }
                ArchiveTable table = new ArchiveTable(schema, number, started, retention, dialect);
                for (String ddl : table.ddl()) {
                    s.execute(ddl);
                }
                c.commit();
                return table;
            } catch (SQLException | ArchiveException | RuntimeException ex) {
                c.rollback();
                throw ex;
            }
        } catch (SQLException ex) {
            throw new ArchiveException("cannot prepare table " + schema.name() + " in the archive's database " + shown
                    + ": " + ex.getMessage(), ex);
        }
    }

    private static int nextNumber(Connection c) throws SQLException {
        try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery(
                "SELECT COALESCE(MAX(number), 0) + 1 FROM gma_archive_tables")) {
            rs.next();
            return rs.getInt(1);
        }
    }

    /** Refuses names the archive cannot hold as they are. */
    private void check(TableSchema schema) throws ArchiveException {
        if (schema.name().startsWith("gma_")) {
            throw new ArchiveException("table " + schema.name() + " cannot be archived: names that start with gma_"
                    + " are the archive's own");
        }
        if (dialect == Dialect.POSTGRESQL && schema.name().length() > POSTGRES_NAME_BYTES) {
            throw new ArchiveException("table " + schema.name() + " cannot be archived in PostgreSQL: its name is "
                    + schema.name().length() + " characters, over the " + POSTGRES_NAME_BYTES + " PostgreSQL keeps");
        }
        for (Column c : schema.columns()) {
            if (c.name().equals(ArchiveTable.PRODUCER) || c.name().equals(ArchiveTable.INSERTED)) {
                throw new ArchiveException("table " + schema.name() + " cannot be archived: its column " + c.name()
                        + " has the name of a column the archive adds");
            }
            if (dialect == Dialect.POSTGRESQL && c.name().length() > POSTGRES_NAME_BYTES) {
                throw new ArchiveException("table " + schema.name() + " cannot be archived in PostgreSQL: column "
                        + c.name() + " is " + c.name().length() + " characters, over the " + POSTGRES_NAME_BYTES
                        + " PostgreSQL keeps");
            }
        }
    }

    /** The columns as the archive's own table keeps them: {@code site STRING, host STRING, load1 DOUBLE}. */
    static String describe(TableSchema schema) {
        StringJoiner out = new StringJoiner(", ");
        for (Column c : schema.columns()) {
            out.add(c.name() + " " + c.type().name());
        }
        return out.toString();
    }

    /**
     * Whether {@code ex} says the database could not be reached (rather than that it refused a statement): then a
     * write is tried again later, where a refusal is final for the rows refused.
     */
    static boolean unreachable(SQLException ex) {
        for (Throwable t = ex; t != null; t = t.getCause()) {
            if (t instanceof SQLTransientConnectionException || t instanceof SQLNonTransientConnectionException
                    || t instanceof SQLRecoverableException) {
                return true;
            }
            if (t instanceof SQLException s && s.getSQLState() != null && s.getSQLState().startsWith("08")) {
                return true;
            }
        }
        return false;
    }

    @Override
    public void close() {
        pool.close();
    }
}
