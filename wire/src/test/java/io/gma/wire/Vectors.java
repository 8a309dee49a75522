package io.gma.wire;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;

/** The shared test vectors (protocol.md section 8), read from this module's copy of messages.json. */
final class Vectors {
    static final String RESOURCE = "/vectors/messages.json";
    static final JsonNode ROOT = load();

    private Vectors() {
    }

    record Valid(String name, Command command, int flags, String from, String to, long sequence, byte[] data,
            byte[] bytes) {
        Message message() {
            return Message.of(command, flags, from, to, sequence, data);
        }

        @Override
        public String toString() {
            return name;
        }
    }

    record Invalid(String name, byte[] bytes, ErrorCode error) {
        @Override
        public String toString() {
            return name;
        }
    }

    static List<Valid> valid() {
        List<Valid> out = new ArrayList<>();
        for (JsonNode v : ROOT.get("valid")) {
            out.add(new Valid(v.get("name").asText(), Command.of(v.get("command").asInt()), v.get("flags").asInt(),
                    v.get("from").asText(), v.get("to").asText(),
                    new BigInteger(v.get("sequence").asText()).longValue(), hex(v.get("dataHex").asText()),
                    hex(v.get("hex").asText())));
        }
        return out;
    }

    static List<Invalid> invalid() {
        List<Invalid> out = new ArrayList<>();
        for (JsonNode v : ROOT.get("invalid")) {
            out.add(new Invalid(v.get("name").asText(), hex(v.get("hex").asText()),
                    ErrorCode.valueOf(v.get("error").asText())));
        }
        return out;
    }

    static byte[] stream() {
        return hex(ROOT.get("stream").get("hex").asText());
    }

    static int streamCount() {
        return ROOT.get("stream").get("count").asInt();
    }

    static byte[] hex(String hex) {
        return HexFormat.of().parseHex(hex);
    }

    private static JsonNode load() {
        try (InputStream in = Vectors.class.getResourceAsStream(RESOURCE)) {
            if (in == null) {
                throw new IllegalStateException(RESOURCE + " is missing from the test resources");
            }
            return new ObjectMapper().readTree(in);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
