package io.gma.archiver;

import io.gma.client.TableRow;
import io.gma.tables.ColumnType;
import io.gma.tables.Row;
import io.gma.tables.TableSchema;
import java.sql.Connection;
import java.time.Duration;
import java.util.List;

/** The table the archiver's tests archive, with a column of every type, and what they check of an archive. */
final class Rows {
    static final String TABLE = "host_cpu";

    private Rows() {
    }

    /** host_cpu: site, host (the key), seq, load1, up, sampled; keeping history for {@code history}. */
    static TableSchema schema(Duration history) {
        return TableSchema.builder(TABLE).column("site", ColumnType.STRING).column("host", ColumnType.STRING)
                .column("seq", ColumnType.INTEGER).column("load1", ColumnType.DOUBLE).column("up", ColumnType.BOOLEAN)
                .column("sampled", ColumnType.TIMESTAMP).primaryKey("host").historyRetention(history).build();
    }

    /** Row {@code seq} of {@code site}, on one of {@code hosts} hosts; with a NaN, a NULL and a far timestamp. */
    static Row row(String site, int seq, int hosts) {
        Double load = seq % 7 == 3 ? Double.NaN : seq * 0.25;
        Boolean up = seq % 5 == 4 ? null : seq % 2 == 0;
        return Row.of(site, site.charAt(0) + "" + (seq % hosts), (long) seq, load, up, seq == 1 ? Long.MIN_VALUE
                : 1_714_564_800_000_000L + seq);
    }

    /** Rows stored in the archive of {@code archiver}'s table. */
    static long stored(Archiver archiver) throws Exception {
        try (Connection c = archiver.database().connection()) {
            return archiver.table(TABLE).count(c);
        }
    }

    /** The seq of each row, in order. */
    static List<Long> seqs(List<TableRow> rows, int column) {
        return rows.stream().map(r -> r.row().getLong(column)).toList();
    }
}
