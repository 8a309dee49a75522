package io.gma.archiver;

import io.gma.client.TableArchive;
import io.gma.client.TableRow;
import io.gma.tables.BoundQuery;
import io.gma.tables.Column;
import io.gma.tables.Row;
import io.gma.tables.TableSchema;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.StringJoiner;

/**
 * One archived table in the database, and its SQL. Its rows are the declared columns (names quoted, so that no
 * word a database reserves gets in the way) after two of the archive's own: the producer's name and the insert
 * time in microseconds. INTEGER and TIMESTAMP are BIGINT (every value of a table fits, where a database's own
 * timestamp would not), DOUBLE is DOUBLE PRECISION, STRING VARCHAR(65535), BOOLEAN BOOLEAN.
 *
 * <pre>
 * unique (gma_producer, gma_insert_micros, key...)   a row comes once, whatever re-delivers it
 * index  (gma_insert_micros, gma_producer)            history: a period, in its order (read no further than
 *                                                     its bound); retention
 * index  (key..., gma_insert_micros)                  a key's rows, and the newest per key (latest)
 * index  (key_i, gma_insert_micros), i past the first  a key column's rows without the ones before it (a host
 *                                                     without its domain)
 * </pre>
 *
 * <p>Stateless apart from its SQL: each call takes the connection to use.
 */
final class ArchiveTable {
    static final String PRODUCER = "gma_producer";
    static final String INSERTED = "gma_insert_micros";
    /** Rows read from the database per round trip. */
    private static final int FETCH = 1000;

    private final TableSchema schema;
    private final int number;
    private final long startedMicros;
    private final long retentionMicros;
    private final ArchiveDatabase.Dialect dialect;
    private final String quoted;
    private final String columns;
    private final String write;
    /** What the archiver did with this table's rows. */
    final Counters counters = new Counters();

    /** What a write did with its rows. */
    record Written(int stored, int duplicates) {
    }

    ArchiveTable(TableSchema schema, int number, long startedMicros, Duration retention,
            ArchiveDatabase.Dialect dialect) {
        this.schema = schema;
        this.number = number;
        this.startedMicros = startedMicros;
        this.retentionMicros = retention.toNanos() / 1000;
        this.dialect = dialect;
        this.quoted = q(schema.name());
        StringJoiner cols = new StringJoiner(", ");
        cols.add(q(PRODUCER)).add(q(INSERTED));
        for (Column c : schema.columns()) {
            cols.add(q(c.name()));
        }
        this.columns = cols.toString();
        this.write = dialect == ArchiveDatabase.Dialect.POSTGRESQL ? postgresWrite() : h2Write();
    }

    TableSchema schema() {
        return schema;
    }

    String name() {
        return schema.name();
    }

    private static String q(String identifier) {
        return "\"" + identifier + "\"";
    }

    private static String sqlType(Column c) {
        switch (c.type()) {
            case INTEGER:
            case TIMESTAMP:
                return "BIGINT";
            case DOUBLE:
                return "DOUBLE PRECISION";
            case BOOLEAN:
                return "BOOLEAN";
            default:
                return "VARCHAR(65535)";
        }
    }

    private String keyColumns() {
        StringJoiner key = new StringJoiner(", ");
        for (String k : schema.primaryKey()) {
            key.add(q(k));
        }
        return key.toString();
    }

    /** The table and its indexes, each created if missing. */
    List<String> ddl() {
        StringJoiner defs = new StringJoiner(", ");
        defs.add(q(PRODUCER) + " VARCHAR(200) NOT NULL").add(q(INSERTED) + " BIGINT NOT NULL");
        for (int i = 0; i < schema.columns().size(); i++) {
            Column c = schema.columns().get(i);
            defs.add(q(c.name()) + " " + sqlType(c) + (schema.isKey(i) ? " NOT NULL" : ""));
        }
        String prefix = "gma_archive_" + number;
        defs.add("CONSTRAINT " + q(prefix + "_once") + " UNIQUE (" + q(PRODUCER) + ", " + q(INSERTED) + ", "
                + keyColumns() + ")");
        List<String> ddl = new ArrayList<>(List.of("CREATE TABLE IF NOT EXISTS " + quoted + " (" + defs + ")",
                "CREATE INDEX IF NOT EXISTS " + q(prefix + "_period") + " ON " + quoted + " (" + q(INSERTED) + ", "
                        + q(PRODUCER) + ")",
                // an archive made before the period index had this one on the time alone: the period index serves
                // all it did, and a history's order (time, then producer) besides
                "DROP INDEX IF EXISTS " + q(prefix + "_time"),
                "CREATE INDEX IF NOT EXISTS " + q(prefix + "_key") + " ON " + quoted + " (" + keyColumns() + ", "
                        + q(INSERTED) + ")"));
        // a key column after the first, alone (a host without its domain): the key index cannot serve it
        List<String> key = schema.primaryKey();
        for (int i = 1; i < key.size(); i++) {
            ddl.add("CREATE INDEX IF NOT EXISTS " + q(prefix + "_key" + i) + " ON " + quoted + " (" + q(key.get(i))
                    + ", " + q(INSERTED) + ")");
        }
        return ddl;
    }

