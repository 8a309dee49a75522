package io.gma.examples.agent;

import io.gma.tables.ColumnType;
import io.gma.tables.Row;
import io.gma.tables.TableSchema;
import java.time.Duration;
import java.util.List;

/**
 * The agent's monitoring tables (docs/tables.md, "The agent's tables"). Each row names its domain and host, which
 * with the table's own key column (the CPU, the mount point, the interface) make the primary key, and the time of
 * the sample round that measured it. Rates and shares of time are over the time since the agent's previous round:
 * NULL in its first round, and where a counter went backwards (a reset).
 *
 * <pre>
 * host_cpu    (domain, host, cpu)    busy, usr, sys, iowait, steal, idle: % of the time; load1, load5, load15
 * host_memory (domain, host)         total, available, used: bytes; used_pct; swap_total, swap_used: bytes
 * host_disk   (domain, host, mount)  volume, fs_type, total, free (bytes), used_pct; disk, read_bytes_s, write_bytes_s
 * host_net    (domain, host, iface)  up, speed (bits/s), rx_bytes_s, tx_bytes_s, rx_packets_s, tx_packets_s
 * </pre>
 *
 * <p>Every agent declares the same four tables; what is its own is the predicate, {@code domain = 'cardiff' AND host
 * = 'node1'}, its share, which lets a consumer's query for another host or domain leave it out, and the latest
 * retention, a few of its sampling intervals.
 */
public final class HostTables {
    /** Per CPU, and a row with {@link #ALL_CPUS} for the whole machine. */
    public static final String CPU = "host_cpu";
    /** One row per host. */
    public static final String MEMORY = "host_memory";
    /** Per file system, by its mount point. */
    public static final String DISK = "host_disk";
    /** Per network interface, loopback left out. */
    public static final String NET = "host_net";
    /** The {@code cpu} of the row that sums every CPU of the machine; the others are 0, 1, ... */
    public static final long ALL_CPUS = -1;
    /** The shortest latest retention; at least a few intervals otherwise. */
    static final Duration MIN_RETENTION = Duration.ofSeconds(10);
    /** How many sample rounds a row stays the latest of its key without being sampled again. */
    static final int ROUNDS_KEPT = 3;

    private HostTables() {
    }

    /**
     * The four tables as the agent of {@code host} in {@code domain} declares them: its predicate names both, and
     * a row stays the latest of its key for {@link #latestRetention(Duration) three intervals} (at least 10 s).
     *
     * @throws io.gma.tables.TableException naming a host or domain too long for a predicate
     */
    public static List<TableSchema> schemas(String domain, String host, Duration interval) {
        String predicate = predicate(domain, host);
        Duration retention = latestRetention(interval);
        return List.of(cpu().predicate(predicate).latestRetention(retention).build(),
                memory().predicate(predicate).latestRetention(retention).build(),
                disk().predicate(predicate).latestRetention(retention).build(),
                net().predicate(predicate).latestRetention(retention).build());
    }

    /**
     * How long a row stays the latest of its key: {@value #ROUNDS_KEPT} sampling intervals, so that a late round
     * does not empty a latest query, while a file system or interface that went away leaves it soon; at least
     * 10 s, in whole seconds (the registry keeps seconds).
     */
    static Duration latestRetention(Duration interval) {
        long millis = Math.max(MIN_RETENTION.toMillis(), interval.toMillis() * ROUNDS_KEPT);
        return Duration.ofSeconds((millis + 999) / 1000);
    }

    /** {@code domain = '...' AND host = '...'}, quotes in either doubled as SQL has it. */
    static String predicate(String domain, String host) {
        return "domain = " + literal(domain) + " AND host = " + literal(host);
    }

    private static String literal(String s) {
        return "'" + s.replace("'", "''") + "'";
    }

    private static TableSchema.Builder located(String name) {
        return TableSchema.builder(name).column("domain", ColumnType.STRING).column("host", ColumnType.STRING);
    }

    static TableSchema.Builder cpu() {
        return located(CPU).column("cpu", ColumnType.INTEGER)
                .column("busy", ColumnType.DOUBLE).column("usr", ColumnType.DOUBLE).column("sys", ColumnType.DOUBLE)
                .column("iowait", ColumnType.DOUBLE).column("steal", ColumnType.DOUBLE)
                .column("idle", ColumnType.DOUBLE)
                .column("load1", ColumnType.DOUBLE).column("load5", ColumnType.DOUBLE)
                .column("load15", ColumnType.DOUBLE)
                .column("sampled", ColumnType.TIMESTAMP).primaryKey("domain", "host", "cpu");
    }

    static TableSchema.Builder memory() {
        return located(MEMORY).column("total", ColumnType.INTEGER).column("available", ColumnType.INTEGER)
                .column("used", ColumnType.INTEGER).column("used_pct", ColumnType.DOUBLE)
                .column("swap_total", ColumnType.INTEGER).column("swap_used", ColumnType.INTEGER)
                .column("sampled", ColumnType.TIMESTAMP).primaryKey("domain", "host");
    }

    static TableSchema.Builder disk() {
        return located(DISK).column("mount", ColumnType.STRING).column("volume", ColumnType.STRING)
                .column("fs_type", ColumnType.STRING).column("total", ColumnType.INTEGER)
                .column("free", ColumnType.INTEGER).column("used_pct", ColumnType.DOUBLE)
                .column("disk", ColumnType.STRING).column("read_bytes_s", ColumnType.DOUBLE)
                .column("write_bytes_s", ColumnType.DOUBLE)
                .column("sampled", ColumnType.TIMESTAMP).primaryKey("domain", "host", "mount");
    }

    static TableSchema.Builder net() {
        return located(NET).column("iface", ColumnType.STRING).column("up", ColumnType.BOOLEAN)
                .column("speed", ColumnType.INTEGER)
                .column("rx_bytes_s", ColumnType.DOUBLE).column("tx_bytes_s", ColumnType.DOUBLE)
                .column("rx_packets_s", ColumnType.DOUBLE).column("tx_packets_s", ColumnType.DOUBLE)
                .column("sampled", ColumnType.TIMESTAMP).primaryKey("domain", "host", "iface");
    }

    /**
     * A row of {@code schema} filled by column name, so that a value cannot land in its neighbour's column; the
     * columns not set are NULL.
     */
    static final class Values {
        private final TableSchema schema;
        private final Row.Builder row;

        Values(TableSchema schema) {
            this.schema = schema;
            this.row = Row.builder(schema.columns().size());
            for (int i = 0; i < schema.columns().size(); i++) {
                row.setNull(i);
            }
        }

        /**
         * Sets a column; null is NULL.
         *
         * @throws IllegalArgumentException naming a column the table does not have (a mistake here)
         */
        Values put(String column, Object value) {
            int i = schema.indexOf(column);
            if (i < 0) {
                throw new IllegalArgumentException("column " + column + " is not a column of " + schema.name());
            }
            row.set(i, value);
            return this;
        }

        Row row() {
            return row.build();
        }
    }
}
