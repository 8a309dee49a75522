package io.gma.registry;

import io.gma.registry.api.DomainInfo;
import io.gma.registry.api.EndpointInfo;
import io.gma.registry.api.Kind;
import io.gma.registry.api.Lease;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Types;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.LinkedHashMap;
import java.util.Map;
import javax.sql.DataSource;

/**
 * Endpoints and domains in the private tables: register, renew, look up, remove. Every statement is
 * prepared with parameters; nothing a caller sends is spliced into SQL. Uniqueness of live names rests on
 * the primary key, so it holds across threads and across registry instances sharing one database.
 */
final class EndpointStore {
    private static final String UNIQUE_VIOLATION = "23505";
    private static final int NONCE_ATTEMPTS = 8;

    private final DataSource db;
    /** Null, or what the sweep takes first: one sweep at a time among registries sharing the database. */
    private final String sweepLock;
    /** Counts the leases that ran out, as their rows go. */
    private final Metrics metrics;

    EndpointStore(DataSource db, Dialect dialect, Metrics metrics) {
        this.db = db;
        this.sweepLock = dialect.tryLock(Dialect.SWEEP_LOCK);
        this.metrics = metrics;
    }

    /**
     * A checked registration request; {@link RegistryServlet} builds it from JSON.
     *
     * @param takeover with exact or nonce: the live registration of that name to replace, or null
     */
    record NewEndpoint(String label, Kind kind, String domain, String host, int port, boolean exact, String nonce,
            int leaseSeconds, Map<String, String> attributes, Takeover takeover) {
    }

    /** Where the registration a takeover replaces was registered: it is replaced only if it is still there. */
    record Takeover(String host, int port) {
    }

    Lease register(NewEndpoint e, String owner) throws SQLException {
        try (Connection c = db.getConnection()) {
            c.setAutoCommit(false);
            try {
                for (int attempt = 1;; attempt++) {
                    String name = e.exact() ? e.label() + "@" + e.domain()
                            : e.label() + "-" + (e.nonce() != null ? e.nonce() : Names.nonce()) + "@" + e.domain();
                    try {
                        if (e.takeover() != null) {
                            replace(c, name, e.takeover(), owner);
                        }
                        int expired = deleteExpired(c, name);
                        Lease lease = insert(c, name, e, owner);
                        c.commit();
                        metrics.count(Metrics.Event.EXPIRED, Metrics.Kind.ENDPOINT, expired);
                        return lease;
                    } catch (SQLException ex) {
                        c.rollback();
                        if (!UNIQUE_VIOLATION.equals(ex.getSQLState())) {
                            throw ex;
                        }
                        if (e.exact() || e.nonce() != null) {
                            throw e.takeover() == null
                                    ? ApiException.conflict("name \"" + name + "\" is taken by a live endpoint")
                                    : refusedTakeover(c, name, e.takeover(), owner);
                        }
                        if (attempt == NONCE_ATTEMPTS) {
                            throw new SQLException(NONCE_ATTEMPTS + " nonces in a row were taken for label "
                                    + e.label() + "@" + e.domain(), ex);
                        }
                    }
                }
            } finally {
                c.setAutoCommit(true);
            }
        }
    }

    /**
     * A takeover, in the registration's transaction: removes the registration of {@code name} that {@code owner}
     * made at the takeover's host and port, live or not (its attributes go with it). The insert that follows then
     * finds the name free, unless another identity or another host and port holds it: that insert conflicts, and
     * the takeover is refused.
     */
    private static void replace(Connection c, String name, Takeover t, String owner) throws SQLException {
        try (PreparedStatement del = c.prepareStatement(
                "DELETE FROM gma_endpoints WHERE name = ? AND owner = ? AND host = ? AND port = ?")) {
            del.setString(1, name);
            del.setString(2, owner);
            del.setString(3, t.host());
            del.setInt(4, t.port());
            del.executeUpdate();
        }
    }