    /** PostgreSQL: a row that is there already is skipped, and counted 0. */
    private String postgresWrite() {
        StringJoiner marks = new StringJoiner(", ");
        for (int i = 0; i < schema.columns().size() + 2; i++) {
            marks.add("?");
        }
        return "INSERT INTO " + quoted + " (" + columns + ") VALUES (" + marks + ") ON CONFLICT DO NOTHING";
    }

    /** H2, which has no ON CONFLICT: MERGE that inserts when not matched, counted 0 when matched. */
    private String h2Write() {
        StringJoiner values = new StringJoiner(", ");
        values.add("CAST(? AS VARCHAR(200))").add("CAST(? AS BIGINT)");
        for (Column c : schema.columns()) {
            values.add("CAST(? AS " + sqlType(c) + ")");
        }
        StringJoiner on = new StringJoiner(" AND ");
        on.add("d." + q(PRODUCER) + " = s." + q(PRODUCER)).add("d." + q(INSERTED) + " = s." + q(INSERTED));
        for (String k : schema.primaryKey()) {
            on.add("d." + q(k) + " = s." + q(k));
        }
        StringJoiner fromS = new StringJoiner(", ");
        for (String c : columns.split(", ")) {
            fromS.add("s." + c);
        }
        return "MERGE INTO " + quoted + " d USING (VALUES (" + values + ")) s (" + columns + ") ON (" + on + ")"
                + " WHEN NOT MATCHED THEN INSERT (" + columns + ") VALUES (" + fromS + ")";
    }

