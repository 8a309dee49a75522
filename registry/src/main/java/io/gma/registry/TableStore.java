package io.gma.registry;

import io.gma.registry.api.ColumnDeclaration;
import io.gma.registry.api.ColumnType;
import io.gma.registry.api.TableDeclaration;
import io.gma.registry.api.TableInfo;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Types;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import javax.sql.DataSource;

/**
 * Declared tables and who publishes them, in the private tables {@code gma_tables}, {@code gma_table_columns}
 * and {@code gma_publishers}. A table, once declared, stays (nothing here removes it); a publication is a row of its
 * producer's registration, deleted with it by the database (a foreign key with ON DELETE CASCADE), and shown by
 * the {@code publishers} view only while its copy of the producer's lease, renewed with it, has not passed. Every
 * statement is prepared with parameters; uniqueness rests on the primary keys, so it holds across registries
 * sharing one database.
 */
final class TableStore {
    private static final String UNIQUE_VIOLATION = "23505";
    /** The most tables a registry holds: declarations never expire, so an open registry needs a bound. */
    static final int MAX_TABLES = 10_000;
    /** The most tables one producer publishes. */
    static final int MAX_PUBLICATIONS = 256;

    private final DataSource db;

    TableStore(DataSource db) {
        this.db = db;
    }

    /**
     * Stores a declaration, or finds the same one stored.
     *
     * @return true when stored now, false when the registry held the same declaration
     * @throws ApiException 409 naming every difference from the declaration held; 400 past {@link #MAX_TABLES}
     */
    boolean declare(TableDeclaration t, String owner) throws SQLException {
        try (Connection c = db.getConnection()) {
            for (int attempt = 0;; attempt++) {
                TableInfo held = read(c, t.name());
                if (held != null) {
                    List<String> differences = differences(t, held.declaration());
                    if (!differences.isEmpty()) {
                        throw ApiException.conflict("table " + t.name() + ": " + String.join("; ", differences));
                    }
                    return false;
                }
                if (count(c, "SELECT COUNT(*) FROM gma_tables") >= MAX_TABLES) {
                    throw ApiException.badRequest("the registry holds " + MAX_TABLES + " tables, its limit; table "
                            + t.name() + " is not stored");
                }
                try {
                    insert(c, t, owner);
                    return true;
                } catch (SQLException e) {
                    // declared at the same time through another connection (or registry): compare with that one
                    if (!UNIQUE_VIOLATION.equals(e.getSQLState()) || attempt > 0) {
                        throw e;
                    }
                }
            }
        }
    }

    private static void insert(Connection c, TableDeclaration t, String owner) throws SQLException {
        c.setAutoCommit(false);
        try (PreparedStatement table = c.prepareStatement("INSERT INTO gma_tables (name, primary_key, declared_by,"
                + " declared_at) VALUES (?, ?, ?, CURRENT_TIMESTAMP)");
                PreparedStatement column = c.prepareStatement("INSERT INTO gma_table_columns (table_name, position,"
                        + " name, type, key_position) VALUES (?, ?, ?, ?, ?)")) {
            table.setString(1, t.name());
            table.setString(2, String.join(", ", t.primaryKey()));
            table.setString(3, owner);
            table.executeUpdate();
            for (int i = 0; i < t.columns().size(); i++) {
                ColumnDeclaration d = t.columns().get(i);
                int key = t.primaryKey().indexOf(d.name());
                column.setString(1, t.name());
                column.setInt(2, i + 1);
                column.setString(3, d.name());
                column.setString(4, d.type().name());
                if (key < 0) {
                    column.setNull(5, Types.INTEGER);
                } else {
                    column.setInt(5, key + 1);
                }
                column.addBatch();
            }
            column.executeBatch();
            c.commit();
        } catch (SQLException | RuntimeException e) {
            c.rollback();
            throw e;
        } finally {
            c.setAutoCommit(true);
        }
    }