    /** Why a takeover of {@code name} found it held: another identity's, or at another host and port. */
    private static ApiException refusedTakeover(Connection c, String name, Takeover t, String owner)
            throws SQLException {
        try (PreparedStatement q = c.prepareStatement("SELECT owner, host, port FROM gma_endpoints WHERE name = ?"
                + " AND expires_at > CURRENT_TIMESTAMP")) {
            q.setString(1, name);
            try (ResultSet rs = q.executeQuery()) {
                if (!rs.next()) {
                    // taken and gone again between the insert and this look: the caller may simply try again
                    return ApiException.conflict("name \"" + name + "\" was taken by a live endpoint meanwhile");
                }
                if (!owner.equals(rs.getString(1))) {
                    return ApiException.conflict("name \"" + name + "\" is held by a live endpoint of another identity"
                            + " than \"" + owner + "\": only the identity that registered a name may take it over");
                }
                return ApiException.conflict("name \"" + name + "\" is held by a live endpoint at "
                        + rs.getString(2) + ":" + rs.getInt(3) + ", not at the " + t.host() + ":" + t.port()
                        + " this takeover replaces: another instance has taken it over since");
            }
        }
    }

    /** Deletes the row of {@code name} if its lease passed: one the sweeper has not reached yet must not block it. */
    private static int deleteExpired(Connection c, String name) throws SQLException {
        try (PreparedStatement stale = c.prepareStatement(
                "DELETE FROM gma_endpoints WHERE name = ? AND expires_at <= CURRENT_TIMESTAMP")) {
            stale.setString(1, name);
            return stale.executeUpdate();
        }
    }

    private static Lease insert(Connection c, String name, NewEndpoint e, String owner) throws SQLException {
        try (PreparedStatement ins = c.prepareStatement("INSERT INTO gma_endpoints (name, label, kind, domain, host,"
                + " port, lease_seconds, owner, registered_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?,"
                + " CURRENT_TIMESTAMP, " + Dialect.EXPIRY_FROM_PARAMETER + ")")) {
            ins.setString(1, name);
            ins.setString(2, e.label());
            ins.setString(3, e.kind().wireName());
            ins.setString(4, e.domain());
            ins.setString(5, e.host());
            ins.setInt(6, e.port());
            ins.setInt(7, e.leaseSeconds());
            ins.setString(8, owner);
            ins.setInt(9, e.leaseSeconds());
            ins.executeUpdate();
        }
        if (!e.attributes().isEmpty()) {
            try (PreparedStatement attr = c.prepareStatement(
                    "INSERT INTO gma_attributes (name, attr_key, attr_value, expires_at)"
                            + " SELECT ?, ?, ?, expires_at FROM gma_endpoints WHERE name = ?")) {
                for (Map.Entry<String, String> a : e.attributes().entrySet()) {
                    attr.setString(1, name);
                    attr.setString(2, a.getKey());
                    attr.setString(3, a.getValue());
                    attr.setString(4, name);
                    attr.addBatch();
                }
                attr.executeBatch();
            }
        }
        return new Lease(name, expiresAt(c, "gma_endpoints", "name", name));
    }

    Lease renew(String name, String identity) throws SQLException {
        try (Connection c = db.getConnection()) {
            c.setAutoCommit(false);
            try (PreparedStatement up = c.prepareStatement("UPDATE gma_endpoints SET expires_at = "
                    + Dialect.expiry("lease_seconds")
                    + " WHERE name = ? AND owner = ? AND expires_at > CURRENT_TIMESTAMP");
                    PreparedStatement attributes = c.prepareStatement("UPDATE gma_attributes SET expires_at ="
                            + " (SELECT expires_at FROM gma_endpoints e WHERE e.name = ?) WHERE name = ?");
                    PreparedStatement publications = c.prepareStatement("UPDATE gma_publishers SET expires_at ="
                            + " (SELECT expires_at FROM gma_endpoints e WHERE e.name = ?) WHERE name = ?")) {
                up.setString(1, name);
                up.setString(2, identity);
                if (up.executeUpdate() == 0) {
                    c.rollback();
                    throw refusal(c, "gma_endpoints", "name", name, "endpoint", identity);
                }
                attributes.setString(1, name);
                attributes.setString(2, name);
                attributes.executeUpdate();
                publications.setString(1, name);
                publications.setString(2, name);
                publications.executeUpdate();
                Lease lease = new Lease(name, expiresAt(c, "gma_endpoints", "name", name));
                c.commit();
                return lease;
            } catch (SQLException | RuntimeException e) {
                c.rollback();
                throw e;
            } finally {
                c.setAutoCommit(true);
            }
        }
    }