    /**
     * Writes {@code rows} in one batch, in the connection's transaction (the caller commits): those there already
     * are not written again.
     *
     * @throws SQLException the batch failed as a whole (the caller rolls back, and may write the rows one by one)
     */
    Written write(Connection c, List<TableRow> rows) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(write)) {
            for (TableRow r : rows) {
                bind(ps, r);
                ps.addBatch();
            }
            int stored = 0;
            for (int n : ps.executeBatch()) {
                stored += n == PreparedStatement.SUCCESS_NO_INFO ? 1 : n;
            }
            return new Written(stored, rows.size() - stored);
        }
    }

    private void bind(PreparedStatement ps, TableRow r) throws SQLException {
        ps.setString(1, r.producer());
        ps.setLong(2, r.insertMicros());
        JdbcRows.bind(ps, 3, schema, r.row());
    }

    /**
     * The insert time of the newest row of {@code producer} here inserted before {@code before} (null: any), or null
     * when it has none.
     */
    Long lastInsert(Connection c, String producer, Long before) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT MAX(" + q(INSERTED) + ") FROM " + quoted + " WHERE "
                + q(PRODUCER) + " = ? AND " + q(INSERTED) + " < ?")) {
            ps.setString(1, producer);
            ps.setLong(2, before == null ? Long.MAX_VALUE : before);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                long v = rs.getLong(1);
                return rs.wasNull() ? null : v;
            }
        }
    }

    /** The time from which this archive's answers are complete now: its retention's start, or when it began. */
    long completeSince(long nowMicros) {
        return Math.max(nowMicros - retentionMicros, startedMicros);
    }

    /**
     * The rows that answer {@code r}: history in the query's order with its LIMIT, or the newest row per key; at
     * most {@code r.maxRows() + 1}. The database narrows by the insert time and the values the WHERE requires (of
     * key columns only, for latest: others would change which row is a key's newest); the whole WHERE is then
     * applied here, row by row, as the rows stream.
     */
    List<TableRow> read(Connection c, TableArchive.Request r) throws SQLException {
        BoundQuery query = r.query();
        StringBuilder sql = new StringBuilder("SELECT ").append(columns).append(" FROM ").append(quoted)
                .append(" WHERE ").append(q(INSERTED)).append(" >= ?");
        List<Object> args = new ArrayList<>();
        args.add(r.sinceMicros());
        for (Map.Entry<String, List<Object>> e : query.requiredValues().entrySet()) {
            if (r.latest() && !schema.primaryKey().contains(e.getKey())) {
                continue;
            }
            if (e.getValue().isEmpty()) {
                return List.of(); // the WHERE requires a value no row has
            }
            StringJoiner marks = new StringJoiner(", ", " AND " + q(e.getKey()) + " IN (", ")");
            for (Object v : e.getValue()) {
                marks.add("?");
                args.add(v);
            }
            sql.append(marks);
        }
        boolean descending = query.query().descending();
        if (r.latest()) {
            sql.append(" ORDER BY ").append(keyColumns()).append(", ").append(q(INSERTED)).append(" DESC");
        } else {
            String way = descending ? " DESC" : "";
            sql.append(" ORDER BY ").append(q(INSERTED)).append(way).append(", ").append(q(PRODUCER)).append(way);
        }
        long limit = query.query().limit();
        long most = (long) r.maxRows() + 1;
        if (!r.latest() && limit >= 0) {
            most = Math.min(most, limit);
        }
        if (!r.latest() && !query.query().hasWhere()) {
            // every row answers: the database stops at the bound, in the period index's order (H2 would read the
            // whole period into its result first; its lazy execution loses pages under writes, h2database 4142)
            sql.append(" FETCH FIRST ").append(most).append(" ROWS ONLY");
        }
        boolean autoCommit = c.getAutoCommit();
        c.setAutoCommit(false); // PostgreSQL streams a result in fetches only inside a transaction
        try (PreparedStatement ps = c.prepareStatement(sql.toString())) {
            ps.setFetchSize(FETCH);
            for (int i = 0; i < args.size(); i++) {
                Object v = args.get(i);
                if (v instanceof Long l) {
                    ps.setLong(i + 1, l);
                } else if (v instanceof Boolean b) {
                    ps.setBoolean(i + 1, b);
                } else {
                    ps.setString(i + 1, (String) v);
                }
            }
            List<TableRow> out = new ArrayList<>();
            try (ResultSet rs = ps.executeQuery()) {
                List<Object> previousKey = null;
                while (out.size() < most && rs.next()) {
                    TableRow row = row(rs);
                    if (r.latest()) {
                        List<Object> key = key(row.row());
                        if (key.equals(previousKey)) {
                            continue; // an older row of the key just seen
                        }
                        previousKey = key;
                    }
                    if (query.filter().test(row.row())) {
                        out.add(row);
                    }
                }
            }
            return out;
        } finally {
            c.rollback();
            c.setAutoCommit(autoCommit);
        }
    }

    private List<Object> key(Row row) {
        List<Object> key = new ArrayList<>(schema.primaryKey().size());
        for (String k : schema.primaryKey()) {
            key.add(row.get(schema.indexOf(k)));
        }
        return key;
    }

    private TableRow row(ResultSet rs) throws SQLException {
        String producer = rs.getString(1);
        long inserted = rs.getLong(2);
        return new TableRow(Objects.requireNonNull(producer, PRODUCER), inserted, JdbcRows.read(rs, 3, schema));
    }

    /**
     * Deletes the rows inserted before {@code cutoffMicros}, oldest first, at most {@code batch} rows (and those
     * that share the last one's time) per statement, each statement its own transaction, at most
     * {@code maxBatches} of them.
     *
     * @return the rows deleted
     */
    long sweep(Connection c, long cutoffMicros, int batch, int maxBatches) throws SQLException {
        long deleted = 0;
        boolean autoCommit = c.getAutoCommit();
        c.setAutoCommit(true);
        try (PreparedStatement nth = c.prepareStatement("SELECT " + q(INSERTED) + " FROM " + quoted + " WHERE "
                + q(INSERTED) + " < ? ORDER BY " + q(INSERTED) + " OFFSET ? ROWS FETCH NEXT 1 ROWS ONLY");
                PreparedStatement delete = c.prepareStatement("DELETE FROM " + quoted + " WHERE " + q(INSERTED)
                        + " <= ? AND " + q(INSERTED) + " < ?")) {
            for (int i = 0; i < maxBatches; i++) {
                nth.setLong(1, cutoffMicros);
                nth.setInt(2, batch - 1);
                long upTo;
                boolean last;
                try (ResultSet rs = nth.executeQuery()) {
                    last = !rs.next();
                    upTo = last ? cutoffMicros : rs.getLong(1);
                }
                delete.setLong(1, upTo);
                delete.setLong(2, cutoffMicros);
                deleted += delete.executeUpdate();
                if (last) {
                    break;
                }
            }
        } finally {
            c.setAutoCommit(autoCommit);
        }
        return deleted;
    }

    /** How many rows the table holds: for tests and the stats. */
    long count(Connection c) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT COUNT(*) FROM " + quoted);
                ResultSet rs = ps.executeQuery()) {
            rs.next();
            return rs.getLong(1);
        }
    }
}
