package io.gma.examples.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.gma.client.Incoming;
import io.gma.client.MessageHandler;
import java.io.PrintWriter;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.LocalTime;
import java.time.temporal.ChronoUnit;
import java.util.Base64;

/**
 * How {@code tail} and {@code sub} print what arrives: a line per line of text, raw data, or one JSON object a
 * message. Whole messages at a time, so that the lines of two producers never interleave.
 */
final class EventPrinter implements MessageHandler {
    /** The three shapes. */
    enum Format {
        /** {@code 12:00:00.123 NAME: text}, one line per line of the message's text. */
        LINES,
        /**
         * The message's text as it is, with a line end after each that lacks one; bytes that are not UTF-8 as
         * {@code base64:} and their Base64.
         */
        RAW,
        /**
         * {@code {"time": ISO-8601, "from": NAME, "data": TEXT}}; {@code "base64"} instead of {@code "data"} for
         * bytes that are not UTF-8.
         */
        JSON
    }

    private static final ObjectMapper MAPPER = new ObjectMapper();

    private final PrintWriter out;
    private final Format format;

    EventPrinter(PrintWriter out, Format format) {
        this.out = out;
        this.format = format;
    }

    @Override
    public void onMessage(Incoming m) throws Exception {
        String text = utf8(m.data());
        String printed;
        if (format == Format.JSON) {
            ObjectNode line = MAPPER.createObjectNode().put("time", Instant.now().toString()).put("from", m.from());
            if (text != null) {
                line.put("data", text);
            } else {
                line.put("base64", Base64.getEncoder().encodeToString(m.data()));
            }
            printed = MAPPER.writeValueAsString(line) + "\n";
        } else if (format == Format.RAW) {
            printed = raw(m.data());
        } else {
            StringBuilder b = new StringBuilder();
            String prefix = LocalTime.now().truncatedTo(ChronoUnit.MILLIS) + " " + m.from() + ": ";
            String body = text != null ? text.strip() : "(" + m.data().length + " bytes, not UTF-8)";
            for (String line : body.split("\n", -1)) {
                b.append(prefix).append(line).append('\n');
            }
            printed = b.toString();
        }
        synchronized (out) {
            out.print(printed);
            out.flush();
        }
    }

    /** {@link Format#RAW}'s shape of {@code data}. */
    static String raw(byte[] data) {
        String text = utf8(data);
        String raw = text != null ? text : "base64:" + Base64.getEncoder().encodeToString(data);
        return raw.endsWith("\n") ? raw : raw + "\n";
    }

    /** The bytes as text, or null when they are not UTF-8. */
    static String utf8(byte[] data) {
        try {
            return StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT).decode(ByteBuffer.wrap(data)).toString();
        } catch (CharacterCodingException notText) {
            return null;
        }
    }
}
