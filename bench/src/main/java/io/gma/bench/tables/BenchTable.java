package io.gma.bench.tables;

import io.gma.tables.ColumnType;
import io.gma.tables.Row;
import io.gma.tables.RowCodec;
import io.gma.tables.TableSchema;
import java.time.Duration;
import java.util.Locale;

/**
 * The table the tables stage measures: a host's per-CPU sample, as an agent would publish it, and the rows it
 * inserts, each 64 bytes encoded (docs/tables.md, "Rows").
 *
 * <pre>
 * bench_cpu (host STRING, cpu INTEGER, load1 DOUBLE, user_pct DOUBLE, system_pct DOUBLE, iowait_pct DOUBLE,
 *            sampled TIMESTAMP, PRIMARY KEY (host, cpu))
 *
 * 1 bitmap + 22 host ("node-0042.cardiff.gma", its length first) + 1 cpu + 4 x 8 doubles + 8 sampled = 64 bytes
 * </pre>
 *
 * <p>{@link #rows} makes a cycle of distinct keys: 1,000 hosts of 10 CPUs (the rows of a host share its name, one
 * string, as an agent's do), with {@code load1} the CPU's number
 * and a fraction, so that {@link #ONE_IN_TEN} ({@code load1 >= 9}) holds for exactly one row in ten and
 * {@link #MATCH_ALL} ({@code load1 >= 0}) for every row, both tests the producer evaluates.
 */
public final class BenchTable {
    /** The table of the continuous queries. */
    public static final String CONTINUOUS = "bench_cpu";
    /** The table of the latest queries (its producers each fix their host by a predicate). */
    public static final String LATEST = "bench_cpu_latest";
    /** The encoding of every row {@link #rows} makes, bytes. */
    public static final int ROW_BYTES = 64;
    /** Distinct keys in a cycle of rows. */
    public static final int KEYS = 10_000;
    /** CPUs of each host. */
    public static final int CPUS = 10;
    /** A continuous query whose WHERE every row satisfies. */
    public static final String MATCH_ALL = "SELECT * FROM " + CONTINUOUS + " WHERE load1 >= 0";
    /** A continuous query whose WHERE one row in ten satisfies. */
    public static final String ONE_IN_TEN = "SELECT * FROM " + CONTINUOUS + " WHERE load1 >= 9";

    /** Each host's name, made once: as an agent names its host, one string for all its rows. */
    private static final String[] HOSTS = new String[KEYS / CPUS];

    static {
        for (int h = 0; h < HOSTS.length; h++) {
            HOSTS[h] = host(h);
        }
    }

    private BenchTable() {
    }

    /**
     * The schema, with a predicate or none.
     *
     * @param predicate null, or this producer's share ({@code host = '...'})
     */
    public static TableSchema schema(String table, String predicate) {
        return TableSchema.builder(table).column("host", ColumnType.STRING).column("cpu", ColumnType.INTEGER)
                .column("load1", ColumnType.DOUBLE).column("user_pct", ColumnType.DOUBLE)
                .column("system_pct", ColumnType.DOUBLE).column("iowait_pct", ColumnType.DOUBLE)
                .column("sampled", ColumnType.TIMESTAMP).primaryKey("host", "cpu").predicate(predicate)
                .latestRetention(Duration.ofMinutes(10)).build();
    }

    /** Host {@code h}'s name: 21 characters for every h under 10,000. */
    public static String host(int h) {
        return String.format(Locale.ROOT, "node-%04d.cardiff.gma", h);
    }

    /** Row {@code i} of the cycle: host {@code i / 10}, CPU {@code i % 10}, sampled at {@code micros}. */
    public static Row row(int i, long micros) {
        return row(i / CPUS % (KEYS / CPUS), i % CPUS, micros);
    }

    /** The row of a host's CPU, sampled at {@code micros}; {@code load1} is the CPU's number and a fraction. */
    public static Row row(int host, int cpu, long micros) {
        int i = host * CPUS + cpu;
        String name = host < HOSTS.length ? HOSTS[host] : host(host);
        return Row.of(name, (long) cpu, cpu + 0.25 + (i % 7) / 100.0, 12.5 + i % 50, 3.25 + i % 11, 0.5 + i % 3,
                micros);
    }

    /** A cycle of {@link #KEYS} rows, each key once. */
    public static Row[] rows(long micros) {
        Row[] rows = new Row[KEYS];
        for (int i = 0; i < KEYS; i++) {
            rows[i] = row(i, micros);
        }
        return rows;
    }

    /** The rows' encodings: what plain streaming sends as DATA. */
    public static byte[][] encoded(TableSchema schema, Row[] rows) {
        byte[][] bytes = new byte[rows.length][];
        for (int i = 0; i < rows.length; i++) {
            bytes[i] = RowCodec.encode(schema, rows[i]);
            if (bytes[i].length != ROW_BYTES) {
                throw new IllegalStateException("row " + i + " is " + bytes[i].length + " bytes encoded, not "
                        + ROW_BYTES);
            }
        }
        return bytes;
    }
}
