package io.gma.archiver;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gma.tables.ColumnType;
import io.gma.tables.TableSchema;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(value = 30, unit = TimeUnit.SECONDS)
class ArchiveTableIndexTest {
    /**
     * The period index serves a history's order (insert time, then producer), so that an answer over its bound
     * stops at the bound instead of sorting the period; and a history of one key column after the first (a host
     * without its domain) reads that column's index, not the whole period: on an hour of 1,000 hosts that was a
     * scan of 3.6 million rows a query.
     */
    @Test
    void aKeyColumnAfterTheFirstHasAnIndexOfItsOwnThatH2Uses() throws Exception {
        TableSchema schema = TableSchema.builder("host_cpu").column("domain", ColumnType.STRING)
                .column("host", ColumnType.STRING).column("cpu", ColumnType.INTEGER)
                .column("load1", ColumnType.DOUBLE).primaryKey("domain", "host", "cpu").build();
        ArchiveTable table = new ArchiveTable(schema, 7, 0, Duration.ofHours(1), ArchiveDatabase.Dialect.H2);
        try (Connection c = DriverManager.getConnection("jdbc:h2:mem:index-test");
                Statement s = c.createStatement()) {
            for (String ddl : table.ddl()) {
                s.execute(ddl);
            }
            assertTrue(plan(s, "\"host\" IN ('h17')").contains("gma_archive_7_key1:"), plan(s, "\"host\" IN"
                    + " ('h17')"));
            assertTrue(plan(s, "\"cpu\" IN (3)").contains("gma_archive_7_key2:"), plan(s, "\"cpu\" IN (3)"));
            String both = plan(s, "\"domain\" IN ('d') AND \"host\" IN ('h17')");
            assertTrue(both.contains("gma_archive_7_key") && !both.contains("gma_archive_7_time:"), both);
            String first = plan(s, "\"domain\" IN ('d')");
            assertTrue(first.contains("gma_archive_7_key:"), first);
            // the whole period in its order, from the period index: read no further than the answer's bound
            String all = plan(s, "TRUE");
            assertTrue(all.contains("gma_archive_7_period:") && all.contains("/* index sorted */"), all);
        }
    }

    /** H2's plan of a history query as the archive asks it, narrowed by {@code where}. */
    private static String plan(Statement s, String where) throws Exception {
        try (ResultSet r = s.executeQuery("EXPLAIN SELECT * FROM \"host_cpu\" WHERE \"gma_insert_micros\" >= 0 AND "
                + where + " ORDER BY \"gma_insert_micros\", \"gma_producer\"")) {
            r.next();
            return r.getString(1);
        }
    }
}
