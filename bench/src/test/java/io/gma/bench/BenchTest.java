package io.gma.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gma.bench.compress.Payloads;
import io.gma.bench.registry.LookupBench;
import io.gma.bench.tables.BenchTable;
import io.gma.bench.tokens.TokenBench;
import io.gma.bench.tokens.VerifyCost;
import java.awt.image.BufferedImage;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import javax.imageio.ImageIO;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.condition.EnabledIfEnvironmentVariable;
import org.junit.jupiter.api.io.TempDir;

/**
 * The suite itself, not performance: a smoke run of every stage with a few rounds each writes every figure as a
 * CSV with its columns and series and as a readable PNG, and a summary with the headline and every figure. NATS
 * runs when nats-server is installed (.ci/run installs it, and sets GMA_REQUIRE_NATS so that it must), and is
 * otherwise reported as skipped, with the reason.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class BenchTest {
    private static final List<String> LATENCY = List.of("series", "bytes", "p50_us", "p90_us", "p99_us", "rounds");
    private static final List<String> WAN_STREAM = List.of("series", "delay_ms", "mib_per_s", "msgs_per_s",
            "link_share", "messages");
    private static final List<String> PERCENTILES = List.of("series", "one_over_1_minus_p", "us", "percentile",
            "round_trips");
    private static final List<String> TABLES_CONTINUOUS = List.of("series", "round", "rows_per_s", "delivered_per_s",
            "producer_bytes_per_row", "consumer_bytes_per_row", "rows", "delivered");
    private static final List<String> TABLES_LATEST = List.of("series", "producers", "p50_ms", "p99_ms", "first_ms",
            "max_ms", "queries", "rows_per_answer");

    @TempDir
    Path out;

    private final StringWriter err = new StringWriter();

    /** gma bench with these arguments and the smoke plan, silent; the exit status. */
    private int smoke(String... args) {
        Bench bench = new Bench();
        bench.plan = Plan.SMOKE;
        bench.progressTo = null;
        return Bench.run(args, bench, new PrintWriter(new StringWriter()), new PrintWriter(err, true));
    }

    @Test
    void smokeRunWritesEveryFigureAsCsvAndPngAndASummary() throws Exception {
        assertEquals(0, smoke("--out", out.toString()), "exit status; stderr: " + err);

        String summary = Files.readString(out.resolve("summary.md"));
        boolean nats = !summary.contains("- NATS: skipped");
        if (System.getenv("GMA_REQUIRE_NATS") != null) { // CI: .ci/run installed nats-server, so it must run
            assertTrue(nats, "NATS was skipped although GMA_REQUIRE_NATS is set:\n" + summary);
        }
        assertTrue(summary.contains("- JGroups: JGroups 5."), summary);

        Set<String> pingPong = new LinkedHashSet<>(List.of(Peers.RAW, Peers.GMA_BLOCKING, Peers.GMA_NONBLOCKING,
                Peers.JGROUPS));
        Set<String> streaming = new LinkedHashSet<>(List.of(Peers.RAW, Peers.GMA_DIRECT, Peers.JGROUPS));
        if (nats) {
            pingPong.add(Peers.NATS_REQUEST);
            streaming.add(Peers.NATS_PUBSUB);
        }
        Map<String, List<String>> columns = Map.ofEntries(
                Map.entry("fig4-pingpong-latency", LATENCY),
                Map.entry("fig5-pingpong-bandwidth", List.of("series", "bytes", "mib_per_s")),
                Map.entry("bench3-4-streaming", List.of("series", "bytes", "msgs_per_s", "mib_per_s", "messages")),
                Map.entry("fig6-fanin", List.of("series", "producers", "msgs_per_s", "mib_per_s", "max_queue_bytes",
                        "queue_bound_bytes")),
                Map.entry("fig7-sockets-vs-http", LATENCY),
                Map.entry("tunnel-streaming", List.of("series", "bytes", "mib_per_s", "msgs_per_s", "messages")),
                Map.entry("tokens-verify", List.of("series", "messages_per_check", "ns_per_message", "ns_per_check",
                        "ns_per_check_fastest_pass", "ns_per_check_slowest_pass", "checks")),
                Map.entry("tokens-roundtrip", LATENCY),
                Map.entry(SpoolStage.STREAM, List.of("series", "bytes", "msgs_per_s", "mib_per_s", "messages")),
                Map.entry(SpoolStage.ROUND_TRIP, LATENCY),
                Map.entry(TablesStage.CONTINUOUS, TABLES_CONTINUOUS),
                Map.entry(TablesStage.LATEST, TABLES_LATEST),
                Map.entry(WanStage.STREAM, WAN_STREAM),
                Map.entry(WanStage.STREAM_LARGE, WAN_STREAM),
                Map.entry(WanStage.ROUND_TRIP, List.of("series", "delay_ms", "p50_ms", "p90_ms", "p99_ms", "rounds")),
                Map.entry(LatencyStage.DIRECT, PERCENTILES),
                Map.entry(LatencyStage.CROSS, PERCENTILES));
        Set<String> spool = Set.of(SpoolStage.MEMORY, SpoolStage.BATCH, SpoolStage.ALWAYS);
        Set<String> wan = new LinkedHashSet<>(List.of(WanStage.RAW));
        for (int w : WanStage.IN_FLIGHT) {
            wan.add(WanStage.series(w));
        }
        Set<String> wanStream = new LinkedHashSet<>(List.of(WanStage.RAW_TCP));
        wanStream.addAll(wan);
        Map<String, Set<String>> series = Map.ofEntries(
                Map.entry("fig4-pingpong-latency", pingPong),
                Map.entry("fig5-pingpong-bandwidth", pingPong),
                Map.entry("bench3-4-streaming", streaming),
                Map.entry("fig6-fanin", Set.of("GMA, 8 KB", "raw sockets, 8 KB")),
                Map.entry("fig7-sockets-vs-http", Set.of(Peers.RAW, Peers.GMA_DIRECT, Peers.RAW_POST,
                        Peers.GMA_CROSS)),
                Map.entry("tunnel-streaming", Set.of(Peers.RAW_POST_BODIES, Peers.GMA_CROSS)),
                Map.entry("tokens-verify", Set.of(VerifyCost.HMAC_VERIFY, VerifyCost.HMAC_AUTHENTICATE,
                        VerifyCost.HMAC_BEARER, VerifyCost.SIGNED_VERIFY_UNCACHED,
                        VerifyCost.SIGNED_AUTHENTICATE_UNCACHED, VerifyCost.SIGNED_VERIFY_CACHED,
                        VerifyCost.SIGNED_AUTHENTICATE_CACHED, VerifyCost.SIGNED_BEARER)),
                Map.entry("tokens-roundtrip", Set.of(TokenBench.RAW_POST, TokenBench.PLAINTEXT, TokenBench.HMAC,
                        TokenBench.SIGNED)),
                Map.entry(SpoolStage.STREAM, spool),
                Map.entry(SpoolStage.ROUND_TRIP, spool),
                Map.entry(TablesStage.CONTINUOUS, Set.of(TablesStage.PLAIN, TablesStage.MATCH_ALL,
                        TablesStage.ONE_IN_TEN)),
                Map.entry(TablesStage.LATEST, Set.of(TablesStage.LATEST_SERIES)),
                Map.entry(WanStage.STREAM, wanStream),
                Map.entry(WanStage.STREAM_LARGE, wanStream),
                Map.entry(WanStage.ROUND_TRIP, wan),
                Map.entry(LatencyStage.DIRECT, new LinkedHashSet<>(LatencyStage.allSeries(Peers.RAW,
                        Peers.GMA_DIRECT))),
                Map.entry(LatencyStage.CROSS, new LinkedHashSet<>(LatencyStage.allSeries(Peers.RAW_POST,
                        Peers.GMA_CROSS))));
        for (var figure : columns.entrySet()) {
            String id = figure.getKey();
            List<String> lines = Files.readAllLines(out.resolve(id + ".csv"));
            assertEquals(String.join(",", figure.getValue()), lines.get(0), id + ".csv header");
            Set<String> seen = new LinkedHashSet<>();
            for (String row : lines.subList(1, lines.size())) {
                int close = row.lastIndexOf('"');
                seen.add(row.substring(1, close));
                String[] values = row.substring(close + 2).split(",");
                assertEquals(figure.getValue().size() - 1, values.length, id + ".csv row " + row);
                for (String v : values) {
                    assertTrue(Double.parseDouble(v) >= 0, id + ".csv row " + row);
                }
            }
            assertEquals(series.get(id), seen, id + ".csv series");
            BufferedImage png = ImageIO.read(out.resolve(id + ".png").toFile());
            assertEquals(960, png.getWidth(), id + ".png width");
            assertTrue(summary.contains("(" + id + ".png)") && summary.contains("(" + id + ".csv)"), id);
        }
        assertTrue(summary.contains("### Headline: GMA over each peer, per size"), summary);
        assertTrue(summary.contains("- Secure cross-domain round trip with Ed25519 gma2 tokens within 10% of HMAC gma1"
                + " tokens, 64 B: "), summary);
        assertTrue(summary.contains("| POST of a round trip: the sender's bearer and the receiver's authenticate"),
                summary);
        assertTrue(summary.contains("- Cross-domain streaming with the spool (fsync batch) at least 70% of in memory,"
                + " 1 KB: "), summary);
        assertTrue(summary.contains("- Cross-domain round trip with the spool (fsync batch) at most 1.5x of in"
                + " memory, 64 B: "), summary);
        assertTrue(summary.contains("- " + SpoolStage.BATCH + ", 1,024 B: "), summary);
        assertTrue(summary.contains("Command (from the repository root): `./gma bench --out "), summary);
        assertTrue(summary.contains("- Aeron's published loopback round trip (busy-spinning on dedicated cores) is p50"
                + " 4 µs, p99 8 µs. Back to back here, GMA direct is p50 "), summary);
        assertTrue(summary.contains("- Monitoring tables: Goal: a continuous query that matches every row delivers at"
                + " least 50% of plain streaming's rows/s: "), summary);
    }

    @Test
    void compressStageMeasuresEveryCodecAndBothModes() throws Exception {
        assertEquals(0, smoke("--only", "compress", "--out", out.toString()), "exit status; stderr: " + err);
        List<String> codecs = Files.readAllLines(out.resolve(CompressStage.CODECS + ".csv"));
        assertEquals("series,batch_kib,ratio,compress_mb_s,decompress_mb_s", codecs.get(0));
        assertEquals(1 + 3 * 5 * CompressStage.BATCH_KIB.length, codecs.size(), String.join("\n", codecs));
        int judged = 0;
        for (String row : codecs.subList(1, codecs.size())) {
            // the codec the PC servlets use, in memory, where the ratio does not depend on how batches formed
            if (row.contains(", zstd 1\"") && !row.contains("random")) {
                String[] v = row.substring(row.lastIndexOf('"') + 2).split(",");
                assertTrue(Double.parseDouble(v[1]) > 3, row); // the agent's rows and text, compressed 3x and more
                judged++;
            }
        }
        assertEquals(2 * CompressStage.BATCH_KIB.length, judged, String.join("\n", codecs));
        List<String> tunnel = Files.readAllLines(out.resolve(CompressStage.TUNNEL + ".csv"));
        assertEquals("series,payload,msgs_per_s,wire_bytes_per_msg,plain_bytes_per_msg,plain_over_wire,"
                + "compressed_batches,batches,compress_time_share", tunnel.get(0));
        for (String row : tunnel.subList(1, tunnel.size())) {
            String[] v = row.substring(row.lastIndexOf('"') + 2).split(",");
            double plainOverWire = Double.parseDouble(v[4]);
            double wirePerMessage = Double.parseDouble(v[2]);
            double plainPerMessage = Double.parseDouble(v[3]);
            long compressed = Long.parseLong(v[5]);
            if (row.contains("random") || row.contains("compression off")) {
                assertEquals(1.0, plainOverWire, 1e-9, row); // plain on the wire: random, and off
                assertEquals(0, compressed, row); // no batch compressed
            } else {
                // auto compresses the agent's rows and text once the peer said it reads zstd (on the answer to a
                // POST: a pair's first batches go plain): how many batches form, and go before that answer, depends
                // on timing, so a smoke run's few say only that what went compressed was smaller (the full run's
                // figure holds the goal of 3x on the wire, the codec figure above the ratio itself). A batch's
                // bytes and whether it went compressed are counted together, when it is posted
                if (compressed == 0) {
                    assertEquals(plainPerMessage, wirePerMessage, 1e-9, row);
                } else {
                    assertTrue(wirePerMessage < plainPerMessage, row);
                }
                if (row.startsWith("\"" + Payloads.Kind.TEXT.label + ", compression auto")) {
                    assertTrue(compressed > 0, row); // the pair's agent rows went first: the peer's zstd is known
                }
            }
        }
        assertEquals(1 + 3 * 3 + 2, tunnel.size(), String.join("\n", tunnel)); // and the rows across the link
    }

    @Test
    void archiveStageStoresEveryRowAndAnswersWholeHours() throws Exception {
        assertEquals(0, smoke("--only", "archive", "--out", out.toString()), "exit status; stderr: " + err);
        String summary = Files.readString(out.resolve("summary.md"));
        List<String> databases = summary.contains("- Archive: PostgreSQL: skipped") ? List.of("H2")
                : List.of("H2", "PostgreSQL");
        Set<String> ingestSeries = new LinkedHashSet<>();
        Set<String> historySeries = new LinkedHashSet<>();
        for (String db : databases) {
            ingestSeries.addAll(List.of(ArchiveStage.ARCHIVER + ", " + db, ArchiveStage.PLAIN + ", " + db));
            historySeries.addAll(List.of(ArchiveStage.ONE_HOST + ", " + db, ArchiveStage.ONE_KEY + ", " + db,
                    ArchiveStage.ALL_HOSTS + ", " + db));
        }
        assertEquals("series,round,rows_per_s,rows", Files.readAllLines(out.resolve(ArchiveStage.INGEST + ".csv"))
                .get(0));
        assertEquals("series,hosts,p50_ms,p99_ms,max_ms,queries,rows_per_answer", Files.readAllLines(
                out.resolve(ArchiveStage.HISTORY + ".csv")).get(0));
        Map<String, List<double[]>> ingest = points(out.resolve(ArchiveStage.INGEST + ".csv"));
        Map<String, List<double[]>> history = points(out.resolve(ArchiveStage.HISTORY + ".csv"));
        assertEquals(ingestSeries, ingest.keySet());
        assertEquals(historySeries, history.keySet());
        ArchiveStage.Sizes sizes = ArchiveStage.Sizes.of(Plan.SMOKE);
        for (List<double[]> rounds : ingest.values()) {
            assertEquals(sizes.rounds(), rounds.size());
            for (double[] round : rounds) {
                assertEquals(sizes.rows(), (int) round[2]);
                assertTrue(round[1] > 0);
            }
        }
        for (String db : databases) {
            double[] one = history.get(ArchiveStage.ONE_HOST + ", " + db).get(0);
            assertEquals(3600, one[5], 0.0, "one host's hour, each answer");
            assertEquals(sizes.queries(), (int) one[4]);
            assertEquals(3600, history.get(ArchiveStage.ONE_KEY + ", " + db).get(0)[5], 0.0);
            assertEquals(Math.min(3600.0 * sizes.hosts(), 100_001), history.get(ArchiveStage.ALL_HOSTS + ", "
                    + db).get(0)[5], 0.0, "every host's hour, up to one row over the bound");
        }
        for (String id : List.of(ArchiveStage.INGEST, ArchiveStage.HISTORY)) {
            assertEquals(960, ImageIO.read(out.resolve(id + ".png").toFile()).getWidth(), id + ".png width");
            assertTrue(summary.contains("(" + id + ".png)") && summary.contains("(" + id + ".csv)"), id);
        }
        assertTrue(summary.contains("- Archive: Goal: archive ingest at least 70% of a plain JDBC batch insert's"
                + " rows/s, H2: "), summary);
    }

    @Test
    void tablesStageSeesPushDownAndWholeLatestAnswers() throws Exception {
        assertEquals(0, smoke("--only", "tables", "--out", out.toString()), "exit status; stderr: " + err);

        // round, rows/s, delivered/s, producer bytes a row, consumer bytes a row, rows, delivered
        Map<String, List<double[]>> continuous = points(out.resolve(TablesStage.CONTINUOUS + ".csv"));
        int rows = Plan.SMOKE.tablesRows();
        double[] plain = continuous.get(TablesStage.PLAIN).get(0);
        double[] all = continuous.get(TablesStage.MATCH_ALL).get(0);
        double[] tenth = continuous.get(TablesStage.ONE_IN_TEN).get(0);
        assertEquals(Plan.SMOKE.tablesRounds(), continuous.get(TablesStage.MATCH_ALL).size());
        assertEquals(List.of((double) rows, (double) rows, (double) rows, (double) rows, rows / 10.0),
                List.of(plain[5], plain[6], all[6], tenth[5], tenth[6]), "rows sent and delivered");
        // the producer evaluates the WHERE: a tenth of the rows, so a tenth of the bytes, cross its link
        // (within 10%: in the smoke plan's few rows, batches of rows fill differently for the two queries; the full
        // plan's figure is the one the goal reads); a row carries at least 9 bytes more than its encoding (its
        // insert time and length in a TABLE_ROWS), and fewer than its encoding as a DATA message of its own,
        // whose header and names it shares with the rest of its batch
        assertTrue(Math.abs(all[3] / tenth[3] - 10) < 1.0, "bytes a row, all " + all[3] + ", 1 in 10 " + tenth[3]);
        assertTrue(all[3] >= BenchTable.ROW_BYTES + 9 && all[3] < plain[3], "bytes a row, all " + all[3]
                + ", plain " + plain[3]);

        // producers, p50, p99, first, max, queries, rows an answer
        List<double[]> latest = points(out.resolve(TablesStage.LATEST + ".csv")).get(TablesStage.LATEST_SERIES);
        assertEquals(Plan.SMOKE.tablesProducers().length, latest.size());
        for (int i = 0; i < latest.size(); i++) {
            double[] step = latest.get(i);
            assertEquals(Plan.SMOKE.tablesProducers()[i], (int) step[0]);
            assertEquals(Plan.SMOKE.tablesQueries(), (int) step[5]);
            assertEquals(step[0] * 4, step[6], "every row of every producer, step " + i);
            assertTrue(step[1] > 0 && step[2] >= step[1] && step[3] > 0, "times of step " + i);
        }
        String summary = Files.readString(out.resolve("summary.md"));
        assertTrue(summary.contains("- Monitoring tables: Goal: the 1-in-10 query moves 10x fewer bytes than the"
                + " match-all one on the producer's link (within 1%): "), summary);
        assertTrue(summary.contains("- Monitoring tables: Latest query with 6 producers of one table: p50 "), summary);
    }

    /** A figure's CSV: each series' points, in order. */
    private static Map<String, List<double[]>> points(Path csv) throws Exception {
        Map<String, List<double[]>> points = new LinkedHashMap<>();
        List<String> lines = Files.readAllLines(csv);
        for (String row : lines.subList(1, lines.size())) {
            int close = row.lastIndexOf('"');
            double[] values = Arrays.stream(row.substring(close + 2).split(","))
                    .mapToDouble(Double::parseDouble).toArray();
            points.computeIfAbsent(row.substring(1, close), k -> new ArrayList<>()).add(values);
        }
        return points;
    }

    @Test
    void aNatsServerThatDoesNotStartIsSkippedWithTheReason() throws Exception {
        assertEquals(0, smoke("--only", "pingpong", "--skip", "jgroups", "--nats-server", "/bin/false", "--out",
                out.toString()), "exit status; stderr: " + err);
        String summary = Files.readString(out.resolve("summary.md"));
        assertTrue(summary.contains("\n- NATS: skipped: nats-server exited with status 1: (no output)\n"), summary);
        assertTrue(summary.contains("\n- JGroups: skipped: --skip jgroups\n"), summary);
        assertTrue(Files.readAllLines(out.resolve("fig4-pingpong-latency.csv")).stream()
                .noneMatch(row -> row.startsWith("\"NATS") || row.startsWith("\"JGroups")));
    }

    @Test
    @EnabledIfEnvironmentVariable(named = "GMA_TEST_POSTGRES_URL", matches = "jdbc:postgresql:.+",
            disabledReason = "GMA_TEST_POSTGRES_URL is not set: the registry stage needs a PostgreSQL (.ci/run sets"
                    + " it after starting a throwaway one)")
    void registryStageLooksUpBesideAPlainServletOnPostgres() throws Exception {
        assertEquals(0, smoke("--only", "registry", "--out", out.toString()), "exit status; stderr: " + err);

        List<String> lines = Files.readAllLines(out.resolve(RegistryStage.FIGURE + ".csv"));
        assertEquals("series,endpoints,p50_us,p99_us,calls_per_s,calls", lines.get(0));
        Set<String> seen = new LinkedHashSet<>();
        for (String row : lines.subList(1, lines.size())) {
            int close = row.lastIndexOf('"');
            seen.add(row.substring(1, close));
            String[] values = row.substring(close + 2).split(",");
            assertEquals(Plan.SMOKE.registryEndpoints(), Integer.parseInt(values[0]), row);
            assertTrue(Double.parseDouble(values[1]) > 0 && Double.parseDouble(values[2]) >= Double.parseDouble(
                    values[1]), row);
            assertEquals(Plan.SMOKE.registryCalls(), Integer.parseInt(values[4]), row);
        }
        assertEquals(Set.of(LookupBench.REGISTRY, LookupBench.PLAIN, LookupBench.CLIENT_ONE, LookupBench.CLIENT_TWO),
                seen);
        String summary = Files.readString(out.resolve("summary.md"));
        assertTrue(summary.contains("- Registry look-up at most 1.5x a plain servlet's SELECT by JDBC, 1,000 endpoints"
                + " in PostgreSQL: "), summary);
    }

    @Test
    void refusesAnUnknownStageInOneLine() {
        assertEquals(2, smoke("--only", "pingpong,latncy"));
        assertEquals("gma bench: --only latncy is not a stage: pingpong, streaming, fanin, tunnel, spool, tokens,"
                + " tables, wan, latency, archive, compress, registry, scale (see gma bench --help)",
                err.toString().strip());
    }

    @Test
    void refusesAnUnknownPeer() {
        assertEquals(2, smoke("--skip", "kafka"));
        assertEquals("gma bench: --skip kafka is not a peer one can skip: nats, jgroups (see gma bench --help)",
                err.toString().strip());
    }
}
