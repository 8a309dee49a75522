package io.gma.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.gma.tables.Column;
import io.gma.tables.ColumnType;
import io.gma.tables.Row;
import io.gma.tables.TableSchema;
import io.gma.wire.ErrorCode;
import io.gma.wire.ProtocolException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Every vector of client/src/test/resources/vectors/history.json (TABLE_HISTORY, docs/tables.md), both ways. The
 * vectors were computed from the document by a separate program, not by this encoder.
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class HistoryVectorsTest {
    private static final HexFormat HEX = HexFormat.of();
    private final JsonNode doc = load();
    private final TableSchema schema = schema(doc.get("schema"));

    private static JsonNode load() {
        try (InputStream in = HistoryVectorsTest.class.getResourceAsStream("/vectors/history.json")) {
            return new ObjectMapper().readTree(in);
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    private static TableSchema schema(JsonNode s) {
        List<Column> columns = new ArrayList<>();
        s.get("columns").forEach(c -> columns.add(new Column(c.get("name").asText(),
                ColumnType.valueOf(c.get("type").asText()))));
        List<String> key = new ArrayList<>();
        s.get("primaryKey").forEach(k -> key.add(k.asText()));
        return new TableSchema(s.get("name").asText(), columns, key, null, TableSchema.DEFAULT_LATEST_RETENTION,
                Duration.ZERO);
    }

    @Test
    void asksEncodeAndDecodeExactly() throws Exception {
        assertTrue(doc.get("asks").size() >= 2);
        for (JsonNode a : doc.get("asks")) {
            byte[] bytes = HEX.parseHex(a.get("hex").asText());
            HistoryWire.Ask expected = new HistoryWire.Ask(a.get("latest").asBoolean(), a.get("sinceMicros").asLong(),
                    a.get("maxRows").asLong(), a.get("sql").asText());
            assertEquals(a.get("hex").asText(), HEX.formatHex(HistoryWire.ask(expected.latest(),
                    expected.sinceMicros(), expected.maxRows(), expected.sql())), a.get("name").asText());
            assertEquals(expected, HistoryWire.readAsk(ByteBuffer.wrap(bytes)), a.get("name").asText());
        }
    }

    @Test
    void answersEncodeAndDecodeExactly() throws Exception {
        assertTrue(doc.get("answers").size() >= 2);
        for (JsonNode a : doc.get("answers")) {
            List<TableRow> rows = new ArrayList<>();
            for (JsonNode r : a.get("rows")) {
                JsonNode v = r.get("row");
                rows.add(new TableRow(r.get("producer").asText(), r.get("insertMicros").asLong(),
                        Row.of(v.get(0).isNull() ? null : v.get(0).asText(), v.get(1).isNull() ? null
                                : v.get(1).asDouble())));
            }
            TableHistory expected = new TableHistory(rows, a.get("completeSinceMicros").asLong());
            assertEquals(a.get("hex").asText(), HEX.formatHex(HistoryWire.answer(schema, expected,
                    Integer.MAX_VALUE)), a.get("name").asText());
            // read from one of its producers: that producer's rows are its own, the others' it archived
            String from = rows.isEmpty() ? "anyone@x" : rows.get(0).producer();
            TableHistory read = HistoryWire.readAnswer(ByteBuffer.wrap(HEX.parseHex(a.get("hex").asText())), schema,
                    from);
            assertEquals(expected.completeSinceMicros(), read.completeSinceMicros());
            assertEquals(rows.size(), read.rows().size());
            for (int i = 0; i < rows.size(); i++) {
                TableRow want = rows.get(i);
                TableRow got = read.rows().get(i);
                assertEquals(new TableRow(want.producer(), want.insertMicros(), want.row(),
                        want.producer().equals(from) ? null : from), got, a.get("name").asText() + " row " + i);
            }
        }
    }

    @Test
    void anAnswerOverTheLimitIsNotMade() {
        JsonNode a = doc.get("answers").get(0);
        int length = HEX.parseHex(a.get("hex").asText()).length;
        TableHistory h = new TableHistory(List.of(new TableRow("cpu@lyon", 1, Row.of("node-1", 0.75))), 0);
        assertEquals(null, HistoryWire.answer(schema, h, 20));
        assertTrue(HistoryWire.answer(schema, h, length) != null);
    }

    @Test
    void invalidAsksAreRefusedNamingWhy() {
        assertTrue(doc.get("invalidAsks").size() >= 5);
        for (JsonNode a : doc.get("invalidAsks")) {
            ProtocolException ex = assertThrows(ProtocolException.class, () -> HistoryWire.readAsk(ByteBuffer.wrap(
                    HEX.parseHex(a.get("hex").asText()))), a.get("name").asText());
            assertEquals(ErrorCode.MALFORMED, ex.code());
            assertTrue(ex.getMessage().contains(a.get("reason").asText()), a.get("name").asText() + ": "
                    + ex.getMessage());
        }
    }

    @Test
    void invalidAnswersAreRefusedNamingWhy() {
        assertTrue(doc.get("invalidAnswers").size() >= 7);
        for (JsonNode a : doc.get("invalidAnswers")) {
            ProtocolException ex = assertThrows(ProtocolException.class, () -> HistoryWire.readAnswer(
                    ByteBuffer.wrap(HEX.parseHex(a.get("hex").asText())), schema, "a@b"), a.get("name").asText());
            assertEquals(ErrorCode.MALFORMED, ex.code());
            assertTrue(ex.getMessage().contains(a.get("reason").asText()), a.get("name").asText() + ": "
                    + ex.getMessage());
        }
    }
}
