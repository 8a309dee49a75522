package io.gma.archiver;

import io.gma.client.Consumer;
import io.gma.client.ContinuousQuery;
import io.gma.client.EndpointException;
import io.gma.client.RowHandler;
import io.gma.client.TableHistory;
import io.gma.client.TableRow;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Follows the producers of each archived table: its continuous query ({@code SELECT * FROM table}, which the
 * consumer's mediator keeps subscribed to every producer that comes, in every domain) brings each new row to the
 * {@link ArchiveWriter}. What a producer inserted while the archiver was not subscribed to it (before the archiver
 * started, while it was down, before it found the producer) is caught up from the producer itself: each time the
 * query takes a producer on, it is asked for its rows since the newest the archive had of it before the first row
 * that came live ({@link Consumer#historyFrom}, in pages of {@link #PAGE}); rows of it that were dropped (a full
 * write queue) are asked for again from the first dropped. A producer that keeps history answers with its rows,
 * complete back to its retention; one that keeps none, with its latest rows. What the answer cannot vouch for, from
 * the archive's newest row to where the answer is complete (or the first live row, if sooner), is a gap: counted,
 * and logged naming the producer and the period. Rows that come both ways are stored once.
 *
 * <p>Threads: {@link #tick} on the archiver's follow thread; rows on the links' event loops; drops on the writer's.
 */
final class Follower {
    private static final Logger LOG = LoggerFactory.getLogger(Archiver.class);
    /** Rows asked for per history query of a catch-up. */
    static final int PAGE = 10_000;

    private final Consumer consumer;
    private final ArchiveDatabase db;
    private final ArchiveWriter writer;
    private final long retentionMicros;
    private final Map<String, Followed> tables = new ConcurrentHashMap<>();

    /** A table followed. */
    private static final class Followed {
        final ArchiveTable table;
        /** Per producer, the insert time of the first row that came live since it was taken on. */
        final Map<String, Long> firstLive = new ConcurrentHashMap<>();
        /** Per producer, the insert time of the oldest row dropped since it was last caught up with. */
        final Map<String, Long> droppedFrom = new ConcurrentHashMap<>();
        /** The producers caught up with, while the query follows them; the follow thread's. */
        final Set<String> caughtUp = new HashSet<>();
        volatile ContinuousQuery query;

        Followed(ArchiveTable table) {
            this.table = table;
        }
    }

    Follower(Consumer consumer, ArchiveDatabase db, ArchiveWriter writer, long retentionMicros) {
        this.consumer = consumer;
        this.db = db;
        this.writer = writer;
        this.retentionMicros = retentionMicros;
    }

    /**
     * Starts following {@code table}'s producers: subscribes to each now (and to those that come); each is caught
     * up with at the next tick.
     *
     * @throws EndpointException as {@link Consumer#continuous}
     */
    void follow(ArchiveTable table) throws EndpointException {
        Followed f = new Followed(table);
        RowHandler handler = row -> {
            f.firstLive.putIfAbsent(row.producer(), row.insertMicros());
            writer.offer(table, row);
        };
        f.query = consumer.continuous("SELECT * FROM " + table.name(), handler);
        tables.put(table.name(), f);
    }

    /** A row of {@code table} from {@code row.producer()} was dropped: it is asked for again at the next tick. */
    void dropped(ArchiveTable table, TableRow row) {
        Followed f = tables.get(table.name());
        if (f != null) {
            f.droppedFrom.merge(row.producer(), row.insertMicros(), Math::min);
        }
    }

    /** Catches up with the producers each query took on since the last tick, and with those that lost rows. */
    void tick() {
        for (Followed f : tables.values()) {
            Set<String> now = f.query.producers();
            for (String gone : List.copyOf(f.caughtUp)) {
                if (!now.contains(gone)) {
                    // taken on again later (registered again under its name): caught up with again, from then
                    f.caughtUp.remove(gone);
                    f.firstLive.remove(gone);
                }
            }
            for (String p : now) {
                Long dropped = f.droppedFrom.remove(p);
                boolean fresh = !f.caughtUp.contains(p);
                if (!fresh && dropped == null) {
                    continue;
                }
                if (catchUp(f, p, dropped)) {
                    f.caughtUp.add(p);
                } else if (dropped != null) {
                    f.droppedFrom.merge(p, dropped, Math::min); // again at the next tick
                }
            }
        }
    }

    /** The producers {@code table}'s query is subscribed to now; empty when it is not followed. */
    Set<String> following(String table) {
        Followed f = tables.get(table);
        return f == null ? Set.of() : f.query.producers();
    }

    /** Stops following: each query is cancelled at its producers. */
    void close() {
        for (Followed f : tables.values()) {
            f.query.close();
        }
        tables.clear();
    }

    /**
     * @param dropped the insert time of the oldest row of {@code producer} dropped, or null: it was taken on
     * @return whether it caught up (false: the producer or the database failed; the next tick tries again)
     */
    private boolean catchUp(Followed f, String producer, Long dropped) {
        ArchiveTable table = f.table;
        Long live = f.firstLive.get(producer);
        Long last;
        if (dropped != null) {
            last = dropped;
        } else {
            try (Connection c = db.connection()) {
                last = table.lastInsert(c, producer, live);
            } catch (SQLException ex) {
                LOG.info("archiver: cannot catch up with {} for {} yet: {}", producer, table.name(), ex.getMessage());
                return false;
            }
        }
        long since = last != null ? last : Micros.now() - retentionMicros;
        long stored = 0;
        long duplicates = 0;
        boolean first = true;
        while (true) {
            TableHistory page;
            try {
                page = consumer.historyFrom(producer, "SELECT * FROM " + table.name() + " ORDER BY insert_time LIMIT "
                        + PAGE, Micros.instant(since));
            } catch (EndpointException ex) {
                LOG.info("archiver: cannot catch up with {} for {} yet: {}", producer, table.name(), ex.getMessage());
                return false;
            }
            if (first && last != null) {
                long complete = page.completeSinceMicros();
                long to = live != null && dropped == null ? Math.min(complete, live) : complete;
                if (to > last) {
                    gap(table, producer, last, to);
                }
            }
            first = false;
            ArchiveTable.Written w;
            try {
                w = writer.writeNow(table, page.rows());
            } catch (SQLException ex) {
                LOG.info("archiver: cannot catch up with {} for {} yet: {}", producer, table.name(), ex.getMessage());
                return false;
            }
            stored += w.stored();
            duplicates += w.duplicates();
            List<TableRow> rows = page.rows();
            if (rows.size() < PAGE) {
                break;
            }
            long next = rows.get(rows.size() - 1).insertMicros();
            since = next > since ? next : since + 1;
        }
        table.counters.caughtUp.addAndGet(stored);
        if (stored > 0) {
            LOG.info("archiver: caught up with {} rows of {} from {} ({} it had already)", stored, table.name(),
                    producer, duplicates);
        }
        return true;
    }

    private void gap(ArchiveTable table, String producer, long from, long to) {
        table.counters.gaps.incrementAndGet();
        table.counters.gapMicros.addAndGet(to - from);
        LOG.warn("archiver: rows of {} that {} inserted between {} and {} may be missing: the archiver did not have"
                + " them, and the producer keeps no history back that far (its answer is complete from {} only)",
                table.name(), producer, Micros.instant(from), Micros.instant(to), Micros.instant(to));
    }
}