    void unregister(String name, String identity) throws SQLException {
        deleteOwned("gma_endpoints", "name", name, "endpoint", identity);
    }

    EndpointInfo lookup(String name) throws SQLException {
        try (Connection c = db.getConnection(); PreparedStatement q = c.prepareStatement(
                "SELECT e.label, e.kind, e.domain, e.host, e.port, e.registered_at, e.expires_at, e.owner,"
                        + " a.attr_key, a.attr_value FROM gma_endpoints e LEFT JOIN gma_attributes a ON a.name = e.name"
                        + " WHERE e.name = ? AND e.expires_at > CURRENT_TIMESTAMP")) {
            q.setString(1, name);
            try (ResultSet rs = q.executeQuery()) {
                if (!rs.next()) {
                    throw ApiException.notFound("no live endpoint is named \"" + name + "\"");
                }
                String label = rs.getString(1);
                Kind kind = Kind.fromWireName(rs.getString(2));
                String domain = rs.getString(3);
                String host = rs.getString(4);
                int port = rs.getInt(5);
                Instant registeredAt = instant(rs, 6);
                Instant expiresAt = instant(rs, 7);
                String owner = rs.getString(8);
                Map<String, String> attributes = new LinkedHashMap<>();
                do { // one row per attribute, the endpoint's columns repeated (one row with nulls if none)
                    if (rs.getString(9) != null) {
                        attributes.put(rs.getString(9), rs.getString(10));
                    }
                } while (rs.next());
                return new EndpointInfo(name, label, kind, domain, host, port, registeredAt, expiresAt, attributes,
                        owner);
            }
        }
    }

    /**
     * What a live endpoint was registered as, {@code label@domain} from its row (the target of its register
     * rule), which its name alone does not tell: {@code x-abc234@east} is label {@code x} with a nonce, or label
     * {@code x-abc234} registered exact.
     *
     * @throws ApiException 404 when no live endpoint has the name
     */
    String registeredAs(String name) throws SQLException {
        try (Connection c = db.getConnection(); PreparedStatement q = c.prepareStatement(
                "SELECT label, domain FROM gma_endpoints WHERE name = ? AND expires_at > CURRENT_TIMESTAMP")) {
            q.setString(1, name);
            try (ResultSet rs = q.executeQuery()) {
                if (!rs.next()) {
                    throw ApiException.notFound("no live endpoint is named \"" + name + "\"");
                }
                return rs.getString(1) + "@" + rs.getString(2);
            }
        }
    }