    /** The table as first declared; 404 when no table has the name. */
    TableInfo table(String name) throws SQLException {
        try (Connection c = db.getConnection()) {
            TableInfo t = read(c, name);
            if (t == null) {
                throw ApiException.notFound("no table is declared as \"" + name + "\"");
            }
            return t;
        }
    }

    /** The table with its columns, read in one statement (so never half a concurrent declaration); or null. */
    private static TableInfo read(Connection c, String name) throws SQLException {
        try (PreparedStatement q = c.prepareStatement("SELECT t.declared_by, t.declared_at, c.name, c.type,"
                + " c.key_position FROM gma_tables t JOIN gma_table_columns c ON c.table_name = t.name"
                + " WHERE t.name = ? ORDER BY c.position")) {
            q.setString(1, name);
            try (ResultSet rs = q.executeQuery()) {
                if (!rs.next()) {
                    return null;
                }
                String declaredBy = rs.getString(1);
                Instant declaredAt = EndpointStore.instant(rs, 2);
                List<ColumnDeclaration> columns = new ArrayList<>();
                Map<Integer, String> key = new TreeMap<>();
                do {
                    columns.add(new ColumnDeclaration(rs.getString(3), ColumnType.valueOf(rs.getString(4))));
                    int position = rs.getInt(5);
                    if (!rs.wasNull()) {
                        key.put(position, rs.getString(3));
                    }
                } while (rs.next());
                return new TableInfo(new TableDeclaration(name, columns, List.copyOf(key.values())), declaredBy,
                        declaredAt);
            }
        }
    }

    /**
     * How a declaration differs from the one the registry holds, one phrase each: columns missing or added, a
     * type, then (only when both have the same columns) a position, then the key. Empty when they are the same.
     */
    static List<String> differences(TableDeclaration here, TableDeclaration held) {
        List<String> out = new ArrayList<>();
        List<String> hereNames = here.columns().stream().map(ColumnDeclaration::name).toList();
        List<String> heldNames = held.columns().stream().map(ColumnDeclaration::name).toList();
        for (ColumnDeclaration h : held.columns()) {
            int i = hereNames.indexOf(h.name());
            if (i < 0) {
                out.add("column " + h.name() + " is missing");
            } else if (here.columns().get(i).type() != h.type()) {
                out.add("column " + h.name() + " is " + here.columns().get(i).type() + " here, " + h.type()
                        + " in the registry");
            }
        }
        for (String name : hereNames) {
            if (!heldNames.contains(name)) {
                out.add("column " + name + " is not in the registry");
            }
        }
        if (out.isEmpty()) {
            for (int i = 0; i < hereNames.size(); i++) {
                int held1 = heldNames.indexOf(hereNames.get(i)) + 1;
                if (held1 != i + 1) {
                    out.add("column " + hereNames.get(i) + " is at position " + (i + 1) + " here, " + held1
                            + " in the registry");
                }
            }
        }
        if (!here.primaryKey().equals(held.primaryKey())) {
            out.add("primary key (" + String.join(", ", here.primaryKey()) + ") here, ("
                    + String.join(", ", held.primaryKey()) + ") in the registry");
        }
        return out;
    }

    /**
     * Records that the live producer {@code producer}, registered by {@code identity}, publishes {@code table}, or
     * replaces what it said of it before.
     *
     * @return true when it did not publish the table before
     * @throws ApiException 404 (no live endpoint so named, no such table), 403 (another identity's endpoint), 400
     *     (a consumer, or past {@link #MAX_PUBLICATIONS})
     */
    boolean publish(String producer, String table, TableRequests.NewPublication p, String identity)
            throws SQLException {
        try (Connection c = db.getConnection()) {
            for (int attempt = 0;; attempt++) {
                c.setAutoCommit(false);
                try {
                    boolean created = publish(c, producer, table, p, identity);
                    c.commit();
                    return created;
                } catch (SQLException e) {
                    c.rollback();
                    // the same publication inserted at the same time: the second try updates it
                    if (!UNIQUE_VIOLATION.equals(e.getSQLState()) || attempt > 0) {
                        throw e;
                    }
                } catch (RuntimeException e) {
                    c.rollback();
                    throw e;
                } finally {
                    c.setAutoCommit(true);
                }
            }
        }
    }

