package io.gma.tables;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.gma.wire.ErrorCode;
import io.gma.wire.ProtocolException;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** Every vector of tables/src/test/resources/vectors/rows.json, both ways. */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class RowVectorsTest {
    private static final JsonNode DOC = load();
    private static final Map<String, TableSchema> SCHEMAS = schemas();

    record Valid(String name, TableSchema schema, Row row, byte[] bytes) {
        @Override
        public String toString() {
            return name;
        }
    }

    record Invalid(String name, TableSchema schema, byte[] bytes, ErrorCode code, String reason) {
        @Override
        public String toString() {
            return name;
        }
    }

    private static JsonNode load() {
        try (InputStream in = RowVectorsTest.class.getResourceAsStream("/vectors/rows.json")) {
            return new ObjectMapper().readTree(in);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static Map<String, TableSchema> schemas() {
        Map<String, TableSchema> out = new HashMap<>();
        DOC.get("schemas").fields().forEachRemaining(e -> {
            List<Column> columns = new ArrayList<>();
            e.getValue().get("columns").forEach(c -> columns.add(
                    new Column(c.get("name").asText(), ColumnType.valueOf(c.get("type").asText()))));
            List<String> key = new ArrayList<>();
            e.getValue().get("primaryKey").forEach(k -> key.add(k.asText()));
            out.put(e.getKey(), new TableSchema(e.getKey(), columns, key, null,
                    TableSchema.DEFAULT_LATEST_RETENTION, TableSchema.DEFAULT_HISTORY_RETENTION));
        });
        return out;
    }

    static Stream<Valid> valid() {
        List<Valid> out = new ArrayList<>();
        DOC.get("valid").forEach(v -> {
            TableSchema schema = SCHEMAS.get(v.get("schema").asText());
            out.add(new Valid(v.get("name").asText(), schema, row(schema, v.get("row")),
                    HexFormat.of().parseHex(v.get("hex").asText())));
        });
        return out.stream();
    }

    static Stream<Invalid> invalid() {
        List<Invalid> out = new ArrayList<>();
        DOC.get("invalid").forEach(v -> out.add(new Invalid(v.get("name").asText(),
                SCHEMAS.get(v.get("schema").asText()), HexFormat.of().parseHex(v.get("hex").asText()),
                ErrorCode.valueOf(v.get("code").asText()), v.get("reason").asText())));
        return out.stream();
    }

    static Row row(TableSchema schema, JsonNode values) {
        Row.Builder b = Row.builder(schema.columns().size());
        for (int i = 0; i < schema.columns().size(); i++) {
            JsonNode v = values.get(i);
            if (v.isNull()) {
                continue;
            }
            switch (schema.columns().get(i).type()) {
                case INTEGER:
                case TIMESTAMP:
                    b.setLong(i, v.isTextual() ? Long.parseLong(v.asText()) : v.longValue());
                    break;
                case DOUBLE:
                    b.setDouble(i, v.isTextual() ? Double.parseDouble(v.asText()) : v.doubleValue());
                    break;
                case BOOLEAN:
                    b.setBoolean(i, v.booleanValue());
                    break;
                default:
                    b.setString(i, v.textValue());
                    break;
            }
        }
        return b.build();
    }

    @Test
    void fileHasEveryKind() {
        assertEquals(10, valid().count());
        assertEquals(20, invalid().count());
    }

    @ParameterizedTest
    @MethodSource("valid")
    void encoderGivesTheExactBytes(Valid v) {
        assertEquals(HexFormat.of().formatHex(v.bytes()), HexFormat.of().formatHex(RowCodec.encode(v.schema(),
                v.row())));
    }

    @ParameterizedTest
    @MethodSource("valid")
    void decoderGivesTheExactRow(Valid v) throws ProtocolException {
        assertEquals(v.row(), RowCodec.decode(v.schema(), v.bytes()));
        ByteBuffer inside = ByteBuffer.allocate(v.bytes().length + 7).position(3);
        inside.put(v.bytes()).flip().position(3);
        assertEquals(v.row(), RowCodec.decode(v.schema(), inside));
        assertEquals(inside.limit(), inside.position());
        assertEquals(v.row(), RowCodec.decode(v.schema(), ByteBuffer.wrap(v.bytes()).asReadOnlyBuffer()));
    }

    @ParameterizedTest
    @MethodSource("invalid")
    void decoderRefusesWithTheCodeAndReason(Invalid v) {
        ProtocolException e = assertThrows(ProtocolException.class, () -> RowCodec.decode(v.schema(), v.bytes()));
        assertEquals(v.code(), e.code());
        assertTrue(e.getMessage().contains(v.reason()), e.getMessage());
    }
}