    /**
     * Registers or renews a domain.
     *
     * @return true when the domain is new to its holder (never registered, or its last lease had passed)
     */
    boolean registerDomain(String domain, String url, String via, int leaseSeconds, String owner)
            throws SQLException {
        String set = "UPDATE gma_domains SET url = ?, via = ?, owner = ?, lease_seconds = ?, expires_at = "
                + Dialect.EXPIRY_FROM_PARAMETER;
        for (int attempt = 0;; attempt++) {
            try (Connection c = db.getConnection()) {
                // the holder renews
                if (execute(c, set + " WHERE domain = ? AND owner = ? AND expires_at > CURRENT_TIMESTAMP",
                        url, via, owner, leaseSeconds, leaseSeconds, domain, owner) == 1) {
                    return false;
                }
                // a registration whose lease passed, whoever held it, is taken over as new
                if (execute(c, set + ", registered_at = CURRENT_TIMESTAMP WHERE domain = ?"
                        + " AND expires_at <= CURRENT_TIMESTAMP", url, via, owner, leaseSeconds, leaseSeconds,
                        domain) == 1) {
                    metrics.count(Metrics.Event.EXPIRED, Metrics.Kind.DOMAIN);
                    return true;
                }
                try {
                    execute(c, "INSERT INTO gma_domains (domain, url, via, owner, lease_seconds, registered_at,"
                            + " expires_at) VALUES (?, ?, ?, ?, ?, CURRENT_TIMESTAMP, " + Dialect.EXPIRY_FROM_PARAMETER
                            + ")", domain, url, via, owner, leaseSeconds, leaseSeconds);
                    return true;
                } catch (SQLException ex) {
                    if (!UNIQUE_VIOLATION.equals(ex.getSQLState())) {
                        throw ex;
                    }
                    if (attempt > 0) {
                        // the row exists and is live, and the holder's update did not match: another owns it
                        throw ApiException.conflict("domain \"" + domain + "\" is registered by another identity");
                    }
                }
            }
        }
    }

    /** Runs an update with its parameters (strings, which may be null, and integers). */
    private static int execute(Connection c, String sql, Object... parameters) throws SQLException {
        try (PreparedStatement statement = c.prepareStatement(sql)) {
            for (int i = 0; i < parameters.length; i++) {
                Object p = parameters[i];
                if (p instanceof Integer) {
                    statement.setInt(i + 1, (Integer) p);
                } else if (p == null) {
                    statement.setNull(i + 1, Types.VARCHAR);
                } else {
                    statement.setString(i + 1, (String) p);
                }
            }
            return statement.executeUpdate();
        }
    }

    DomainInfo lookupDomain(String domain) throws SQLException {
        try (Connection c = db.getConnection(); PreparedStatement q = c.prepareStatement(
                "SELECT url, via, registered_at, expires_at FROM gma_domains WHERE domain = ?"
                        + " AND expires_at > CURRENT_TIMESTAMP")) {
            q.setString(1, domain);
            try (ResultSet rs = q.executeQuery()) {
                if (!rs.next()) {
                    throw ApiException.notFound("no live domain is named \"" + domain + "\"");
                }
                return new DomainInfo(domain, rs.getString(1), rs.getString(2), instant(rs, 3), instant(rs, 4));
            }
        }
    }

    /**
     * The live domains that have a URL (those a PC servlet serves; outbound-only ones have none), by name, at most
     * {@code max}: domain to URL.
     */
    Map<String, String> reachableDomains(int max) throws SQLException {
        Map<String, String> out = new LinkedHashMap<>();
        try (Connection c = db.getConnection(); PreparedStatement q = c.prepareStatement("SELECT domain, url FROM"
                + " gma_domains WHERE url IS NOT NULL AND expires_at > CURRENT_TIMESTAMP ORDER BY domain")) {
            q.setMaxRows(max);
            try (ResultSet rs = q.executeQuery()) {
                while (rs.next()) {
                    out.put(rs.getString(1), rs.getString(2));
                }
            }
        }
        return out;
    }

    void unregisterDomain(String domain, String identity) throws SQLException {
        deleteOwned("gma_domains", "domain", domain, "domain", identity);
    }

    /** Deletes the live row {@code key} if {@code identity} registered it; else 404 or 403 as {@link #refusal}. */
    private void deleteOwned(String table, String column, String key, String what, String identity)
            throws SQLException {
        try (Connection c = db.getConnection(); PreparedStatement del = c.prepareStatement("DELETE FROM " + table
                + " WHERE " + column + " = ? AND owner = ? AND expires_at > CURRENT_TIMESTAMP")) {
            del.setString(1, key);
            del.setString(2, identity);
            if (del.executeUpdate() == 0) {
                throw refusal(c, table, column, key, what, identity);
            }
        }
    }

