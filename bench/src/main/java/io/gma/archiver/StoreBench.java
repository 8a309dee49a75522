package io.gma.archiver;

import io.gma.client.TableArchive;
import io.gma.client.TableHistory;
import io.gma.client.TableRow;
import io.gma.tables.TableQuery;
import io.gma.tables.TableSchema;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.StringJoiner;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.function.IntFunction;

/**
 * The archiver's store and history paths, for the bench's archive stage (issue 24's benchmark): in the archiver's
 * package, within the bench module, so that it drives the package-private classes a running archiver uses
 * ({@link ArchiveDatabase}, {@link ArchiveTable}, {@link ArchiveWriter}, {@link ArchiveReader}) without widening
 * the archiver's API. Beside them, a plain JDBC batch insert of the same rows into a table of the same DDL.
 */
public final class StoreBench implements AutoCloseable {
    /** The archiver's rows per transaction, which the plain insert uses too. */
    public static final int BATCH = ArchiveWriter.BATCH;
    /** The most rows a consumer's history answer holds (a query over it gets TOO_LARGE). */
    public static final int MAX_HISTORY_ROWS = io.gma.client.Consumer.MAX_HISTORY_ROWS;

    private final ArchiveDatabase db;
    private final ExecutorService readers = Executors.newSingleThreadExecutor();

    private StoreBench(ArchiveDatabase db) {
        this.db = db;
    }

    /** Opens the database as an archiver does (its pool of 4). */
    public static StoreBench open(String url) throws ArchiveException {
        return new StoreBench(ArchiveDatabase.open(url, "", "", 4));
    }

    /** A table readied as the archiver readies it (registered, created with its indexes). */
    public final class Table {
        private final ArchiveTable table;

        private Table(ArchiveTable table) {
            this.table = table;
        }

        /**
         * Stores {@code rows} through the archiver's writer: queued as a link's event loop queues them (waiting
         * while the queue is nearly full, so that none is dropped), written by its thread in batches of
         * {@link #BATCH}, one transaction each; returns when all are stored.
         *
         * @return nanoseconds from the first row offered to the last stored
         */
        public long archive(List<TableRow> rows) throws InterruptedException {
            long before = done();
            long start = System.nanoTime();
            try (ArchiveWriter writer = new ArchiveWriter(db, (t, r) -> { })) {
                for (TableRow r : rows) {
                    while (writer.queued() >= ArchiveWriter.QUEUE_ROWS - BATCH) {
                        Thread.sleep(0, 100_000);
                    }
                    writer.offer(table, r);
                }
                while (done() - before < rows.size()) {
                    Thread.sleep(0, 200_000);
                }
                long nanos = System.nanoTime() - start;
                if (table.counters.dropped.get() > 0 || table.counters.refused.get() > 0) {
                    throw new IllegalStateException("the archiver dropped " + table.counters.dropped.get()
                            + " and refused " + table.counters.refused.get() + " rows");
                }
                return nanos;
            }
        }

        private long done() {
            return table.counters.stored.get() + table.counters.duplicates.get() + table.counters.refused.get()
                    + table.counters.dropped.get();
        }

        /** Rows stored by the archiver (not duplicates). */
        public long stored() {
            return table.counters.stored.get();
        }

        /** The answer to a history query, as the archiver's reader gives it to the consumer's TABLE_HISTORY. */
        public TableHistory history(String sql, long sinceMicros) throws Exception {
            TableQuery q = TableQuery.parseHistory(sql);
            TableArchive.Request request = new TableArchive.Request(q.bind(table.schema()), sinceMicros, false,
                    MAX_HISTORY_ROWS, "bench");
            return new ArchiveReader(db, table, readers).answer(request).toCompletableFuture().get();
        }

        /** How many rows the table holds. */
        public long count() throws SQLException {
            try (Connection c = db.connection()) {
                return table.count(c);
            }
        }
    }

    /** Readies {@code schema} as an archiver does. */
    public Table prepare(TableSchema schema) throws ArchiveException {
        return new Table(db.prepare(schema, Duration.ofDays(1)));
    }

    /**
     * Creates a table of {@code schema}'s name with the DDL and indexes the archive gives it, outside the
     * archive's register: the plain insert's table.
     */
    public void createPlain(TableSchema schema) throws SQLException {
        ArchiveTable like = new ArchiveTable(schema, 1_000_000 + Math.abs(schema.name().hashCode() % 1_000_000), 0,
                Duration.ZERO, db.dialect());
        try (Connection c = db.connection(); Statement s = c.createStatement()) {
            for (String ddl : like.ddl()) {
                s.execute(ddl);
            }
        }
    }

    /**
     * Inserts rows by plain JDBC: one connection, one PreparedStatement of a plain INSERT, addBatch per row and
     * executeBatch and commit every {@link #BATCH} rows.
     *
     * @param batches gives batch i's rows; null past the last
     * @return nanoseconds taken
     */
    public long plain(TableSchema schema, IntFunction<List<TableRow>> batches) throws SQLException {
        StringJoiner cols = new StringJoiner(", ");
        StringJoiner marks = new StringJoiner(", ");
        cols.add("\"" + ArchiveTable.PRODUCER + "\"").add("\"" + ArchiveTable.INSERTED + "\"");
        marks.add("?").add("?");
        for (var col : schema.columns()) {
            cols.add("\"" + col.name() + "\"");
            marks.add("?");
        }
        String sql = "INSERT INTO \"" + schema.name() + "\" (" + cols + ") VALUES (" + marks + ")";
        long start = System.nanoTime();
        try (Connection c = db.connection(); PreparedStatement ps = c.prepareStatement(sql)) {
            c.setAutoCommit(false);
            for (int i = 0;; i++) {
                List<TableRow> rows = batches.apply(i);
                if (rows == null) {
                    break;
                }
                for (TableRow r : rows) {
                    ps.setString(1, r.producer());
                    ps.setLong(2, r.insertMicros());
                    JdbcRows.bind(ps, 3, schema, r.row());
                    ps.addBatch();
                }
                ps.executeBatch();
                c.commit();
            }
            c.setAutoCommit(true);
        }
        return System.nanoTime() - start;
    }

    /** Drops a table, and its line in the archive's register. */
    public void drop(String name) throws SQLException {
        try (Connection c = db.connection(); Statement s = c.createStatement()) {
            s.execute("DROP TABLE IF EXISTS \"" + name + "\"");
        }
        try (Connection c = db.connection(); PreparedStatement ps = c.prepareStatement(
                "DELETE FROM gma_archive_tables WHERE name = ?")) {
            ps.setString(1, name);
            ps.executeUpdate();
        }
    }

    /** Which database: H2 or POSTGRESQL. */
    public String dialect() {
        return db.dialect().name();
    }

    @Override
    public void close() throws InterruptedException {
        readers.shutdown();
        readers.awaitTermination(5, TimeUnit.SECONDS);
        db.close();
    }
}
