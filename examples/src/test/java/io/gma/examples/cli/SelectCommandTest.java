package io.gma.examples.cli;

import static io.gma.examples.cli.GmaCommandsTest.gma;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.gma.client.Producer;
import io.gma.examples.cli.GmaCommandsTest.Run;
import io.gma.registry.Registry;
import io.gma.tables.ColumnType;
import io.gma.tables.Row;
import io.gma.tables.TableSchema;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** {@code gma select} in this JVM against a real registry and a producer of a monitoring table. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class SelectCommandTest {
    /** A time of day as the table and the lines show an insert time. */
    private static final String TIME = "\\d\\d:\\d\\d:\\d\\d\\.\\d{3}";
    private static final long SAMPLED = 1_714_564_800_000_000L; // 2024-05-01T12:00:00Z

    private Registry registry;
    private Producer cpu;

    @BeforeEach
    void start() throws Exception {
        registry = Registry.builder().port(0).build().start();
        cpu = Producer.builder().registry(registry.url()).domain("lan").label("cpu").exactLabel(true).build();
        cpu.declare(TableSchema.builder("probe").column("site", ColumnType.STRING).column("host", ColumnType.STRING)
                .column("cpu", ColumnType.INTEGER).column("busy", ColumnType.DOUBLE).column("up", ColumnType.BOOLEAN)
                .column("sampled", ColumnType.TIMESTAMP).primaryKey("host", "cpu").predicate("site = 'lan'").build());
        cpu.insert("probe", Row.of("lan", "node-2", 0L, 99.25, true, SAMPLED));
        cpu.insert("probe", Row.of("lan", "node-1", 1L, 7.0, false, SAMPLED));
        cpu.insert("probe", Row.of("lan", "node-1", 0L, 12.345678912, true, null));
        cpu.insert("probe", Row.of("lan", "node-1", 2L, null, true, SAMPLED));
    }

    @AfterEach
    void stop() throws Exception {
        cpu.close();
        registry.close();
    }

    private Run select(String... args) {
        String[] all = new String[args.length + 3];
        all[0] = "select";
        all[1] = "--registry";
        all[2] = registry.url();
        System.arraycopy(args, 0, all, 3, args.length);
        return gma(all);
    }

    @Test
    void aLatestQueryPrintsAnAlignedTableWithTheProducerAndInsertTimeOfEachRow() {
        Run r = select("SELECT host, cpu, busy FROM probe WHERE busy > 10 OR busy IS NULL");
        assertEquals(0, r.status(), r.err());
        assertEquals("", r.err());
        String shown = r.out().replaceAll(TIME, "HH:MM:SS.mmm");
        assertEquals("host    cpu     busy  producer  inserted\n"
                + "------  ---  -------  --------  ------------\n"
                + "node-1    0  12.3457  cpu@lan   HH:MM:SS.mmm\n"
                + "node-1    2           cpu@lan   HH:MM:SS.mmm\n"
                + "node-2    0    99.25  cpu@lan   HH:MM:SS.mmm\n"
                + "3 rows\n", shown);
        Run all = select("SELECT * FROM probe WHERE host = 'node-2'");
        assertEquals("site  host    cpu   busy  up    sampled               producer  inserted\n"
                + "----  ------  ---  -----  ----  --------------------  --------  ------------\n"
                + "lan   node-2    0  99.25  true  2024-05-01T12:00:00Z  cpu@lan   HH:MM:SS.mmm\n"
                + "1 row\n", all.out().replaceAll(TIME, "HH:MM:SS.mmm"));
        Run none = select("SELECT host FROM probe WHERE site = 'elsewhere'");
        assertEquals("host  producer  inserted\n----  --------  --------\n0 rows\n", none.out());
    }

    @Test
    void historyPrintsTheRowsKeptInTimeOrder() throws Exception {
        try (Producer kept = Producer.builder().registry(registry.url()).domain("lan").label("kept").exactLabel(true)
                .build()) {
            kept.declare(TableSchema.builder("hist").column("host", ColumnType.STRING).column("busy",
                    ColumnType.DOUBLE).primaryKey("host").historyRetention(java.time.Duration.ofHours(1)).build());
            for (int i = 1; i <= 4; i++) { // one key: latest has one row, history all four
                kept.insert("hist", Row.of("node-1", i * 10.0));
                Thread.sleep(2); // a deliberate pause, not a wait: distinct insert times
            }
            Run all = select("--history", "1h", "SELECT busy FROM hist");
            assertEquals(0, all.status(), all.err());
            assertEquals(List.of("busy  producer  inserted", "----  --------  ------------",
                    "  10  kept@lan  HH:MM:SS.mmm", "  20  kept@lan  HH:MM:SS.mmm",
                    "  30  kept@lan  HH:MM:SS.mmm", "  40  kept@lan  HH:MM:SS.mmm", "4 rows"),
                    all.out().replaceAll(TIME, "HH:MM:SS.mmm").lines().toList());
            Run last = select("--history", "1h", "--json",
                    "SELECT busy FROM hist ORDER BY insert_time DESC LIMIT 2");
            assertEquals(0, last.status(), last.err());
            ObjectMapper mapper = new ObjectMapper();
            assertEquals(List.of(40.0, 30.0), last.out().lines().map(l -> {
                try {
                    return mapper.readTree(l).get("row").get("busy").asDouble();
                } catch (Exception e) {
                    throw new IllegalStateException(l, e);
                }
            }).toList());
            Run latest = select("SELECT busy FROM hist");
            assertTrue(latest.out().contains("1 row"), latest.out());
        }
        Run both = select("--history", "1h", "--continuous", "SELECT busy FROM hist");
        assertEquals(2, both.status(), both.err());
        assertTrue(both.err().contains("--history and --continuous go apart"), both.err());
        Run order = select("SELECT busy FROM hist ORDER BY insert_time");
        assertEquals(2, order.status(), order.err());
    }

    @Test
    void jsonPrintsALineOfJsonPerRowWithEveryValueExact() throws Exception {
        Run r = select("--json", "SELECT host, cpu, busy, up, sampled FROM probe WHERE host = 'node-1' AND cpu < 2");
        assertEquals(0, r.status(), r.err());
        List<String> lines = r.out().lines().toList();
        assertEquals(2, lines.size(), r.out());
        ObjectMapper mapper = new ObjectMapper();
        JsonNode first = mapper.readTree(lines.get(0));
        assertEquals("cpu@lan", first.get("producer").asText());
        Instant inserted = Instant.parse(first.get("inserted").asText());
        assertTrue(Math.abs(Instant.now().toEpochMilli() - inserted.toEpochMilli()) < 60_000, inserted.toString());
        assertEquals(mapper.readTree("{\"host\":\"node-1\",\"cpu\":0,\"busy\":12.345678912,\"up\":true,"
                + "\"sampled\":null}"), first.get("row"));
        assertEquals(mapper.readTree("{\"host\":\"node-1\",\"cpu\":1,\"busy\":7.0,\"up\":false,"
                + "\"sampled\":\"2024-05-01T12:00:00Z\"}"), mapper.readTree(lines.get(1)).get("row"));
    }

    @Test
    void continuousPrintsTheMatchingRowsInsertedAfterItStartedAsTheyCome() throws Exception {
        LiveGma live = new LiveGma("select", "--registry", registry.url(), "--continuous", "--duration", "30",
                "SELECT host, cpu, busy FROM probe WHERE busy > 50");
        live.awaitErr("select: following probe at 1 producer (and those that start later)\n");
        cpu.insert("probe", Row.of("lan", "node-3", 0L, 75.5, true, SAMPLED));
        cpu.insert("probe", Row.of("lan", "node-3", 1L, 5.0, true, SAMPLED)); // not > 50
        cpu.insert("probe", Row.of("lan", "node 4", 0L, 51.0, true, SAMPLED));
        live.awaitOut("node 4");
        assertEquals(0, live.interrupt(), live.err.toString());
        assertTrue(live.out.toString().matches(TIME + " cpu@lan: host=node-3 cpu=0 busy=75.5\n"
                + TIME + " cpu@lan: host=\"node 4\" cpu=0 busy=51\n"), live.out.toString());

        LiveGma json = new LiveGma("select", "--registry", registry.url(), "--continuous", "--json", "--duration",
                "30", "SELECT * FROM probe WHERE host = 'node-5'");
        json.awaitErr("select: following probe");
        cpu.insert("probe", Row.of("lan", "node-5", 0L, 1.5, null, SAMPLED));
        json.awaitOut("\n");
        assertEquals(0, json.interrupt(), json.err.toString());
        JsonNode row = new ObjectMapper().readTree(json.out.toString());
        assertEquals("cpu@lan", row.get("producer").asText());
        assertEquals(new ObjectMapper().readTree("{\"site\":\"lan\",\"host\":\"node-5\",\"cpu\":0,\"busy\":1.5,"
                + "\"up\":null,\"sampled\":\"2024-05-01T12:00:00Z\"}"), row.get("row"));
    }

    @Test
    void aContinuousQueryEndsAtTheEndOfItsDuration() {
        Run r = select("--continuous", "--duration", "1", "SELECT host FROM probe");
        assertEquals(0, r.status(), r.err());
        assertEquals("", r.out());
        assertEquals("select: following probe at 1 producer (and those that start later)\n", r.err());
    }

    @Test
    void anUnknownTableOrColumnFailsAndARefusedQueryIsAUsageErrorEachInOneLine() {
        Run table = select("SELECT host FROM nosuch");
        assertEquals(1, table.status(), table.err());
        assertEquals("gma: table nosuch: no table is declared as \"nosuch\"\n", table.err());
        Run column = select("SELECT host, nosuch FROM probe");
        assertEquals(1, column.status(), column.err());
        String noColumn = "gma: column nosuch is not a column of table probe; its columns are [site, host, cpu, busy,"
                + " up, sampled]\n";
        assertEquals(noColumn, column.err());
        Run continuous = select("--continuous", "SELECT host FROM probe WHERE nosuch > 1");
        assertEquals(1, continuous.status(), continuous.err());
        assertEquals(noColumn, continuous.err());
        Run refused = select("SELECT host FROM probe ORDER BY host");
        assertEquals(2, refused.status(), refused.err());
        assertTrue(refused.err().matches("[^\n]*ORDER BY[^\n]* \\(see gma select --help\\)\n"), refused.err());
        Run duration = select("--duration", "5", "SELECT host FROM probe");
        assertEquals(2, duration.status(), duration.err());
        assertEquals("--duration 5 needs --continuous: a latest query ends as soon as it has its rows (see gma select"
                + " --help)\n", duration.err());
        assertEquals("", table.out() + column.out() + continuous.out() + refused.out() + duration.out());
    }
}