    private static boolean publish(Connection c, String producer, String table, TableRequests.NewPublication p,
            String identity) throws SQLException {
        try (PreparedStatement q = c.prepareStatement("SELECT owner, kind FROM gma_endpoints WHERE name = ?"
                + " AND expires_at > CURRENT_TIMESTAMP")) {
            q.setString(1, producer);
            try (ResultSet rs = q.executeQuery()) {
                if (!rs.next()) {
                    throw ApiException.notFound("no live endpoint is named \"" + producer + "\"");
                }
                if (!identity.equals(rs.getString(1))) {
                    throw ApiException.forbidden("endpoint \"" + producer + "\" was registered by another identity"
                            + " than \"" + identity + "\"");
                }
                if (!"producer".equals(rs.getString(2))) {
                    throw ApiException.badRequest("endpoint \"" + producer + "\" is a " + rs.getString(2)
                            + "; only a producer publishes tables");
                }
            }
        }
        try (PreparedStatement q = c.prepareStatement("SELECT name FROM gma_tables WHERE name = ?")) {
            q.setString(1, table);
            try (ResultSet rs = q.executeQuery()) {
                if (!rs.next()) {
                    throw ApiException.notFound("no table is declared as \"" + table + "\"; declare it first");
                }
            }
        }
        try (PreparedStatement up = c.prepareStatement("UPDATE gma_publishers SET predicate = ?,"
                + " latest_retention_s = ?, history_retention_s = ?, archive = ?, published_at = CURRENT_TIMESTAMP"
                + " WHERE name = ? AND table_name = ?")) {
            up.setString(1, p.predicate());
            up.setInt(2, p.latestRetentionSeconds());
            up.setInt(3, p.historyRetentionSeconds());
            up.setBoolean(4, p.archive());
            up.setString(5, producer);
            up.setString(6, table);
            if (up.executeUpdate() == 1) {
                return false;
            }
        }
        try (PreparedStatement n = c.prepareStatement("SELECT COUNT(*) FROM gma_publishers WHERE name = ?")) {
            n.setString(1, producer);
            try (ResultSet rs = n.executeQuery()) {
                rs.next();
                if (rs.getInt(1) >= MAX_PUBLICATIONS) {
                    throw ApiException.badRequest("endpoint \"" + producer + "\" publishes " + MAX_PUBLICATIONS
                            + " tables, the limit; table " + table + " is not added");
                }
            }
        }
        // the endpoint's domain and expiry are copied, as its attributes' expiry is: the view then needs no join
        try (PreparedStatement ins = c.prepareStatement("INSERT INTO gma_publishers (name, table_name, domain,"
                + " predicate, latest_retention_s, history_retention_s, archive, published_at, expires_at)"
                + " SELECT name, ?, domain, ?, ?, ?, ?, CURRENT_TIMESTAMP, expires_at FROM gma_endpoints"
                + " WHERE name = ? AND owner = ? AND expires_at > CURRENT_TIMESTAMP")) {
            ins.setString(1, table);
            ins.setString(2, p.predicate());
            ins.setInt(3, p.latestRetentionSeconds());
            ins.setInt(4, p.historyRetentionSeconds());
            ins.setBoolean(5, p.archive());
            ins.setString(6, producer);
            ins.setString(7, identity); // the name may have gone to another identity since the look above
            if (ins.executeUpdate() == 0) {
                throw ApiException.notFound("no live endpoint is named \"" + producer + "\"");
            }
        }
        return true;
    }

    private static long count(Connection c, String sql) throws SQLException {
        try (PreparedStatement q = c.prepareStatement(sql); ResultSet rs = q.executeQuery()) {
            rs.next();
            return rs.getLong(1);
        }
    }
}