    /**
     * Deletes rows whose lease has passed, counting them as expiries; the views hid them already. Registries
     * sharing a PostgreSQL take turns: a sweep that finds another registry's sweep under way (its lock) skips, so
     * they do not wait on each other's rows. Each row is deleted, and counted, by one registry only (by a sweep,
     * or by the registration that replaced it): a DELETE that waited on a row another transaction deleted finds
     * it gone.
     *
     * @return how many rows it deleted; 0 when another registry sweeps now
     */
    int sweep() throws SQLException {
        try (Connection c = db.getConnection()) {
            c.setAutoCommit(false);
            try {
                if (sweepLock != null) {
                    try (PreparedStatement lock = c.prepareStatement(sweepLock); ResultSet rs = lock.executeQuery()) {
                        if (!rs.next() || !rs.getBoolean(1)) {
                            c.rollback();
                            return 0;
                        }
                    }
                }
                int[] removed = new int[Metrics.Kind.values().length];
                for (Metrics.Kind kind : Metrics.Kind.values()) {
                    try (PreparedStatement del = c.prepareStatement("DELETE FROM " + (kind == Metrics.Kind.ENDPOINT
                            ? "gma_endpoints" : "gma_domains") + " WHERE expires_at <= CURRENT_TIMESTAMP")) {
                        removed[kind.ordinal()] = del.executeUpdate();
                    }
                }
                c.commit(); // counted once gone for good
                int total = 0;
                for (Metrics.Kind kind : Metrics.Kind.values()) {
                    metrics.count(Metrics.Event.EXPIRED, kind, removed[kind.ordinal()]);
                    total += removed[kind.ordinal()];
                }
                return total;
            } catch (SQLException | RuntimeException e) {
                c.rollback();
                throw e;
            } finally {
                c.setAutoCommit(true);
            }
        }
    }

    long liveEndpoints() throws SQLException {
        return live("gma_endpoints");
    }

    long liveDomains() throws SQLException {
        return live("gma_domains");
    }

    private long live(String table) throws SQLException {
        try (Connection c = db.getConnection(); PreparedStatement q = c.prepareStatement(
                "SELECT COUNT(*) FROM " + table + " WHERE expires_at > CURRENT_TIMESTAMP");
                ResultSet rs = q.executeQuery()) {
            rs.next();
            return rs.getLong(1);
        }
    }

    /** Why an update by owner matched nothing: 404 when no live row has the key, 403 when another owns it. */
    private static ApiException refusal(Connection c, String table, String column, String key, String what,
            String identity) throws SQLException {
        try (PreparedStatement q = c.prepareStatement("SELECT owner FROM " + table + " WHERE " + column
                + " = ? AND expires_at > CURRENT_TIMESTAMP")) {
            q.setString(1, key);
            try (ResultSet rs = q.executeQuery()) {
                if (!rs.next()) {
                    return ApiException.notFound("no live " + what + " is named \"" + key + "\"");
                }
                return ApiException.forbidden(what + " \"" + key + "\" was registered by another identity than \""
                        + identity + "\"");
            }
        }
    }

    private static Instant expiresAt(Connection c, String table, String column, String key) throws SQLException {
        try (PreparedStatement q = c.prepareStatement(
                "SELECT expires_at FROM " + table + " WHERE " + column + " = ?")) {
            q.setString(1, key);
            try (ResultSet rs = q.executeQuery()) {
                rs.next();
                return instant(rs, 1);
            }
        }
    }

    static Instant instant(ResultSet rs, int column) throws SQLException {
        OffsetDateTime time = rs.getObject(column, OffsetDateTime.class);
        return time == null ? null : time.toInstant();
    }
}
