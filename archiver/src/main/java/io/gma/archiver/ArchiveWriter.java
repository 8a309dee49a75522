package io.gma.archiver;

import io.gma.client.TableRow;
import io.gma.wire.Threads;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BiConsumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Writes the rows of the continuous queries: they are queued as they come (on the links' event loops, which must
 * not wait), and one thread writes them in batches of up to {@link #BATCH} rows, one transaction each. A database
 * that cannot be reached is tried again, every second up to every 30 s, while rows queue; past
 * {@link #QUEUE_ROWS} queued, a row that comes is dropped, counted, and its producer reported, so that it is asked
 * for its history again. A batch the database refuses as a whole is written row by row, so that one row it refuses
 * (a string PostgreSQL cannot hold, a key over its index's limit) costs that row only.
 */
final class ArchiveWriter implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(Archiver.class);
    /** The most rows waiting to be written. */
    static final int QUEUE_ROWS = 100_000;
    /** The most rows per transaction. */
    static final int BATCH = 1_000;
    /** How long closing waits for the queue to be written. */
    private static final Duration DRAIN = Duration.ofSeconds(10);

    private record Pending(ArchiveTable table, TableRow row) {
    }

    private final ArchiveDatabase db;
    /** Writes that failed because the database could not be reached, and were tried again. */
    private final AtomicLong storeFailures = new AtomicLong();
    private final BiConsumer<ArchiveTable, TableRow> dropped;
    private final ArrayBlockingQueue<Pending> queue = new ArrayBlockingQueue<>(QUEUE_ROWS);
    private final Thread thread;
    private volatile boolean closing;
    /** Whether the database was unreachable at the last write: its WARN is said once per outage. */
    private final AtomicBoolean down = new AtomicBoolean();
    private long lastDropLog;

    /** @param dropped told of each row dropped for a full queue, and its table */
    ArchiveWriter(ArchiveDatabase db, BiConsumer<ArchiveTable, TableRow> dropped) {
        this.db = db;
        this.dropped = dropped;
        this.thread = Threads.start("gma-archiver-writer", this::run);
    }

    /** Queues a row to write; on a link's event loop, so never waits: a full queue drops it (counted). */
    void offer(ArchiveTable table, TableRow row) {
        if (closing || !queue.offer(new Pending(table, row))) {
            table.counters.dropped.incrementAndGet();
            dropped.accept(table, row);
            long now = System.nanoTime();
            if (now - lastDropLog > TimeUnit.SECONDS.toNanos(10)) {
                lastDropLog = now; // a race here costs a line of log at most
                LOG.warn("archiver: the write queue is full ({} rows): rows of {} are dropped (counted, and asked for"
                        + " again from producers that keep history)", QUEUE_ROWS, table.name());
            }
        }
    }

    int queued() {
        return queue.size();
    }

    long storeFailures() {
        return storeFailures.get();
    }

    /**
     * Writes rows now, on the caller's thread (a catch-up), as the queue's are written.
     *
     * @throws SQLException the database could not be reached
     */
    ArchiveTable.Written writeNow(ArchiveTable table, List<TableRow> rows) throws SQLException {
        int stored = 0;
        int duplicates = 0;
        for (int from = 0; from < rows.size(); from += BATCH) {
            Map<ArchiveTable, List<TableRow>> one = Map.of(table, rows.subList(from, Math.min(rows.size(),
                    from + BATCH)));
            ArchiveTable.Written w = write(one).get(table);
            stored += w.stored();
            duplicates += w.duplicates();
        }
        return new ArchiveTable.Written(stored, duplicates);
    }

    private void run() {
        List<Pending> batch = new ArrayList<>(BATCH);
        long backoff = 1000;
        while (true) {
            if (batch.isEmpty()) {
                Pending first;
                try {
                    first = queue.poll(200, TimeUnit.MILLISECONDS);
                } catch (InterruptedException ex) {
                    return;
                }
                if (first == null) {
                    if (closing) {
                        return;
                    }
                    continue;
                }
                batch.add(first);
                queue.drainTo(batch, BATCH - 1);
            }
            Map<ArchiveTable, List<TableRow>> byTable = new LinkedHashMap<>();
            for (Pending p : batch) {
                byTable.computeIfAbsent(p.table(), t -> new ArrayList<>()).add(p.row());
            }
            try {
                write(byTable);
                batch.clear();
                backoff = 1000;
            } catch (SQLException ex) {
                // unreachable: the same batch again, later; the queue fills meanwhile
                if (closing) {
                    LOG.warn("archiver: stopping with the database unreachable: {} rows are not stored",
                            batch.size() + queue.size());
                    batch.forEach(p -> p.table().counters.dropped.incrementAndGet());
                    queue.forEach(p -> p.table().counters.dropped.incrementAndGet());
                    return;
                }
                try {
                    Thread.sleep(backoff);
                } catch (InterruptedException stop) {
                    return;
                }
                backoff = Math.min(30_000, backoff * 2);
            }
        }
    }

    /**
     * Writes each table's rows in one transaction; a batch refused as a whole is written row by row.
     *
     * @throws SQLException the database could not be reached (counted, and said once per outage)
     */
    private Map<ArchiveTable, ArchiveTable.Written> write(Map<ArchiveTable, List<TableRow>> byTable)
            throws SQLException {
        Map<ArchiveTable, ArchiveTable.Written> out = new LinkedHashMap<>();
        try (Connection c = db.connection()) {
            for (Map.Entry<ArchiveTable, List<TableRow>> e : byTable.entrySet()) {
                ArchiveTable.Written w;
                c.setAutoCommit(false);
                try {
                    w = e.getKey().write(c, e.getValue());
                    c.commit();
                } catch (SQLException refused) {
                    c.rollback();
                    if (ArchiveDatabase.unreachable(refused)) {
                        throw refused;
                    }
                    w = writeEach(c, e.getKey(), e.getValue());
                }
                e.getKey().counters.stored.addAndGet(w.stored());
                e.getKey().counters.duplicates.addAndGet(w.duplicates());
                out.put(e.getKey(), w);
            }
            if (down.compareAndSet(true, false)) {
                LOG.info("archiver: the database {} answers again", db.shown());
            }
            return out;
        } catch (SQLException ex) {
            storeFailures.incrementAndGet();
            if (down.compareAndSet(false, true)) {
                LOG.warn("archiver: cannot write to the database {} ({}); rows queue (at most {}) and the write is"
                        + " tried again", db.shown(), ex.getMessage(), QUEUE_ROWS);
            }
            throw ex;
        }
    }

    /** The rows one at a time, each in its own transaction: a duplicate is counted, a refusal counted and said. */
    private ArchiveTable.Written writeEach(Connection c, ArchiveTable table, List<TableRow> rows)
            throws SQLException {
        int stored = 0;
        int duplicates = 0;
        c.setAutoCommit(true);
        for (TableRow r : rows) {
            try {
                ArchiveTable.Written w = table.write(c, List.of(r));
                stored += w.stored();
                duplicates += w.duplicates();
            } catch (SQLException ex) {
                if (ArchiveDatabase.unreachable(ex)) {
                    throw ex;
                }
                if ("23505".equals(ex.getSQLState())) {
                    duplicates++; // written at once by another connection: it is there
                    continue;
                }
                table.counters.refused.incrementAndGet();
                LOG.warn("archiver: the database refused a row of {} from {} inserted at {}: {}", table.name(),
                        r.producer(), Micros.instant(r.insertMicros()), ex.getMessage());
            }
        }
        return new ArchiveTable.Written(stored, duplicates);
    }

    /** Writes what is queued (for at most 10 s), then stops. */
    @Override
    public void close() {
        closing = true;
        try {
            thread.join(DRAIN.toMillis());
        } catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
        }
        if (thread.isAlive()) {
            thread.interrupt();
            LOG.warn("archiver: {} rows were not written within {} s of stopping", queue.size(), DRAIN.toSeconds());
        }
    }
}
