package io.gma.bench.compress;

import io.gma.examples.agent.HostTables;
import io.gma.tables.Row;
import io.gma.tables.RowEnvelope;
import io.gma.tables.TableSchema;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Random;

/**
 * What crosses the tunnel between PC servlets, as message data, for the compress stage: the agent's rows, the
 * data of its TABLE_ROW messages (a {@link RowEnvelope} of each of host_cpu, host_memory, host_disk and host_net,
 * the values made as the agent makes them: shares of CPU ticks, rates over a measured interval in nanoseconds,
 * byte counts), {@code key=value} text lines, and random bytes.
 */
public final class Payloads {
    /** The kinds of payload. */
    public enum Kind {
        /** The agent's rows: 8 CPUs and the whole machine, memory, 3 file systems, 2 interfaces a host a round. */
        AGENT_ROWS("agent rows (TABLE_ROW data)"),
        /** A line of text a row: {@code host=node17 cpu=3 busy=12.5 ...}. */
        TEXT("key=value text lines"),
        /** 1 KB of random bytes a message. */
        RANDOM_1K("random 1 KB"),
        /** 1 KB of zeros a message: what the tunnel, wan, spool and tokens stages stream (main only, not the stage). */
        ZEROS_1K("zeros 1 KB");

        public final String label;

        Kind(String label) {
            this.label = label;
        }
    }

    private static final int CPUS = 8;
    private static final String[] MOUNTS = {"/", "/home", "/var/lib/data"};
    private static final String[] IFACES = {"eth0", "eth1"};

    private Payloads() {
    }

    /** {@code n} payloads of {@code kind}, the same for the same seed. */
    public static List<byte[]> make(Kind kind, int n, long seed) {
        Random random = new Random(seed);
        List<byte[]> out = new ArrayList<>(n);
        if (kind == Kind.ZEROS_1K) {
            for (int i = 0; i < n; i++) {
                out.add(new byte[1024]);
            }
            return out;
        }
        if (kind == Kind.RANDOM_1K) {
            for (int i = 0; i < n; i++) {
                byte[] b = new byte[1024];
                random.nextBytes(b);
                out.add(b);
            }
            return out;
        }
        List<TableSchema> schemas = HostTables.schemas("cardiff", "node1", Duration.ofSeconds(5));
        long queryId = 1 + random.nextInt(1000);
        long sampled = 1_790_000_000_000_000L;
        for (int round = 0; out.size() < n; round++) {
            for (int host = 1; host <= 50 && out.size() < n; host++) {
                String name = "node" + host;
                long elapsed = 5_000_000_000L + random.nextInt(20_000_000); // nanoseconds between samples
                long micros = sampled + round * 5_000_000L + host * 137L;
                for (Object[] row : rows(random, name, elapsed, micros)) {
                    TableSchema schema = schemas.get((Integer) row[0]);
                    Object[] values = java.util.Arrays.copyOfRange(row, 1, row.length);
                    if (kind == Kind.AGENT_ROWS) {
                        out.add(RowEnvelope.encode(queryId, micros + 11, schema, Row.of(values)));
                    } else {
                        out.add(text(schema, values));
                    }
                    if (out.size() == n) {
                        break;
                    }
                }
            }
        }
        return out;
    }

    /** One host's rows of a round, each {table index, column values...}. */
    private static List<Object[]> rows(Random r, String host, long elapsed, long micros) {
        List<Object[]> rows = new ArrayList<>();
        int ticks = (int) (elapsed / 10_000_000L); // 100 Hz
        double load1 = Math.round(r.nextDouble() * 400) / 100.0;
        for (long cpu = HostTables.ALL_CPUS; cpu < CPUS; cpu++) {
            int all = cpu == HostTables.ALL_CPUS ? ticks * CPUS : ticks;
            int usr = r.nextInt(all / 2);
            int sys = r.nextInt(all / 8);
            int iowait = r.nextInt(all / 20 + 1);
            int idle = all - usr - sys - iowait;
            rows.add(new Object[] {0, "cardiff", host, cpu, 100.0 * (usr + sys) / all, 100.0 * usr / all,
                100.0 * sys / all, 100.0 * iowait / all, 0.0, 100.0 * idle / all, load1,
                Math.round(load1 * 90) / 100.0, Math.round(load1 * 80) / 100.0, micros});
        }
        long total = 64L << 30;
        long available = total - (8L << 30) - r.nextInt(1 << 30);
        rows.add(new Object[] {1, "cardiff", host, total, available, total - available,
            100.0 * (total - available) / total, 8L << 30, (long) r.nextInt(1 << 24), micros});
        for (String mount : MOUNTS) {
            long size = 500L << 30;
            long free = size - (100L << 30) - r.nextInt(1 << 30);
            rows.add(new Object[] {2, "cardiff", host, mount, "/dev/nvme0n1p" + mount.length(), "ext4", size, free,
                100.0 * (size - free) / size, "nvme0n1", rate(r.nextInt(50_000_000), elapsed),
                rate(r.nextInt(80_000_000), elapsed), micros});
        }
        for (String iface : IFACES) {
            long bytes = r.nextInt(200_000_000);
            rows.add(new Object[] {3, "cardiff", host, iface, true, 10_000_000_000L, rate(bytes, elapsed),
                rate(r.nextInt(100_000_000), elapsed), rate(bytes / 900, elapsed),
                rate(r.nextInt(100_000), elapsed), micros});
        }
        return rows;
    }

    /** As the agent's: a counter's difference over the measured interval, per second. */
    private static double rate(long delta, long nanos) {
        return delta * 1e9 / nanos;
    }

    /** {@code table=host_cpu domain=cardiff host=node17 cpu=3 busy=12.5 ...}: the row as a text line. */
    private static byte[] text(TableSchema schema, Object[] values) {
        StringBuilder b = new StringBuilder("table=").append(schema.name());
        for (int i = 0; i < values.length; i++) {
            b.append(' ').append(schema.columns().get(i).name()).append('=');
            b.append(values[i] instanceof Double d ? String.format(Locale.ROOT, "%.2f", d) : values[i]);
        }
        return b.toString().getBytes(StandardCharsets.UTF_8);
    }
}
